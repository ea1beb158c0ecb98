"""Acknowledgements and reactions are talk, not a concern: they form no preconception."""

from __future__ import annotations

import numpy as np

from awai_engine.embedding import Embedder
from awai_engine.schemas.clustering import NOISE, cluster_labels, eligible
from awai_engine.schemas.substance import content_words
from awai_engine.settings import SchemaSettings
from tests.schema_topics import topic_sentences

# Said by one person across a long chat with "Mel": alike in form, about nothing of their own.
REACTIONS = [
    "ok",
    "thanks!",
    "Sounds good.",
    "Sounds great, Mel!",
    "Totally agree, Mel.",
    "I 100% agree, Mel.",
    "That's awesome, Mel!",
    "Thanks so much, Mel!",
    "Hey Mel, what's up?",
    "Wow, great pic!",
    "Wow, nice pic!",
    "That's so cool!",
    "Sounds great!",
    "Yeah, totally.",
    "了解です！",
    "ありがとうございます！",
]


def test_content_words_leave_out_reactions_fillers_and_the_name_addressed() -> None:
    assert content_words("Totally agree, Mel.") == frozenset()
    assert content_words("Hey Maria, great to see you!") == frozenset()
    assert content_words("Wow, nice pic!") == frozenset()
    assert content_words("了解です") == frozenset()
    assert content_words("The retry charged her card twice.") == {
        "retry",
        "charged",
        "card",
        "twice",
    }
    assert content_words("I talked to Maria about the adoption.") == {
        "talked",
        "maria",  # named, not addressed: who the thought is about
        "adoption",
    }
    assert content_words("決済のリトライが失敗する") == {"決済", "リトライ", "失敗"}
    assert content_words("田中さん、テストはまだですか") == {"テスト"}


def test_a_name_said_again_in_the_line_is_what_it_is_about_not_who_it_addresses() -> None:
    assert "stripe" in content_words("Stripe! The Stripe webhook failed twice.")
    assert "mel" not in content_words("Totally agree, Mel. The pottery class was great.")


def test_acknowledgements_and_reactions_form_no_preconception(embedder: Embedder) -> None:
    concern = [text for text, _ in topic_sentences(["battery"], per_topic=8)]
    texts = concern + REACTIONS * 2  # each said twice over the weeks, as people do
    vectors = embedder.encode(texts)
    settings = SchemaSettings()
    # By meaning alone the reactions are dense among themselves: a "schema" of talk.
    by_meaning = cluster_labels(vectors, settings)
    assert np.any(by_meaning[len(concern) :] != NOISE)
    assert not eligible(REACTIONS, settings).any()
    labels = cluster_labels(vectors, settings, texts)
    assert np.all(labels[len(concern) :] == NOISE)
    assert labels.max() == 0 and np.mean(labels[: len(concern)] == 0) >= 0.75
