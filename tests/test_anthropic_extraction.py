"""Thoughts and summaries at ingest, and schema summaries, through the fake Messages API.

What it proves: each message is extracted in a request of its own that holds it and the few
utterances of its line said before it, never a later one, so the stored thoughts of a message are
the same whether the transcript goes on after it or stops there, and whether it was ingested live
or in a backfill (the fake's answer depends on the whole request); the long shared prefix is
cached (the fake reports ``cache_read_input_tokens`` as the API does); a malformed answer is
repaired once, then that message is extracted offline and marked a fallback; once a call gets no
answer the rest go offline at once.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awai_engine.backends.anthropic.answers import EXTRACT_TASK, SCHEMA_SUMMARY_TASK
from awai_engine.backends.anthropic.client import LanguageModelError
from awai_engine.embedding import Embedder
from awai_engine.values import Utterance
from tests.factories import utterance
from tests.fake_anthropic import (
    AnthropicRuntimes,
    Received,
    Reply,
    canned_answer,
    server_error,
    structured,
)

CHANNEL = "terminal:local:test"


@pytest.fixture
def llm(tmp_path: Path, embedder: Embedder) -> Iterator[AnthropicRuntimes]:
    with AnthropicRuntimes(tmp_path, embedder) as runtimes:
        yield runtimes


def whole_request_answer(request: Received) -> Reply:
    """An extraction that depends on every byte of the request (context included): any later
    message that reached the request would change the stored thoughts."""
    if request.task != EXTRACT_TASK:
        return canned_answer(request)
    digest = hashlib.sha256(request.user_text().encode()).hexdigest()[:12]
    *_, block = canned_answer(request).body["content"]  # type: ignore[index]
    thoughts = [f"{thought} [{digest}]" for thought in json.loads(block["text"])["thoughts"]]
    return structured({"thoughts": thoughts, "summary": f"summary {digest}"})


def _stored(runtime, channel: str = CHANNEL) -> dict[str, tuple[tuple[str, ...], str]]:
    timeline = runtime.store.timeline(channel)
    return {m.message_id: (tuple(t.text for t in m.thoughts), m.summary) for m in timeline.messages}


@pytest.mark.slow
def test_each_message_is_extracted_alone_with_only_earlier_utterances_of_its_line(llm):
    runtime = llm(extraction_context=2)
    said = [
        utterance("m1", "Shall we cache the search results?"),
        utterance("m2", "Yes, five minutes.", "bob"),
        utterance("m3", "Thread start: the sync job.", "cat"),
        utterance("m4", "It drains the battery.", "bob", thread="m3"),
        utterance("m5", "Then ship it.", "ann"),
        utterance("m6", "Agreed, and later too.", "cat"),
    ]

    report = runtime.engine.ingest(said)

    assert report.added == 6 and report.notes == ()
    requests = {
        call.user_text().split("<extract ")[1].split("</extract>")[0]: call.user_text()
        for call in llm.fake.calls(EXTRACT_TASK)
    }
    assert len(requests) == 6
    by_text = {u.text: next(r for k, r in requests.items() if u.text in k) for u in said}
    then_ship = by_text["Then ship it."]
    # its line is the top level: the two top-level utterances just before it, not the reply
    assert "Yes, five minutes." in then_ship and "Thread start" in then_ship
    assert "Shall we cache" not in then_ship and "drains the battery" not in then_ship
    assert "later too" not in then_ship
    reply = by_text["It drains the battery."]
    assert "Thread start: the sync job." in reply and "Yes, five minutes." not in reply
    assert "<context>" not in by_text["Shall we cache the search results?"]


message_strategy = st.tuples(
    st.sampled_from(
        [
            "Can we move the release to Thursday?",
            "That breaks the QA plan.",
            "It drains the battery. Fix it first.",
            "ok",
            "バックアップの復元テストはいつですか？",
        ]
    ),
    st.sampled_from(["ann", "bo", "cy"]),
    st.booleans(),  # starts or joins a thread
)
examples = itertools.count()


def _build(spec: list[tuple[str, str, bool]], channel: str) -> list[Utterance]:
    root: str | None = None
    built = []
    for i, (text, speaker, threaded) in enumerate(spec):
        message_id = f"x{i:02d}"
        thread = root if threaded and root else None
        root = root or (message_id if threaded else None)
        built.append(
            utterance(
                message_id, text, speaker, ts=1_700_000_000 + 60 * i, thread=thread, channel=channel
            )
        )
    return built


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(spec=st.lists(message_strategy, min_size=2, max_size=8), data=st.data())
@pytest.mark.slow
def test_stored_thoughts_do_not_depend_on_later_messages_or_on_live_or_backfill(llm, spec, data):
    """Backfill of everything, backfill of a prefix, and live one-by-one ingest of the prefix
    store the same thoughts and summaries for every message of the prefix."""
    if not hasattr(llm, "stores"):
        llm.fake.respond = whole_request_answer
        llm.stores = (llm("full"), llm("prefix"), llm("live"))
    full, prefix, live = llm.stores
    cut = data.draw(st.integers(min_value=1, max_value=len(spec)))
    channel = f"terminal:local:c{next(examples)}"
    messages = _build(spec, channel)

    full.engine.ingest(messages)
    prefix.engine.ingest(messages[:cut])
    for message in messages[:cut]:
        live.engine.ingest([message])

    whole = _stored(full, channel)
    expected = {m.message_id: whole[m.message_id] for m in messages[:cut]}
    assert _stored(prefix, channel) == expected
    assert _stored(live, channel) == expected


@pytest.mark.slow
def test_the_shared_prefix_is_long_enough_to_cache_and_is_read_from_the_cache(llm):
    runtime = llm()
    backend = runtime.engine.backend
    assert backend.cached_prefix_tokens >= backend.cache_minimum

    runtime.engine.ingest([utterance("m1", "Cache it."), utterance("m2", "Five minutes.", "bob")])

    first, second = llm.fake.calls(EXTRACT_TASK)
    assert first.body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert first.body["output_config"] == second.body["output_config"]
    assert first.body["system"] == second.body["system"]
    usages = llm.fake.usages
    assert usages[0]["cache_creation_input_tokens"] > 0
    assert usages[1]["cache_read_input_tokens"] == usages[0]["cache_creation_input_tokens"]
    assert usages[1]["input_tokens"] < usages[1]["cache_read_input_tokens"]


def test_a_malformed_answer_is_repaired_once_then_extracted_offline_as_a_fallback(llm):
    runtime = llm()
    llm.fake.script(
        structured({"thoughts": [], "summary": "Nothing?"}),
        structured({"thoughts": ["Five minutes."], "summary": "5 min."}),
        structured({"thoughts": "one"}),
        structured({"summary": "still no thoughts"}),
    )

    report = runtime.engine.ingest(
        [utterance("m1", "Five minutes is enough."), utterance("m2", "Agreed. Ship it.", "bob")]
    )

    calls = llm.fake.calls(EXTRACT_TASK)
    assert len(calls) == 4
    said, asked = calls[1].body["messages"][1:]
    assert said["role"] == "assistant" and '"thoughts": []' in said["content"][0]["text"]
    assert "thoughts" in asked["content"]  # what was wrong is named
    assert _stored(runtime)["m1"] == (("Five minutes.",), "5 min.")
    assert _stored(runtime)["m2"][0] == ("Agreed.", "Ship it.")  # offline: its sentences
    (note,) = report.notes
    assert note.startswith("m2: Thoughts and summary were made offline")
    assert "malformed" in note


@pytest.mark.slow
def test_after_one_message_gets_no_answer_the_rest_are_extracted_offline_at_once(llm):
    runtime = llm(max_retries=1)
    llm.fake.script(server_error(), server_error())

    report = runtime.engine.ingest(
        [utterance(f"m{i}", f"Message {i}. It has two sentences.") for i in range(1, 6)]
    )

    assert llm.fake.posts == 2  # the first message and its one retry
    assert report.added == 5
    assert len(report.notes) == 5
    assert all("could not be reached" in note for note in report.notes)
    assert not any("HTTP" in note or "AWAI_" in note for note in report.notes)
    assert _stored(runtime)["m1"][0] == ("Message 1.", "It has two sentences.")


@pytest.mark.slow
def test_too_many_or_too_long_thoughts_are_held_to_the_limits(llm):
    runtime = llm(limits={"max_thoughts_per_message": 3, "max_thought_chars": 20})
    answer = {"thoughts": ["a" * 45, "b", "c", "d"], "summary": "Many thoughts."}
    llm.fake.script(structured(answer))

    report = runtime.engine.ingest([utterance("m1", "A long one. And more.")])

    message = runtime.store.timeline(CHANNEL).messages[0]
    assert [t.text for t in message.thoughts] == ["a" * 20, "a" * 20, "a" * 5 + " b c d"]
    assert any("the first 2 are kept" in note for note in report.notes)


@pytest.mark.slow
def test_a_message_too_long_for_one_answer_is_extracted_offline_without_a_call(llm):
    runtime = llm(extraction_max_tokens=256)
    report = runtime.engine.ingest([utterance("m1", "word " * 120)])

    assert llm.fake.posts == 0
    assert report.added == 1
    assert any("too long for one extraction answer" in note for note in report.notes)


def test_a_schema_summary_is_written_by_the_model_and_a_failure_raises_not_a_fallback(llm):
    runtime = llm(max_retries=0)
    backend = runtime.engine.backend
    thoughts = ["Caches cause stale data.", "Stale data confuses users."]

    written = backend.summarise_schema("Ann", thoughts)
    llm.fake.script(server_error())
    with pytest.raises(LanguageModelError):
        backend.summarise_schema("Ann", thoughts)  # the caller must not memoise a makeshift one

    assert written == "A canned preconception."
    (request, _) = llm.fake.calls(SCHEMA_SUMMARY_TASK)
    assert "Thoughts of Ann" in request.user_text()


def _batch_settings(**more: object) -> dict[str, object]:
    return {"batch_min_messages": 3, "batch_poll_seconds": 0.05, **more}


@pytest.mark.slow
def test_a_backfill_goes_through_one_message_batch_with_the_same_thoughts_as_live(llm):
    llm.fake.respond = whole_request_answer
    backfill = llm("backfill", **_batch_settings())
    live = llm("live", **_batch_settings())
    said = [
        utterance("m1", "Shall we cache the search results?"),
        utterance("m2", "Yes, five minutes.", "bob"),
        utterance("m3", "It drains the battery.", "cat", thread="m2"),
        utterance("m4", "Then ship it.", "ann"),
    ]

    report = backfill.engine.ingest(said)
    (batch,) = llm.fake.batches.values()
    batched_posts = llm.fake.posts
    for message in said:
        live.engine.ingest([message])

    assert report.added == 4 and report.notes == ()
    assert len(batch.requests) == 4
    assert batched_posts == 1 + 2 + 1  # create, two polls, results: no live message call
    assert all(params["output_config"]["format"] for _, params in batch.requests)
    assert _stored(backfill) == _stored(live)


def test_a_batch_running_when_the_process_stopped_is_resumed_not_paid_twice(llm):
    said = [utterance(f"m{i}", f"Point {i} about caching.") for i in range(1, 5)]
    llm.fake.hold_batches = True
    first = llm("data", **_batch_settings(batch_max_wait_seconds=0.2))

    waited = first.engine.prepare(said)  # the process stops before anything is stored
    first.close()
    llm.fake.hold_batches = False
    second = llm("data", **_batch_settings())
    resumed = second.engine.prepare(said)

    assert all(item.extraction.fallback for item in waited)
    assert len(llm.fake.batches) == 1
    assert not any(item.extraction.fallback for item in resumed)
    assert [t.text for t in resumed[0].extraction.thoughts] == ["Point 1 about caching."]


def test_a_request_the_batch_could_not_serve_is_a_fallback_and_a_malformed_one_is_redone(llm):
    runtime = llm(**_batch_settings())
    llm.fake.script(
        server_error(),  # m1: errored inside the batch
        structured({"thoughts": []}),  # m2: malformed, asked again live
    )
    said = [utterance(f"m{i}", f"Point {i}. Detail {i}.") for i in range(1, 4)]

    prepared = runtime.engine.prepare(said)

    assert [item.extraction.fallback for item in prepared] == [True, False, False]
    assert len(llm.fake.calls(EXTRACT_TASK)) == 4  # three in the batch, one live repeat
    assert "did not answer" in prepared[0].extraction.notes[0]
