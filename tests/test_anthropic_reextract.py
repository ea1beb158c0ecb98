"""Thoughts made offline while the model was down are marked, shown as such, and rewritten.

What it proves: while the fake Messages API fails, ingest stores each message's sentences marked
as fallbacks and a reading says so; once the model answers again, ``Engine.reextract``, the
scheduled job and ``awai reextract`` rewrite them in place, and the result is exactly what a store
that had the model all along holds (the invariant: re-extraction is an edit at the same
position, from the same earlier utterances).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from awai_engine.embedding import Embedder
from awai_engine.values import ReadingNote
from awai_engine.visibility import EVERYTHING
from bots.scheduler import SchedulerService, reextract_job
from bots.terminal.cli import main
from tests.factories import utterance
from tests.fake_anthropic import API_KEY, AnthropicRuntimes, Received, Reply, server_error
from tests.test_anthropic_extraction import whole_request_answer

CHANNEL = "terminal:local:test"
SAID = [
    utterance("m1", "Shall we cache the search results?"),
    utterance("m2", "Yes, five minutes. It is enough.", "bob"),
    utterance("m3", "Then ship it on Friday.", "cat"),
]


@pytest.fixture
def llm(tmp_path: Path, embedder: Embedder) -> Iterator[AnthropicRuntimes]:
    with AnthropicRuntimes(tmp_path, embedder) as runtimes:
        runtimes.fake.respond = whole_request_answer
        yield runtimes


def _down(request: Received) -> Reply:
    return server_error()


def _thoughts(runtime) -> dict[str, tuple[tuple[str, bool], ...]]:
    timeline = runtime.store.timeline(CHANNEL)
    return {
        m.message_id: tuple((t.text, t.fallback) for t in m.thoughts) for m in timeline.messages
    }


@pytest.mark.slow
def test_fallback_thoughts_are_marked_shown_and_rewritten_as_if_the_model_had_been_up(llm):
    always_up = llm("up")
    always_up.engine.ingest(SAID)
    llm.fake.respond = _down
    outage = llm("outage", max_retries=0)

    report = outage.engine.ingest(SAID)
    during = outage.engine.read(CHANNEL, "m3", EVERYTHING)
    llm.fake.respond = whole_request_answer
    redone = outage.engine.reextract(CHANNEL)
    again = outage.engine.reextract(CHANNEL)

    assert report.added == 3
    assert all(thought.fallback for thought in during.context.thoughts)
    assert ReadingNote(kind="fallback-thoughts") in during.notes
    assert (redone.pending, redone.rewritten) == (3, 3)
    assert again.pending == 0
    assert _thoughts(outage) == _thoughts(always_up)
    assert not any(fallback for thoughts in _thoughts(outage).values() for _, fallback in thoughts)
    assert [m.message_id for m in outage.store.timeline(CHANNEL).messages] == ["m1", "m2", "m3"]
    after = outage.engine.read(CHANNEL, "m3", EVERYTHING)
    assert ReadingNote(kind="fallback-thoughts") not in after.notes


def test_a_message_the_model_still_cannot_extract_stays_marked_for_the_next_run(llm):
    llm.fake.respond = _down
    runtime = llm(max_retries=0)
    runtime.engine.ingest(SAID)

    report = runtime.engine.reextract(CHANNEL)

    assert (report.pending, report.rewritten) == (3, 0)
    assert all(fallback for thoughts in _thoughts(runtime).values() for _, fallback in thoughts)


def test_the_scheduled_job_rewrites_fallbacks(llm):
    llm.fake.respond = _down
    runtime = llm(max_retries=0)
    runtime.engine.ingest(SAID)
    llm.fake.respond = whole_request_answer
    service = SchedulerService(runtime, name="reextract-test")
    try:
        service.start(paused=True)
        assert service.scheduler.get_job("awai-reextract", jobstore="awai") is not None
        reextract_job("reextract-test")
    finally:
        service.shutdown(wait=False)

    assert not any(fallback for thoughts in _thoughts(runtime).values() for _, fallback in thoughts)


def test_awai_reextract_rewrites_and_says_how_many(llm, tmp_path, monkeypatch, capsys):
    transcript = tmp_path / "team.jsonl"
    lines = [{"id": u.message_id, "speaker": u.speaker_name, "text": u.text} for u in SAID]
    transcript.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)  # the SDK's own variable turns the model on
    monkeypatch.setenv("AWAI_LLM__BASE_URL", llm.fake.base_url)
    monkeypatch.setenv("AWAI_LLM__MAX_RETRIES", "0")
    data = ["--data-dir", str(tmp_path / "cli")]
    llm.fake.respond = _down
    assert main([*data, "ingest", str(transcript), "--channel", "team"]) == 0
    llm.fake.respond = whole_request_answer
    capsys.readouterr()

    code = main([*data, "reextract"])

    assert code == 0
    assert "3 of 3 messages rewritten" in capsys.readouterr().out
    assert main([*data, "reextract"]) == 0
    assert "no thoughts made offline" in capsys.readouterr().out
