"""Made-up messages for timeline property tests, and what two equal timelines must agree on.

Why a module: the tests that a timeline extended, cut and loaded, or built at once equals the
one appending each message builds all draw the same kind of messages and compare the same
searches; one definition keeps them drawing and checking alike.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import strategies as st

from awai_engine.timeline import MessageColumns, Timeline
from tests.test_recall_index import WORDS

Spec = tuple[int, list[str], int, int]  # thoughts, words of the text, speaker, thread (0: none)


def message_specs(min_size: int, max_size: int) -> st.SearchStrategy[list[Spec]]:
    """Messages of 1-3 thoughts and up to five words of :data:`WORDS`, by four speakers, some
    replies in one of two threads."""
    return st.lists(
        st.tuples(
            st.integers(1, 3),  # thoughts
            st.lists(st.sampled_from(WORDS), max_size=5),  # words of the text
            st.integers(0, 3),  # speaker
            st.integers(0, 2),  # 0: top level, else a reply in thread 1 or 2
        ),
        min_size=min_size,
        max_size=max_size,
    )


def columns_of(messages: list[Spec], start: int, stop: int) -> MessageColumns:
    """The messages at positions ``start``..``stop`` - 1 as columns, their first rows counted
    from the first one's. Every text has a word of its own: each run brings new terms."""
    positions = range(start, stop)
    spec = messages[start:stop]
    sizes = [thoughts for thoughts, *_ in spec]
    return MessageColumns(
        message_ids=[f"m{p}" for p in positions],
        speaker_ids=[f"s{speaker}" for _, _, speaker, _ in spec],
        speaker_names=[f"Speaker {speaker}" for _, _, speaker, _ in spec],
        ts=np.array(positions, dtype=np.float64),
        thread_roots=[
            f"m{thread - 1}" if thread and p >= thread else None
            for p, (*_, thread) in zip(positions, spec, strict=True)
        ],
        scopes=["channel" if p % 4 else "private-thread:t" for p in positions],
        texts=[
            " ".join([*words, f"w{p}"]) for p, (_, words, *_) in zip(positions, spec, strict=True)
        ],
        summaries=[f"summary {p}" for p in positions],
        addressees=[
            [f"Speaker {(speaker + 1) % 4}"] if p % 3 == 0 else []
            for p, (_, _, speaker, _) in zip(positions, spec, strict=True)
        ],
        thought_texts=[
            [f"t{p}.{i}" for i in range(n)] for p, n in zip(positions, sizes, strict=True)
        ],
        thought_indexes=[list(range(n)) for n in sizes],
        fallbacks=[p % 5 == 0 for p in positions],
        first_rows=np.cumsum([0, *sizes[:-1]]).astype(np.int64) if sizes else np.empty(0, np.int64),
    )


def first_row(messages: list[Spec], position: int) -> int:
    return sum(thoughts for thoughts, *_ in messages[:position])


def assert_same_searches(
    ours: Timeline, theirs: Timeline, queries: Sequence[str], ends: Sequence[int]
) -> None:
    """Both timelines find the same rows for a row's vector as the query at every fifth end,
    and the same messages for each query's words at each of ``ends``."""
    for end in range(1, ours.rows, 5):
        for found, expected in zip(
            ours.search(np.array([end]), end), theirs.search(np.array([end]), end), strict=True
        ):
            np.testing.assert_array_equal(found, expected)
    for query in queries:
        for end in ends:
            assert ours.lexicon.matches(query, end, 5) == theirs.lexicon.matches(query, end, 5)
