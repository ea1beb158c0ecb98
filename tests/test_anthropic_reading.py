"""The written reading through the real SDK against a local fake Messages API.

What it proves: the request carries the cached system prompt and the forced tool, holds only the
context (never a later message), asks for the message's language, stays within its token budget,
and the answer keeps only citations of what the model was shown; usage reaches ``--json``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from awai_engine.backends.anthropic.answers import READING_TOOL, tool_definition
from awai_engine.backends.anthropic.tokens import estimate_tokens
from awai_engine.embedding import Embedder
from awai_engine.settings import SettingsError
from awai_engine.visibility import EVERYTHING
from bots.runtime import language_backend
from bots.terminal.cli import main
from bots.terminal.render import reading_json, render_reading
from tests.factories import utterance
from tests.fake_anthropic import (
    API_KEY,
    AnthropicRuntimes,
    Received,
    Reply,
    canned_answer,
    tool_use,
)

LATER_MARKERS = ("xylophone", "quokka", "zeppelin")


@pytest.fixture
def llm(tmp_path: Path, embedder: Embedder) -> Iterator[AnthropicRuntimes]:
    with AnthropicRuntimes(tmp_path, embedder) as runtimes:
        yield runtimes


def _conversation(channel: str = "terminal:local:test") -> list:
    said = [
        "We should move the launch to Friday.",
        "Friday is risky, QA needs two more days.",
        "Can QA start the regression suite tonight?",
        "Yes, I can start it tonight if the build is ready.",
        "Then Friday works for the launch, I think.",
        f"Later someone mentions a {LATER_MARKERS[0]}.",
        f"And a {LATER_MARKERS[1]} appears afterwards.",
        f"Finally a {LATER_MARKERS[2]} flies over.",
    ]
    speakers = ["ann", "bob", "ann", "cat", "ann", "bob", "cat", "bob"]
    return [
        utterance(f"m{i}", text, speaker=speakers[i - 1], channel=channel)
        for i, text in enumerate(said, start=1)
    ]


def test_reading_request_has_cached_system_prompt_forced_tool_and_no_later_text(llm):
    runtime = llm()
    runtime.engine.ingest(_conversation())
    llm.fake.requests.clear()

    reading = runtime.engine.read("terminal:local:test", "m5", EVERYTHING)

    (request,) = llm.fake.calls(READING_TOOL)
    body = request.body
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "only before it" in body["system"][-1]["text"]
    assert body["tools"] == [tool_definition(READING_TOOL)]
    assert body["tool_choice"] == {"type": "tool", "name": READING_TOOL}
    prompt = request.prompt_text()
    assert "Then Friday works for the launch" in prompt
    assert not any(marker in prompt for marker in LATER_MARKERS)
    assert reading.offline is False
    assert reading.interpretation is not None
    assert reading.interpretation.meaning == "A canned reading."
    assert reading.backend == f"anthropic:{runtime.settings.llm.model}"


def test_usage_is_recorded_and_shown_in_json_output(llm):
    def respond(request: Received) -> Reply:
        if request.tool != READING_TOOL:
            return canned_answer(request)
        return tool_use(
            READING_TOOL,
            {"meaning": "Agreed."},
            input_tokens=812,
            output_tokens=64,
            cache_read_input_tokens=1100,
        )

    llm.fake.respond = respond
    runtime = llm()
    runtime.engine.ingest(_conversation())

    reading = runtime.engine.read("terminal:local:test", "m4", EVERYTHING)

    dumped = json.loads(reading_json(reading))
    assert dumped["usage"] == {
        "input_tokens": 812,
        "output_tokens": 64,
        "cache_read_input_tokens": 1100,
        "cache_creation_input_tokens": 0,
    }


def test_awai_read_json_prints_the_written_reading_with_usage(llm, tmp_path, monkeypatch, capsys):
    transcript = tmp_path / "team.jsonl"
    lines = [
        {"id": "a1", "speaker": "ann", "text": "Shall we ship on Friday?"},
        {"id": "a2", "speaker": "bob", "text": "Friday works if QA signs off."},
        {"id": "a3", "speaker": "ann", "text": "Great, Friday it is."},
    ]
    transcript.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    monkeypatch.setenv("AWAI_LLM__API_KEY", API_KEY)
    monkeypatch.setenv("AWAI_LLM__BASE_URL", llm.fake.base_url)

    code = main(["--data-dir", str(tmp_path / "cli"), "read", str(transcript), "--message", "a3"])
    assert code == 0
    capsys.readouterr()
    code = main(
        ["--data-dir", str(tmp_path / "cli"), "read", str(transcript), "--message", "a3", "--json"]
    )

    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["interpretation"]["meaning"] == "A canned reading."
    assert printed["usage"]["input_tokens"] == 100
    assert printed["offline"] is False


def test_japanese_message_gets_a_request_for_japanese_and_a_japanese_reading(llm):
    def respond(request: Received) -> Reply:
        if request.tool == READING_TOOL:
            return tool_use(READING_TOOL, {"meaning": "移行日程への同意です。"})
        return canned_answer(request)

    llm.fake.respond = respond
    runtime = llm()
    channel = "terminal:local:ja"
    runtime.engine.ingest(
        [
            utterance("j1", "切り替えは四月十八日の深夜の予定です。", channel=channel),
            utterance("j2", "バックアップの復元テストはいつやりましたか？", "bob", channel=channel),
            utterance("j3", "来週、検証環境で復元テストをやります。", channel=channel),
        ]
    )

    reading = runtime.engine.read(channel, "j3", EVERYTHING)

    request = llm.fake.calls(READING_TOOL)[-1]
    assert "Write your answer in Japanese" in request.user_text()
    assert "日本語で書いてください" in request.user_text()
    assert reading.language == "ja"
    assert reading.interpretation is not None
    assert reading.interpretation.language == "ja"
    assert reading.interpretation.meaning == "移行日程への同意です。"
    assert 'lang="ja"' in llm.fake.calls("extract_thoughts")[0].user_text()


def test_citations_outside_the_given_context_are_dropped_logged_and_never_shown(llm, caplog):
    answer = {
        "meaning": "Ann concludes the launch can stay on Friday.",
        "links": [
            {"thought": 0, "relation": "builds-on", "message_id": "m4", "explanation": "QA ok"},
            {"thought": 0, "relation": "answers", "message_id": "m7", "explanation": "later"},
            {"thought": 0, "relation": "agrees", "message_id": "m999", "explanation": "unknown"},
            {"thought": 7, "relation": "agrees", "message_id": "m4", "explanation": "no thought"},
        ],
        "schema_bearings": [
            {"schema_id": "s-none", "stance": "supports", "explanation": "not recalled"}
        ],
    }
    runtime = llm()
    runtime.engine.ingest(_conversation())
    llm.fake.script(tool_use(READING_TOOL, answer))

    with caplog.at_level(logging.WARNING):
        reading = runtime.engine.read("terminal:local:test", "m5", EVERYTHING)

    assert reading.interpretation is not None
    assert [(link.message_id, link.relation) for link in reading.interpretation.links] == [
        ("m4", "builds-on")
    ]
    assert reading.interpretation.schema_bearings == ()
    assert any("4 connections" in note for note in reading.notes)
    shown = reading_json(reading)
    assert "m7" not in shown and "m999" not in shown and "s-none" not in shown
    assert "'m7'" in caplog.text and "'m999'" in caplog.text
    console = Console(record=True, width=120)
    render_reading(reading, console)
    assert "m999" not in console.export_text()


def test_an_over_budget_context_is_trimmed_before_sending_and_the_note_says_what(llm):
    runtime = llm(reading_token_budget=1700)
    channel = "terminal:local:long"
    filler = "The rollout plan covers " + ", ".join(f"region {n} and its shard" for n in range(150))
    history = [
        utterance(
            f"r{i}", f"Rollout note {i}: the shard migration needs care.", "bob", channel=channel
        )
        for i in range(1, 12)
    ]
    runtime.engine.ingest([*history, utterance("r12", filler, channel=channel)])
    llm.fake.requests.clear()

    reading = runtime.engine.read(channel, "r12", EVERYTHING)

    (request,) = llm.fake.calls(READING_TOOL)
    backend = runtime.engine.backend
    assert estimate_tokens(request.user_text()) <= backend.allowance(READING_TOOL)
    assert backend.prefix_tokens[READING_TOOL] + estimate_tokens(request.user_text()) <= 1700
    assert filler not in request.user_text()
    assert any("token budget" in note and "shortened" in note for note in reading.notes)
    assert reading.interpretation is not None


def test_a_budget_too_small_for_the_stable_prompt_is_refused_at_start_up(llm):
    with pytest.raises(SettingsError, match="AWAI_LLM__READING_TOKEN_BUDGET"):
        language_backend(llm.settings(reading_token_budget=1000))


def test_a_reading_costs_its_stance_call_too(llm):
    worry = [
        "Screen readers cannot reach the snooze button.",
        "The snooze button has no accessible label for screen readers.",
        "VoiceOver users cannot snooze a reminder at all.",
        "TalkBack skips the snooze control entirely.",
    ]
    filler = ["Lunch at noon?", "The build is green.", "Pricing review on Monday.", "Coffee?"]
    said = [text for pair in zip(worry, filler, strict=True) for text in pair]
    said.append("Screen reader users still cannot snooze, we must fix it before launch.")
    speakers = ["ann", "bob"] * 4 + ["ann"]

    def respond(request: Received) -> Reply:
        if request.tool == READING_TOOL:
            return tool_use(READING_TOOL, {"meaning": "Ann's worry again."}, input_tokens=812)
        if request.tool == "judge_stances":
            canned = canned_answer(request).body
            assert isinstance(canned, dict)
            return tool_use("judge_stances", canned["content"][0]["input"], input_tokens=300)
        return canned_answer(request)

    llm.fake.respond = respond
    runtime = llm()
    runtime.engine.ingest(
        utterance(f"w{i}", text, speaker=speakers[i], channel="terminal:local:worry")
        for i, text in enumerate(said)
    )

    reading = runtime.engine.read("terminal:local:worry", "w8", EVERYTHING)

    assert reading.context.schemas, "the speaker's repeated worry is recalled as a schema"
    assert all(schema.stance == "unrelated" for schema in reading.context.schemas)
    assert llm.fake.calls("judge_stances")
    assert reading.usage is not None
    assert reading.usage.input_tokens == 812 + 300
