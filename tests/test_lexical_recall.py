"""Lexical recall: BM25 on the prefix, its invariant, Japanese terms, and the far slots."""

from __future__ import annotations

import math
import random
import string
import threading
from collections.abc import Callable

import numpy as np
import pytest
import Stemmer
from hypothesis import given, settings
from hypothesis import strategies as st

from awai_engine.association.settings import RecallRules
from awai_engine.lexical import BM25_B, BM25_K1, LexicalIndex, LexicalState, terms
from awai_engine.text_caches import forget_cached_texts
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from tests.factories import far_question, utterance

WORDS = ["deploy", "disk", "idempotency", "key", "420", "requests", "the", "a", "tanaka", "予算"]
CHANNEL = "terminal:local:test"


def index_of(texts: list[str]) -> LexicalIndex:
    index = LexicalIndex()
    for position, text in enumerate(texts):
        index.add(position, text)
    return index


texts_strategy = st.lists(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join), min_size=1, max_size=40
)


@settings(max_examples=200, deadline=None)
@given(texts=texts_strategy, data=st.data())
@pytest.mark.slow
def test_later_messages_never_change_the_scores_of_an_earlier_search(
    texts: list[str], data: st.DataObject
) -> None:
    end = data.draw(st.integers(0, len(texts)), label="searched before")
    query = data.draw(st.sampled_from(texts), label="query")
    assert index_of(texts).matches(query, end, 10) == index_of(texts[:end]).matches(query, end, 10)
    # The mean and spread a score is read against are prefix statistics too.
    whole, prefix = (
        index_of(texts).search(query, end, 10),
        index_of(texts[:end]).search(query, end, 10),
    )
    assert (whole.mean, whole.spread) == (prefix.mean, prefix.spread)


def plain_bm25(texts: list[str], query: str, end: int, limit: int) -> list[tuple[int, float]]:
    """BM25 of every message before ``end``, term by term (query terms in sorted order), fully
    sorted: best first, ties to the more recent message."""
    documents = [terms(text) for text in texts[:end]]
    if not documents:
        return []
    mean_length = max(sum(len(d) for d in documents) / end, 1e-9)
    scores = [0.0] * end
    held = [False] * end
    for term in sorted(set(terms(query))):
        frequency = sum(term in d for d in documents)
        if not frequency:
            continue
        idf = math.log(1.0 + (end - frequency + 0.5) / (frequency + 0.5))
        for position, document in enumerate(documents):
            count = float(document.count(term))
            if count:
                norm = BM25_K1 * (1.0 - BM25_B + BM25_B * len(document) / mean_length)
                scores[position] += idf * count * (BM25_K1 + 1.0) / (count + norm)
                held[position] = True
    ranked = sorted((p for p in range(end) if held[p]), key=lambda p: (-scores[p], -p))
    return [(p, scores[p]) for p in ranked[:limit]]


@settings(max_examples=200, deadline=None)
@given(texts=texts_strategy, data=st.data())
@pytest.mark.slow
def test_the_best_matches_are_plain_bm25_fully_sorted_to_the_last_bit(
    texts: list[str], data: st.DataObject
) -> None:
    # Few enough messages that no term is left out as too common (ALWAYS_SCORED).
    end = data.draw(st.integers(0, len(texts)), label="searched before")
    query = data.draw(st.sampled_from([*texts, "key key 420", "tanaka"]), label="query")
    limit = data.draw(st.integers(1, 12), label="limit")
    found = index_of(texts).search(query, end, limit)
    expected = plain_bm25(texts, query, end, limit)
    assert list(zip(found.positions.tolist(), found.scores.tolist(), strict=True)) == expected
    every = plain_bm25(texts, query, end, len(texts))
    assert found.mean == pytest.approx(sum(score for _, score in every) / max(end, 1))


def test_a_rare_word_outranks_a_common_one_and_says_what_is_shared() -> None:
    texts = [f"the deploy went fine {n}" for n in range(30)]
    texts.insert(7, "we need an idempotency key on the upload")
    best = index_of(texts).matches("which idempotency key did the deploy use", len(texts), 3)
    assert best[0].position == 7
    assert best[0].terms[0] == "idempot"  # the stem of "idempotency"
    assert 0 < best[0].share < 1
    assert best[0].score > best[1].score


def test_japanese_is_indexed_as_character_bigrams_next_to_english_words() -> None:
    assert terms("田中さんの予算 API") == ("田中", "中さ", "さん", "んの", "の予", "予算", "api")
    index = index_of(["予算の心配です", "天気がいいですね", "release is on friday"])
    assert index.matches("来月の予算は大丈夫？", 3, 3)[0].position == 0


def test_numbers_and_case_are_matched_as_words() -> None:
    assert terms("420 Requests per second, v1.2") == ("420", "request", "per", "second", "v1", "2")


def test_inflected_forms_of_a_word_find_each_other() -> None:
    texts = [f"the weather was fine {n}" for n in range(20)]
    texts.insert(5, "Melanie painted a sunrise over the lake last year")
    best = index_of(texts).matches("When did Melanie paint the sunrises?", len(texts), 1)
    assert best[0].position == 5
    assert {"melani", "paint", "sunris"} <= set(best[0].terms)


def test_a_far_message_sharing_rare_words_takes_a_far_slot_with_its_reason(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(association={"far_items": 1, "far_distance": 20})
    first = utterance("m000", "Our gateway caps uploads at 420 requests per second.", "bo")
    runtime.engine.ingest(far_question(first, "Is the 420 limit still there?"))
    recalled = {
        a.source.message_id: a
        for a in runtime.engine.context(CHANNEL, "m060", EVERYTHING).associations
    }
    item = recalled["m000"]
    assert item.reach == "far"
    assert item.distance == 59
    assert "420" in item.shared_words
    assert item.words_score is not None and item.words_score > 0
    assert item.reason in {"meaning", "words"}
    # The bar shown is the similarity its thought needed, given what its words added.
    assert item.similarity >= item.threshold


def test_without_far_slots_or_lexical_recall_nothing_is_recalled_by_words(
    make_runtime: Callable[..., Runtime],
) -> None:
    for name, association in (
        ("no-far-slots", {"far_items": 0}),
        ("no-lexical", {"far_items": 2, "far_distance": 5, "rules": RecallRules(lexical=False)}),
    ):
        runtime = make_runtime(name, association=association)
        runtime.engine.ingest(
            [utterance(f"m{i:03d}", f"Ticket {i} mentions the 420 limit.", ts=i) for i in range(12)]
        )
        associations = runtime.engine.context(CHANNEL, "m011", EVERYTHING).associations
        assert all(item.reason != "words" and not item.shared_words for item in associations)


@pytest.mark.slow
def test_index_terms_are_found_from_several_threads_at_once() -> None:
    """A Snowball stemmer keeps the word it stems on itself: shared by threads (readings and a
    re-clustering at once, with the stem cache emptied by a deletion), it failed with IndexError
    or gave another thread's stem."""
    rng = random.Random(3)
    suffixes = ("ational", "fulness", "ization", "iveness")
    own_words = [
        [
            "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 12))) + suffix
            for _ in range(4000)
        ]
        for suffix in suffixes
    ]  # each thread its own words, so none finds another's in the caches
    reference = Stemmer.Stemmer("english")
    expected = [[(reference.stemWord(word),) for word in words] for words in own_words]
    found: list[list[tuple[str, ...]]] = [[] for _ in suffixes]
    failures: list[BaseException] = []

    def stem(thread: int) -> None:
        try:
            found[thread] = [terms(word) for word in own_words[thread]]
        except BaseException as error:
            failures.append(error)

    forget_cached_texts()
    threads = [threading.Thread(target=stem, args=(n,)) for n in range(len(suffixes))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == [] and found == expected


def _state_equal(ours: LexicalIndex, theirs: LexicalIndex, start: int = 0) -> None:
    mine, other = ours.state(start), theirs.state(start)
    assert mine.terms == other.terms and mine.max_share == other.max_share
    for name in ("term_ids", "positions", "counts", "lengths"):
        assert getattr(mine, name).tolist() == getattr(other, name).tolist(), name


@settings(max_examples=100, deadline=None)
@given(texts=texts_strategy, data=st.data())
def test_an_index_restored_from_its_state_in_runs_searches_and_grows_as_the_one_appended(
    texts: list[str], data: st.DataObject
) -> None:
    """A file holds the index as runs of appended messages and is restored with each term's
    postings made on first use: whatever is looked up before, whatever is appended after, it
    finds, scores, grows and is saved as the index built message by message."""
    saved = data.draw(st.integers(0, len(texts)), label="messages in the file")
    cut = data.draw(st.integers(0, saved), label="where the file's second run starts")
    built = index_of(texts[:saved])
    first, second = built.state(0), built.state(cut)
    runs = LexicalState(
        max_share=first.max_share,
        terms=second.terms,
        term_ids=np.concatenate([first.term_ids[first.positions < cut], second.term_ids]),
        positions=np.concatenate([first.positions[first.positions < cut], second.positions]),
        counts=np.concatenate([first.counts[first.positions < cut], second.counts]),
        lengths=first.lengths,
    )
    restored = LexicalIndex.restored(runs)
    held = restored.array_bytes()
    for query in data.draw(st.lists(st.sampled_from(WORDS), max_size=3), label="looked up"):
        assert restored.matches(query, saved, 5) == built.matches(query, saved, 5)
    assert restored.array_bytes() == held  # counted alike, made or not
    for position in range(saved, len(texts)):
        built.add(position, texts[position])
        restored.add(position, texts[position])
    for start in (0, cut, saved, len(texts)):  # a whole file's state, and appends' states
        _state_equal(restored, built, start)
    for end in range(len(texts) + 1):
        for word in WORDS:
            assert restored.matches(word, end, 5) == built.matches(word, end, 5)


def test_a_restored_index_counts_its_postings_once_and_a_grown_term_as_its_own() -> None:
    """The read model's cache bounds its memory by this count: the restored arrays count
    once whether a term was made from them or not, and a term grown past its view adds its
    own arrays."""
    built = index_of(["alpha beta", "alpha gamma", "delta"])
    restored = LexicalIndex.restored(built.state(0))
    held = restored.array_bytes()
    assert held >= built.state(0).positions.nbytes + built.state(0).counts.nbytes
    restored.matches("alpha", 3, 5)  # made: a view of the restored arrays
    assert restored.array_bytes() == held
    restored.add(3, "alpha")  # grown: arrays of its own now, beside the restored ones
    assert restored.array_bytes() > held
