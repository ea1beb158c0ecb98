"""The far past answers a question asked again: the line that answered it comes along.

Synthetic conversations on the real engine (MiniLM, SQLite, Chroma), shaped as LoCoMo's: two
friends talk for a long while, and a newcomer asks about something said far back.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from awai_engine.association.far import unsearched_names
from awai_engine.association.query import Query
from awai_engine.association.settings import RecallRules
from awai_engine.values import Association
from awai_engine.visibility import EVERYTHING, Scopes
from bots.runtime import Runtime
from tests.factories import utterance

pytestmark = pytest.mark.slow

CHANNEL = "terminal:local:test"
PRIVATE = "private-thread:books"
CHAT = [
    "The weather was lovely at the beach this weekend.",
    "We finally repainted the kitchen, a pale green.",
    "My sister is visiting next month with her dog.",
    "I signed up for a pottery class on Thursdays.",
    "The new bakery on the corner sells great bread.",
    "Work has been busy, we ship a release on Friday.",
    "I went hiking up the hill behind the lake.",
    "The kids built a huge sandcastle yesterday.",
    "I'm learning to play the guitar, slowly.",
    "Our neighbours threw a party until midnight.",
]


def conversation(question: str) -> list:
    """Melanie asks Caroline for a book and Caroline answers, then 60 lines of other talk,
    then a newcomer asks ``question``."""
    lines = [
        utterance("m000", "What's a favourite book of yours, one you'd recommend?", "Melanie"),
        utterance("m001", "I loved Becoming Nicole by Amy Ellis Nutt, a true story.", "Caroline"),
    ]
    for k in range(60):
        speaker = "Melanie" if k % 2 else "Caroline"
        lines.append(utterance(f"m{k + 2:03d}", f"{CHAT[k % len(CHAT)]} ({k})", speaker))
    lines.append(utterance("m062", question, "reader"))
    return lines


def recalled(runtime: Runtime) -> dict[str, Association]:
    context = runtime.engine.context(CHANNEL, "m062", EVERYTHING)
    return {item.source.message_id: item for item in context.associations if item.reason != "reply"}


def test_a_question_asked_again_recalls_the_answer_given_far_back(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime()
    runtime.engine.ingest(conversation("What book would Caroline recommend?"))
    found = recalled(runtime)
    assert "m000" in found, found  # the question asked before, by meaning and words
    assert found["m001"].reason == "answer" and found["m001"].reach == "far"


def test_without_the_rule_the_answer_far_back_is_not_recalled(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(association={"rules": RecallRules(far_answers=False)})
    runtime.engine.ingest(conversation("What book would Caroline recommend?"))
    found = recalled(runtime)
    assert "m000" in found and "m001" not in found, found


def test_a_statement_takes_no_answer_along(make_runtime: Callable[..., Runtime]) -> None:
    runtime = make_runtime()
    runtime.engine.ingest(conversation("Caroline would recommend a favourite book to anyone."))
    assert all(item.reason != "answer" for item in recalled(runtime).values())


def test_the_word_search_leaves_out_the_names_the_message_names(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime()
    runtime.engine.ingest(conversation("What book would Caroline recommend?"))
    timeline = runtime.engine.view(CHANNEL, EVERYTHING).timeline
    position = timeline.position_of["m062"]
    settings = runtime.settings.association

    def query(rules: RecallRules) -> Query:
        return Query(
            timeline=timeline,
            position=position,
            cues=timeline.vectors[:0],
            rows=timeline.row_positions[:0],
            similarity=timeline.vectors[:0],
            relative=timeline.vectors[0, :0],
            settings=settings.model_copy(update={"rules": rules}),
        )

    assert unsearched_names(query(RecallRules())) == frozenset({"carolin"})
    assert unsearched_names(query(RecallRules(words_include_names=True))) == frozenset()


def test_a_question_its_own_speaker_went_on_from_takes_no_answer_along(
    make_runtime: Callable[..., Runtime],
) -> None:
    """The next line of the question's line is its answer only when someone else said it."""
    runtime = make_runtime()
    lines = conversation("What book would Caroline recommend?")
    lines[1] = utterance(
        "m001", "I loved Becoming Nicole by Amy Ellis Nutt, a true story.", "Melanie"
    )
    runtime.engine.ingest(lines)
    found = recalled(runtime)
    assert "m000" in found and all(item.reason != "answer" for item in found.values()), found


def test_an_answer_in_a_private_thread_comes_along_only_for_who_may_see_it(
    make_runtime: Callable[..., Runtime],
) -> None:
    """A question and its answer in a thread made private: a member is given the answer with
    the question; anyone else is given neither (the far line is read from the asker's view)."""
    runtime = make_runtime()
    question, answer = conversation("")[:2]
    lines = [
        utterance("m000", "Books thread, for the reading club.", "Melanie"),
        question.model_copy(update={"message_id": "t1", "thread_root": "m000", "ts": 0.3}),
        answer.model_copy(update={"message_id": "t2", "thread_root": "m000", "ts": 0.6}),
        *conversation("What book would Caroline recommend?")[2:],
    ]
    runtime.engine.ingest(lines)
    runtime.store.rescope_thread(CHANNEL, "m000", PRIVATE)

    def found(scopes: Scopes) -> dict[str, Association]:
        context = runtime.engine.context(CHANNEL, "m062", scopes)
        return {item.source.message_id: item for item in context.associations}

    member = found(Scopes.channel(PRIVATE))
    assert member["t2"].reason == "answer", member
    assert {"t1", "t2"}.isdisjoint(found(Scopes.channel()))
