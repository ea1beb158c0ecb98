"""A Japanese transcript read with the English default model is told which setting reads it."""

from __future__ import annotations

from awai_engine.settings import EmbeddingSettings
from bots.terminal.language_fit import english_model_warning

JAPANESE = ["リリースは金曜日です。", "了解です。", "テストは終わりましたか？", "まだです。"]
ENGLISH = ["Release is on Friday.", "Got it.", "Is the test done?", "Not yet."]


def test_a_mostly_japanese_transcript_with_the_english_default_names_the_multilingual_backend() -> (
    None
):
    said = english_model_warning(EmbeddingSettings(), JAPANESE * 3 + ENGLISH)

    assert said is not None
    assert said.startswith("12 of 16 messages looked at are Japanese")
    assert "AWAI_EMBEDDING__BACKEND=multilingual-use" in said and "awai reembed" in said


def test_english_or_a_multilingual_model_or_a_chosen_model_is_not_warned_about() -> None:
    assert english_model_warning(EmbeddingSettings(), ENGLISH * 3 + JAPANESE) is None
    assert english_model_warning(EmbeddingSettings(), []) is None
    assert english_model_warning(EmbeddingSettings(backend="multilingual-use"), JAPANESE) is None
    chosen = EmbeddingSettings(model="/models/paraphrase-multilingual-MiniLM-L12-v2")
    assert english_model_warning(chosen, JAPANESE) is None


def test_a_long_transcript_is_sampled_so_the_look_costs_the_same_at_any_size() -> None:
    said = english_model_warning(EmbeddingSettings(), JAPANESE * 10_000)

    assert said is not None and said.startswith("200 of 200 messages looked at")
