"""Who reaches for the channel's past: naming someone not addressed opens the far past to loose
matches; a message that continues the room's talk gets only its speaker's own or close lines."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from awai_engine.association.reaching import asks_the_room, named_at_the_edge, names_the_absent
from awai_engine.association.settings import RecallRules
from awai_engine.timeline import Timeline
from awai_engine.values import Utterance
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from tests.factories import far_question, one_thought_timeline, utterance

CHANNEL = "terminal:local:test"
NAMES = ["Ann", "Bo", "Caroline", "Dee"]


def timeline_of(lines: list[tuple[str, str, tuple[str, ...]]]) -> Timeline:
    vectors = np.random.default_rng(5).normal(size=(len(lines), 8))
    return one_thought_timeline(lines, vectors)


def test_naming_someone_without_addressing_them_or_asking_the_room_reaches_back() -> None:
    timeline = timeline_of(
        [
            ("Caroline", "I went to the support group yesterday.", ()),
            ("Ann", "What did Caroline say about the group?", ()),  # about her words
            ("Bo", "Caroline: was it good?", ("Caroline",)),  # to her
            ("Dee", "lunch anyone?", ()),  # names no one
            ("Ann", "Bo, did Caroline like it?", ("Bo",)),  # to Bo, about Caroline
            ("Ann", "Did Zed go too?", ()),  # Zed never spoke
        ]
    )
    assert [names_the_absent(timeline, p) for p in range(6)] == [
        False,
        True,
        False,
        False,
        True,
        False,
    ]
    # A question to no one in particular is put to the room, the archive included.
    assert [asks_the_room(timeline, p) for p in range(6)] == [
        False,
        True,
        False,
        True,
        False,
        True,
    ]


def test_a_name_written_as_the_first_or_last_words_addresses_that_speaker() -> None:
    timeline = timeline_of(
        [
            ("tim", "I have a question about installing with a wireless keyboard.", ()),
            ("Mary Jo", "mine is wired", ()),
            ("Raf", "tim - you need a wired one to start the install.", ()),
            ("Raf", "!ask | tim", ()),
            ("Raf", "Mary Jo try the other port", ()),
            ("Raf", "what did tim try before?", ()),  # named inside: about him, not to him
            ("Raf", "zed - are you there?", ()),  # zed never spoke
            ("Raf", "Jo, is it the mouse?", ()),  # only part of a name
        ]
    )
    assert [named_at_the_edge(timeline, p) for p in range(8)] == [
        frozenset(),
        frozenset(),
        {"tim"},
        {"tim"},
        {"Mary Jo"},
        frozenset(),
        frozenset(),
        frozenset(),
    ]


def test_a_name_that_is_an_ordinary_word_addresses_only_when_punctuation_sets_it_off() -> None:
    timeline = timeline_of(
        [
            ("Will", "Can someone review the payments PR?", ()),
            ("May", "I'm on the migration.", ()),
            ("Ann", "Will do, thanks", ()),  # a sentence, not Will
            ("Ann", "May I ask what changed?", ()),
            ("Ann", "I doubt it will", ()),
            ("Ann", "will: the review is done", ()),  # set off: to Will
            ("Ann", "May, is the migration done?", ()),
            ("Ann", "looks good, thanks | will", ()),
            ("Ann", "Will", ()),  # the name alone
        ]
    )
    assert [named_at_the_edge(timeline, p) for p in range(9)] == [
        frozenset(),
        frozenset(),
        frozenset(),
        frozenset(),
        frozenset(),
        {"Will"},
        {"May"},
        {"Will"},
        {"Will"},
    ]
    nicks = timeline_of(
        [
            ("tim", "My keyboard is wireless.", ()),
            ("Raf", "tim you need a wired one", ()),
            ("Raf", "tim - you need a wired one", ()),
        ]
    )
    assert [named_at_the_edge(nicks, p) for p in (1, 2)] == [{"tim"}, {"tim"}]
    assert [named_at_the_edge(nicks, p, "always") for p in (1, 2)] == [frozenset(), {"tim"}], (
        "with 'always', every name must be set off"
    )


def test_a_name_that_addresses_at_the_edge_is_not_someone_named_in_their_absence() -> None:
    """'tim - you need a wired one' talks to tim, not about him: it does not reach for the far
    past as 'what did tim try?' does."""
    timeline = timeline_of(
        [
            ("tim", "My keyboard is wireless.", ()),
            ("Raf", "tim - you need a wired one", ()),
            ("Raf", "what did tim try before?", ()),
        ]
    )
    edge = [named_at_the_edge(timeline, p) for p in range(3)]
    assert [names_the_absent(timeline, p, edge[p]) for p in range(3)] == [False, False, True]


def test_a_question_mark_inside_a_link_asks_nothing_but_one_after_it_does() -> None:
    timeline = timeline_of(
        [
            ("Ann", "The results: https://example.com/search?q=flaky&page=2", ()),
            ("Bo", "Has anyone read https://example.com/postmortem?", ()),
            ("Dee", "Docs at http://wiki.local/page?id=7 (updated).", ()),
        ]
    )
    assert [asks_the_room(timeline, p) for p in range(3)] == [False, True, False]


@settings(max_examples=100, deadline=None)
@given(
    lines=st.lists(
        st.tuples(
            st.sampled_from(NAMES),
            st.lists(st.sampled_from(NAMES), max_size=2),  # named in the text
            st.lists(st.sampled_from(NAMES), max_size=1).map(tuple),  # addressed
        ),
        min_size=1,
        max_size=25,
    ),
    data=st.data(),
)
def test_later_lines_never_change_whether_a_message_reaches_back(
    lines: list[tuple[str, list[str], tuple[str, ...]]], data: st.DataObject
) -> None:
    said = [(speaker, " and ".join(["what did", *named]) + "?", to) for speaker, named, to in lines]
    position = data.draw(st.integers(0, len(said) - 1), label="message")
    whole, prefix = timeline_of(said), timeline_of(said[: position + 1])
    assert names_the_absent(whole, position) == names_the_absent(prefix, position)
    assert asks_the_room(whole, position) == asks_the_room(prefix, position)
    assert named_at_the_edge(whole, position) == named_at_the_edge(prefix, position)


def far_sources(runtime: Runtime, message_id: str) -> set[str]:
    context = runtime.engine.context(CHANNEL, message_id, EVERYTHING)
    return {a.source.message_id for a in context.associations if a.reach == "far"}


@pytest.mark.slow
def test_a_loose_far_match_is_recalled_only_for_a_message_that_reaches_back(
    make_runtime: Callable[..., Runtime],
) -> None:
    rules = RecallRules(far_unasked_similarity=0.95)
    strict = {"far_items": 2, "far_distance": 20, "rules": rules}
    first = utterance("m000", "I went to the LGBTQ support group yesterday.", "caroline")
    asked = make_runtime("asked", association=strict)
    asked.engine.ingest(far_question(first, "When did Caroline go to the support group?"))
    unasked = make_runtime("unasked", association=strict)
    unasked.engine.ingest(far_question(first, "The support group yesterday was moving."))
    room = make_runtime("room", association=strict)
    room.engine.ingest(far_question(first, "Did the support group meet yesterday?"))
    loose = make_runtime(
        "loose", association={**strict, "rules": RecallRules(far_unasked_similarity=None)}
    )
    loose.engine.ingest(far_question(first, "The support group yesterday was moving."))

    assert far_sources(asked, "m060") == {"m000"}  # names Caroline: the far past is open
    assert far_sources(room, "m060") == {"m000"}  # a question to the room: open too
    assert far_sources(loose, "m060") == {"m000"}  # the same line clears the far bar…
    assert far_sources(unasked, "m060") == set()  # …but is not close enough for a remark


def test_the_speakers_own_far_line_is_recalled_without_reaching_back(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(  # own_recent 0: not recalled as the speaker's previous line
        association={
            "far_items": 2,
            "far_distance": 20,
            "rules": RecallRules(far_unasked_similarity=0.95),
            "own_recent": 0,
        }
    )
    first: Utterance = utterance("m000", "I went to the LGBTQ support group yesterday.", "al")
    runtime.engine.ingest(far_question(first, "The support group yesterday was moving."))
    assert far_sources(runtime, "m060") == {"m000"}  # al returns to his own line
