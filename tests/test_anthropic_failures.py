"""Failures of the language model, injected by the fake Messages API over real HTTP.

What it proves: 429 (its retry-after honoured), 500 and 529 are retried; a hang past the timeout
is retried and then gives the labelled offline reading; a malformed answer gets exactly one repair
(the answer sent back with what is wrong, or a repeated request when there is nothing to send back),
then the offline reading with a note; an answer cut off at max_tokens is asked again with a larger
cap; a refused key fails at once; after repeated failures the process-wide breaker stops calling
for a while, then lets one trial through. Notes name no HTTP code or setting (the log does).
Engine.read never raises.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from awai_engine.backends.anthropic.answers import READING_TASK
from awai_engine.embedding import Embedder
from awai_engine.values import ReadingNote
from awai_engine.visibility import EVERYTHING
from bots.labels import labels_for
from bots.note_words import note_text
from bots.terminal.render import render_reading
from tests.factories import utterance
from tests.fake_anthropic import (
    AnthropicRuntimes,
    Reply,
    hang,
    message,
    overloaded,
    rate_limited,
    server_error,
    structured,
    text_answer,
)

CHANNEL = "terminal:local:test"


@pytest.fixture
def llm(tmp_path: Path, embedder: Embedder) -> Iterator[AnthropicRuntimes]:
    with AnthropicRuntimes(tmp_path, embedder) as runtimes:
        yield runtimes


def _ingested(llm: AnthropicRuntimes, **settings: object):
    runtime = llm(**settings)
    runtime.engine.ingest(
        [
            utterance("m1", "Should we cache the search results?"),
            utterance("m2", "Yes, a five minute cache is enough.", "bob"),
            utterance("m3", "Agreed, five minutes then."),
        ]
    )
    llm.fake.requests.clear()
    return runtime


@pytest.mark.slow
def test_429_is_retried_after_the_wait_the_api_asked_for(llm):
    runtime = _ingested(llm)
    llm.fake.script(rate_limited("1"))

    started = time.monotonic()
    reading = runtime.engine.read(CHANNEL, "m3", EVERYTHING)

    assert time.monotonic() - started >= 1.0
    assert len(llm.fake.calls(READING_TASK)) == 2
    assert reading.interpretation is not None
    assert reading.notes == ()


@pytest.mark.slow
def test_500_and_529_overloaded_are_retried_with_backoff(llm):
    runtime = _ingested(llm)
    llm.fake.script(server_error(), overloaded())

    reading = runtime.engine.read(CHANNEL, "m3", EVERYTHING)

    assert len(llm.fake.calls(READING_TASK)) == 3
    assert reading.interpretation is not None


def test_persistent_overload_gives_the_labelled_offline_reading(llm, caplog):
    runtime = _ingested(llm)
    llm.fake.script(overloaded(), overloaded(), overloaded())

    with caplog.at_level(logging.WARNING):
        reading = runtime.engine.read(CHANNEL, "m3", EVERYTHING)

    assert len(llm.fake.calls(READING_TASK)) == 3
    assert reading.offline is True
    assert reading.interpretation is None
    assert reading.backend.startswith("anthropic:")
    assert reading.notes == (ReadingNote(kind="model-failed", failure="busy"),)
    assert reading.offline_reason == "failed"
    assert "HTTP 529" in caplog.text and "3 attempt(s)" in caplog.text
    console = Console(record=True, width=160)
    render_reading(reading, console)
    shown = " ".join(console.export_text().split())
    assert "HTTP" not in shown and "AWAI_" not in shown
    assert "no language model is configured" not in shown
    assert "overloaded or rate-limited" in shown


@pytest.mark.slow
def test_a_hang_past_the_timeout_is_retried_then_the_offline_reading_says_why(llm, caplog):
    runtime = _ingested(llm, timeout_seconds=0.5, max_retries=1)
    llm.fake.script(hang(5), hang(5))

    with caplog.at_level(logging.WARNING):
        reading = runtime.engine.read(CHANNEL, "m3", EVERYTHING)

    assert len(llm.fake.calls(READING_TASK)) == 2
    assert reading.interpretation is None
    assert ReadingNote(kind="model-failed", failure="unreachable") in reading.notes
    assert "no answer within 0.5 s, 2 attempt(s)" in caplog.text


@pytest.mark.slow
def test_retries_stop_at_the_call_deadline_so_a_person_waits_seconds(llm, caplog):
    runtime = _ingested(llm, timeout_seconds=0.5, max_retries=5, call_deadline_seconds=1.2)
    llm.fake.script(*(hang(5) for _ in range(6)))

    with caplog.at_level(logging.WARNING):
        reading = runtime.engine.read(CHANNEL, "m3", EVERYTHING)

    assert len(llm.fake.calls(READING_TASK)) < 6
    assert reading.interpretation is None
    assert "AWAI_LLM__CALL_DEADLINE_SECONDS" in caplog.text


@pytest.mark.slow
def test_a_retry_after_longer_than_allowed_is_not_waited_for(llm, caplog):
    runtime = _ingested(llm, max_retry_wait_seconds=2)
    llm.fake.script(rate_limited("120"))

    with caplog.at_level(logging.WARNING):
        reading = runtime.engine.read(CHANNEL, "m3", EVERYTHING)

    assert len(llm.fake.calls(READING_TASK)) == 1
    assert reading.interpretation is None
    assert ReadingNote(kind="model-failed", failure="busy") in reading.notes
    assert "AWAI_LLM__MAX_RETRY_WAIT_SECONDS" in caplog.text


def test_an_answer_that_is_not_json_gets_one_repair_request(llm):
    runtime = _ingested(llm)
    llm.fake.script(structured('{"meaning": "cut off'))

    reading = runtime.engine.read(CHANNEL, "m3", EVERYTHING)

    first, repair = llm.fake.calls(READING_TASK)
    asked, said, problem = repair.body["messages"]
    assert asked == first.body["messages"][0]
    assert said == {
        "role": "assistant",
        "content": [{"type": "text", "text": '{"meaning": "cut off'}],
    }
    assert "not JSON" in problem["content"]
    assert reading.interpretation is not None
    assert reading.usage is not None
    assert reading.usage.input_tokens == sum(u["input_tokens"] for u in llm.fake.usages[-2:])


def test_a_schema_invalid_answer_twice_gives_the_offline_reading_with_a_note(llm, caplog):
    runtime = _ingested(llm)
    llm.fake.script(
        structured({"meaning": ""}),
        structured({"meaning": "ok", "links": [{"thought": "first"}]}),
    )

    with caplog.at_level(logging.WARNING):
        reading = runtime.engine.read(CHANNEL, "m3", EVERYTHING)

    _, repair = llm.fake.calls(READING_TASK)
    assistant, problem = repair.body["messages"][1:]
    assert assistant["content"][0]["text"] == '{"meaning": ""}'
    assert "meaning" in problem["content"] and "could not be used" in problem["content"]
    assert reading.interpretation is None
    assert ReadingNote(kind="model-malformed") in reading.notes
    assert "links.0" in caplog.text
    assert reading.usage is not None


@pytest.mark.parametrize(
    "bad_answer",
    [
        message([]),
        text_answer("I think it means they agree."),
        message([{"type": "text", "text": "I can't help with that."}], stop_reason="refusal"),
    ],
    ids=["empty answer", "prose instead of JSON", "refusal"],
)
def test_an_answer_without_the_json_is_repaired(llm, bad_answer: Reply):
    runtime = _ingested(llm)
    llm.fake.script(bad_answer)

    reading = runtime.engine.read(CHANNEL, "m3", EVERYTHING)

    _, repair = llm.fake.calls(READING_TASK)
    assert "could not be used" in repair.body["messages"][-1]["content"]
    assert reading.interpretation is not None


def test_a_body_that_is_not_json_gives_the_offline_reading(llm):
    runtime = _ingested(llm)
    llm.fake.script(Reply(body=b"<html>gateway</html>"))

    reading = runtime.engine.read(CHANNEL, "m3", EVERYTHING)

    assert reading.interpretation is None
    assert ReadingNote(kind="model-failed", failure="unreadable") in reading.notes


def test_a_refused_key_fails_at_once_and_ingest_and_read_still_work(llm, caplog):
    runtime = llm(api_key="sk-ant-wrong")

    with caplog.at_level(logging.WARNING):
        report = runtime.engine.ingest([utterance("m1", "Hello."), utterance("m2", "Hi there.")])
        reading = runtime.engine.read(CHANNEL, "m2", EVERYTHING)

    assert llm.fake.posts == 2  # one extraction, one reading: no retries
    assert report.added == 2
    assert all("refused AWAI's request" in note for note in report.notes)
    assert reading.interpretation is None
    assert "AWAI_LLM__API_KEY" in caplog.text
    worded = [note_text(note, labels_for("en")) for note in reading.notes]
    assert not any("AWAI_" in note or "HTTP" in note for note in (*report.notes, *worded))


def test_an_answer_cut_off_at_max_tokens_is_asked_again_with_a_larger_cap(llm):
    runtime = _ingested(llm, max_tokens=300)
    cut_off = message([{"type": "text", "text": '{"meaning": "A rea'}], stop_reason="max_tokens")
    llm.fake.script(cut_off)

    reading = runtime.engine.read(CHANNEL, "m3", EVERYTHING)

    first, second = llm.fake.calls(READING_TASK)
    assert first.body["max_tokens"] == 300
    assert second.body["max_tokens"] == 600
    assert second.body["messages"] == first.body["messages"]
    assert reading.interpretation is not None


@pytest.mark.slow
def test_the_breaker_opens_after_repeated_failures_and_a_trial_call_closes_it(llm):
    runtime = _ingested(llm, max_retries=0, breaker_failures=2, breaker_cooldown_seconds=1.0)
    llm.fake.script(server_error(), server_error())

    first = runtime.engine.read(CHANNEL, "m3", EVERYTHING)
    second = runtime.engine.read(CHANNEL, "m3", EVERYTHING)
    posts = llm.fake.posts
    paused = runtime.engine.read(CHANNEL, "m3", EVERYTHING)
    report = runtime.engine.ingest([utterance("m4", "One more thing.")])

    assert first.interpretation is None and second.interpretation is None
    assert llm.fake.posts == posts  # open: neither the reading nor the ingest called the API
    assert ReadingNote(kind="model-failed", failure="paused") in paused.notes
    assert any("not calling it for a while" in note for note in report.notes)
    time.sleep(1.1)
    trial = runtime.engine.read(CHANNEL, "m3", EVERYTHING)
    assert llm.fake.posts == posts + 1
    assert trial.interpretation is not None
