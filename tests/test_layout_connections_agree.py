"""A listed connection's words agree with the headline: only the headline says what a message
replies to or answers, and a speaker's own earlier message reads as theirs ("Continues Aiko's
own earlier message", not "Continues Aiko"). Checked on the layout and on Slack's blocks,
Discord's embed and the terminal's panel made from it, in English and Japanese.
"""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from awai_engine.values import (
    Connection,
    Flow,
    Headline,
    MessageRef,
    Reading,
    ReadingContext,
    Thought,
)
from bots.discord.embeds import reading_embed
from bots.layout import layout, plain_text
from bots.slack.blocks import reading_message
from bots.terminal.render import render_reading
from tests.factories import message_ref

TEXT = {"en": "Did the restore test ever run?", "ja": "復元テストは結局やりましたか?"}


def _connection(ref: MessageRef, relation: str, origin: str, distance: int) -> Connection:
    return Connection(
        message=ref,
        relation=relation,  # type: ignore[arg-type]
        decided_by="cues",
        origin=origin,  # type: ignore[arg-type]
        distance=distance,
        earlier_text=TEXT["en"],
    )


def _reading(language: str, headline: bool) -> Reading:
    returned = _connection(message_ref("m2", "Suzuki", 2), "returns-to", "meaning", 31)
    connections = (
        _connection(message_ref("m33", "Suzuki", 33), "replies-to", "flow", 0),
        _connection(message_ref("m30", "Ben", 30), "answers", "reply", 3),
        _connection(message_ref("m29", "Aiko", 29), "continues", "own", 4),
        _connection(message_ref("m20", "Dev", 20), "disagrees", "meaning", 13),
        returned,
    )
    context = ReadingContext(
        channel="discord:1:2",
        message=message_ref("m34", "Aiko", 34),
        text=TEXT[language],
        thoughts=(Thought(index=0, text=TEXT[language]),),
        flow=Flow(line="top-level"),
    )
    return Reading(
        context=context,
        backend="offline",
        offline=True,
        language=language,
        headline=Headline(connection=returned if headline else None),
        connections=connections,
    )


def _connections_shown(reading: Reading, surface: str) -> str:
    section = layout(reading).section("connections")
    assert section is not None
    if surface == "layout":
        return "\n".join(plain_text(line) for line in section.lines)
    if surface == "slack":
        slack = reading_message(reading, lambda message_id, _: f"https://s.test/{message_id}")
        return json.dumps(slack.blocks, ensure_ascii=False)
    if surface == "discord":
        return json.dumps(reading_embed(reading).to_dict(), ensure_ascii=False)
    console = Console(record=True, width=400, color_system=None)
    render_reading(reading, console)
    return console.export_text()


SURFACES = ["layout", "slack", "discord", "terminal"]


@pytest.mark.parametrize("headline", [True, False], ids=["headline", "no-clear-target"])
@pytest.mark.parametrize("surface", SURFACES)
def test_only_the_headline_says_what_a_message_replies_to(surface: str, headline: bool) -> None:
    shown = _connections_shown(_reading("en", headline), surface)

    assert "Replies to" not in shown
    assert "Answers" not in shown
    assert "Disagrees with" in shown, "a stance the headline does not contradict stays"


@pytest.mark.parametrize("surface", SURFACES)
def test_the_speakers_own_earlier_message_reads_as_theirs(surface: str) -> None:
    shown = _connections_shown(_reading("en", True), surface)

    assert "Continues" in shown and "Aiko’s own earlier message" in shown
    assert "the speaker's previous message" not in shown, "said once, not twice"


@pytest.mark.parametrize("surface", SURFACES)
def test_japanese_connections_claim_no_reply_the_headline_does_not_make(surface: str) -> None:
    shown = _connections_shown(_reading("ja", True), surface)

    candidates, offline_source = shown.count("返信先の候補"), shown.count("返信しているか")
    assert shown.count("返信") == candidates + offline_source, "no 「返信」 verb on a listed line"
    assert "回答" not in shown
    assert "続き" in shown and "Aiko自身の前の発言" in shown
    assert "反対" in shown
