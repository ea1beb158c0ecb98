"""Readings as Block Kit: Slack's limits hold however long the reading, and text stays mrkdwn."""

from __future__ import annotations

import json
import re

import pytest

from awai_engine.values import Interpretation, Reading, ReadingNote, ThoughtLink
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from bots.slack.blocks import (
    MAX_BLOCKS,
    MAX_FALLBACK_CHARS,
    MAX_HEADER_CHARS,
    MAX_SECTION_CHARS,
    reading_message,
)
from bots.slack.mrkdwn import markdown_to_mrkdwn, split
from tests.factories import utterance

CHANNEL = "slack:T0AWAI:C1GENERAL"


def _permalink(message_id: str, thread_root: str | None) -> str:
    return f"https://awai-test.slack.com/archives/C1GENERAL/p{message_id.replace('.', '')}"


def _very_long_reading(runtime: Runtime) -> Reading:
    sentence = "The release <must> wait & the team agrees on *scope* before Friday {n}. "
    history = [
        utterance(
            f"1700000{i:03d}.000100", sentence.format(n=i) * 3, speaker="ann", channel=CHANNEL
        )
        for i in range(1, 8)
    ]
    huge = "".join(sentence.format(n=i) for i in range(30))
    history.append(utterance("1700000999.000100", huge, speaker="ben", channel=CHANNEL))
    runtime.engine.ingest(history)
    reading = runtime.engine.read(CHANNEL, "1700000999.000100", EVERYTHING)
    cited = [item.message.message_id for item in reading.context.flow.earlier]
    links = tuple(
        ThoughtLink(
            thought_index=i % 24,
            relation="builds-on",
            message_id=cited[i % len(cited)],
            explanation="It returns to the **scope** question <again> & again. " * 20,
        )
        for i in range(60)
    )
    interpretation = Interpretation(
        meaning="A **long** [meaning](https://example.com). " * 500, links=links
    )
    notes = tuple(ReadingNote(kind="links-dropped", count=i + 2) for i in range(80))
    return reading.model_copy(
        update={
            "interpretation": interpretation,
            "offline": False,
            "offline_reason": None,
            "notes": notes,
        }
    )


@pytest.mark.slow
def test_a_very_long_reading_stays_within_every_slack_limit(runtime: Runtime):
    reading = _very_long_reading(runtime)

    message = reading_message(reading, _permalink)

    assert len(message.blocks) == MAX_BLOCKS
    assert "were left out" in message.blocks[-1]["elements"][0]["text"]
    for block in message.blocks:
        if block["type"] == "section":
            assert len(block["text"]["text"]) <= MAX_SECTION_CHARS
            assert block["text"]["type"] == "mrkdwn"
        elif block["type"] == "header":
            assert len(block["text"]["text"]) <= MAX_HEADER_CHARS
        elif block["type"] == "context":
            assert all(len(element["text"]) <= MAX_SECTION_CHARS for element in block["elements"])
    assert 0 < len(message.text) <= MAX_FALLBACK_CHARS
    assert "<must>" not in json.dumps(message.blocks), "user text is escaped, not read as markup"
    meaning = next(
        block["text"]["text"]
        for block in message.blocks
        if block["type"] == "section" and "A *long*" in block["text"]["text"]
    )
    assert "**" not in meaning, "Markdown bold became mrkdwn bold"


def test_every_cited_message_has_its_permalink(runtime: Runtime):
    reading = _very_long_reading(runtime).model_copy(update={"notes": ()})
    reading = reading.model_copy(
        update={
            "interpretation": reading.interpretation.model_copy(
                update={"links": (), "meaning": "Short."}
            )
        }
    )

    shown = json.dumps(reading_message(reading, _permalink).blocks)

    cited = {item.message.message_id for item in reading.context.flow.earlier}
    cited |= {item.source.message_id for item in reading.context.associations}
    if reading.context.flow.previous:
        cited.add(reading.context.flow.previous.message.message_id)
    assert cited
    for message_id in cited:
        assert _permalink(message_id, None) in shown


def test_markdown_becomes_mrkdwn_and_cuts_never_split_links_or_escapes():
    converted = markdown_to_mrkdwn(
        "# Plan\n**Bold**, *italic*, ~~gone~~, [docs](https://x.y/a_b) & <tag>\n- item"
    )
    assert (
        converted
        == "*Plan*\n*Bold*, _italic_, ~gone~, <https://x.y/a_b|docs> &amp; &lt;tag&gt;\n• item"
    )

    text = ("word &amp; <https://example.com/very/long/path|a link label> " * 200).strip()
    pieces = split(text, 100)
    assert all(len(piece) <= 100 for piece in pieces)
    for piece in pieces:
        assert piece.count("<") == piece.count(">")
        assert "&amp" not in piece.replace("&amp;", "")


def _japanese_reply(runtime: Runtime) -> Reading:
    """An offline reading of a Japanese reply, its headline naming a message before the one
    just before it."""
    said = [
        ("1772440000.000100", "金曜日にリリースできますか？", "carla"),
        ("1772440030.000100", "ログは私が見ておきます。", "bob"),
        ("1772440060.000100", "はい、金曜日にリリースできます。", "dev"),
    ]
    runtime.engine.ingest([utterance(*line, channel=CHANNEL) for line in said])
    reading = runtime.engine.read(CHANNEL, "1772440060.000100", EVERYTHING)
    assert reading.headline.connection is not None and reading.headline.connection.distance > 0
    return reading


@pytest.mark.slow
def test_bold_and_italic_marks_beside_japanese_or_a_link_stand_at_a_word_boundary(
    runtime: Runtime,
):
    message = reading_message(_japanese_reply(runtime), _permalink)
    texts = [
        element["text"]
        for block in message.blocks
        for element in ([block["text"]] if "text" in block else block.get("elements", []))
        if element.get("type") == "mrkdwn"
    ]

    marks = 0
    for text in texts:
        for line in re.sub(r"<[^>]*>", "L", text).split("\n"):  # a link or date: a word
            for match in re.finditer(r"[*_]", line):
                if line.startswith(">"):  # a quotation: people's words, never marked
                    break
                before = line[match.start() - 1] if match.start() else " "
                after = line[match.end()] if match.end() < len(line) else " "
                opening = after not in " \u200b" and before not in "*_"
                if opening:
                    marks += 1
                    assert before in " \u200b" or match.start() == 0, line
                else:
                    assert after in " \u200b.,)" or match.end() == len(line), line
    assert marks >= 2, "the headline is bold and its distance quiet"
    assert not re.search(r"(^|\s)\u200b|\u200b(\s|$)", "\n".join(texts)), "none where not needed"


@pytest.mark.slow
def test_a_date_token_falls_back_to_a_readable_utc_time_and_nothing_dangles(runtime: Runtime):
    message = reading_message(_japanese_reply(runtime), _permalink)
    shown = json.dumps(message.blocks, ensure_ascii=False)

    fallbacks = re.findall(r"<!date\^\d+\^[^|]*\|([^>]*)>", shown)
    assert fallbacks and all(
        re.fullmatch(r"\d{4}-\d\d-\d\d( \d\d:\d\d UTC)?", f) for f in fallbacks
    )
    assert "2026-03-02 08:27 UTC" in fallbacks  # the message itself, to the minute
    assert "1772440060" not in "".join(fallbacks), "never the message id"
    assert not message.text.rstrip().endswith(("・", ",")), message.text
    assert "2026-03-02" in message.text, "the notification says the day as a date"


def test_a_quoted_message_shows_its_code_block_as_code_line_by_line(runtime: Runtime):
    said = (
        "Rough idea for the change:\n```kotlin\nval request = Builder<SyncWorker>(1)\n"
        "    .build()\n```\nHourly instead of every 15 minutes."
    )
    runtime.engine.ingest(
        [
            utterance("1", "Background sync drains the battery.", channel=CHANNEL),
            utterance("2", said, speaker="bob", channel=CHANNEL),
        ]
    )
    reading = runtime.engine.read(CHANNEL, "2", EVERYTHING)

    quote = reading_message(reading, _permalink).blocks[2]["text"]["text"]

    assert quote.split("\n") == [
        ">Rough idea for the change:",
        ">`val request = Builder&lt;SyncWorker&gt;(1)`",
        ">`    .build()`",
        ">Hourly instead of every 15 minutes.",
    ], "no fences, no language tag shown as text; each code line kept, as code, in the quote"
