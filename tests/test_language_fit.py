"""A Japanese transcript read with the English default model is told which setting reads it."""

from __future__ import annotations

import pytest

from awai_engine.settings import EmbeddingSettings
from bots.terminal.language_fit import SAMPLE, TextSample, english_model_warning
from tests.factories import utterance

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


@pytest.mark.parametrize("count", [0, 1, 399, 400, 401, 1_000, 25_013])
def test_texts_taken_as_a_transcript_streams_are_an_even_bounded_spread_of_it(count: int) -> None:
    """A transcript is stored as it is read: the texts looked at are kept on the way, evenly
    spaced over everything seen and never more than twice the sample."""
    texts = [f"message {n}" for n in range(count)]
    utterances = [utterance(f"m{n}", text) for n, text in enumerate(texts)]
    sample = TextSample()
    assert list(sample.taking(utterances)) == utterances  # passed on as they are
    assert len(sample.texts) <= 2 * SAMPLE
    steps = [2**power for power in range(20) if texts[:: 2**power] == sample.texts]
    assert steps, "not every step-th text of the stream"
    assert len(sample.texts) >= min(count, SAMPLE)  # never fewer than the check looks at
