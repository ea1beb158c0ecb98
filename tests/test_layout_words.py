"""What a person reads in a reading's sections: no separators or indexes made for the machine.

The previous message's thoughts read as the message did (sentences, or an inline list), and a
preconception the message comes back to quotes where it does, not "thought 2". Checked on the
layout every surface formats, and on Slack's blocks and Discord's embed made from it.
"""

from __future__ import annotations

import json
import re

import pytest
from rich.console import Console

from awai_engine.connections import connect
from awai_engine.text import as_said, shorten_keeping_lines
from awai_engine.values import (
    Connection,
    Flow,
    FlowUtterance,
    Reading,
    ReadingContext,
    ReadingNote,
    RecalledSchema,
    ReplyScore,
    Thought,
)
from bots.discord.embeds import reading_embed
from bots.labels import labels_for
from bots.layout import layout, plain_text
from bots.slack.blocks import reading_message
from bots.terminal.render import render_reading
from tests.factories import message_ref


def _reading(
    thoughts: tuple[str, ...],
    previous: tuple[str, ...],
    returned_by: tuple[int, ...] = (),
    language: str = "en",
) -> Reading:
    schemas = ()
    if returned_by:
        schemas = (
            RecalledSchema(
                schema_id="s1",
                version=1,
                summary="Worries about the battery",
                size=4,
                similarity=0.7,
                as_of=8,
                returned_by=returned_by,
            ),
        )
    context = ReadingContext(
        channel="discord:1:2",
        message=message_ref("1100000000000000020", "Dev", 20),
        text=" ".join(thoughts),
        thoughts=tuple(Thought(index=i, text=text) for i, text in enumerate(thoughts)),
        flow=Flow(
            line="top-level",
            previous=FlowUtterance(
                message=message_ref("1100000000000000019", "Ben", 19),
                thoughts=tuple(Thought(index=i, text=text) for i, text in enumerate(previous)),
            ),
        ),
        schemas=schemas,
    )
    return Reading(context=context, backend="offline", offline=True, language=language)


def _rendered(reading: Reading) -> tuple[str, str]:
    """The Slack blocks and the Discord embed of ``reading``, as the text they carry."""
    slack = reading_message(reading, lambda message_id, _: f"https://slack.test/p{message_id}")
    embed = reading_embed(reading)
    return json.dumps(slack.blocks, ensure_ascii=False), json.dumps(
        embed.to_dict(), ensure_ascii=False
    )


@pytest.mark.parametrize(
    ("parts", "passage"),
    [
        (
            ["Good.", "Anything else before I tell everyone?"],
            "Good. Anything else before I tell everyone?",
        ),
        (
            ["Design review notes:", "Snooze cut to 3 (10 min, 1 hour)", "Bigger tap target"],
            "Design review notes: Snooze cut to 3 (10 min, 1 hour); Bigger tap target",
        ),
        (["He said “go.”", "Then he left."], "He said “go.” Then he left."),
        (
            ["無事に終わりました。", "照合も一致しました。"],
            "無事に終わりました。照合も一致しました。",
        ),
        (["買い物リスト", "牛乳", "パン"], "買い物リスト、牛乳、パン"),
        (["ok"], "ok"),
        (
            ["Try this:\n```\nmake clean\n```", "Then build again."],
            "Try this:\n```\nmake clean\n```\nThen build again.",
        ),
    ],
)
def test_thoughts_join_back_into_sentences_or_an_inline_list(
    parts: list[str], passage: str
) -> None:
    assert as_said(parts) == passage


def test_the_previous_message_reads_as_it_was_said_on_every_surface() -> None:
    reading = _reading(("Yes, ship it.",), ("Good.", "Anything else before the launch?"))

    flow = layout(reading).section("flow")

    assert flow is not None
    said = "".join(getattr(piece, "text", "") for piece in flow.lines[-1].pieces)
    assert said == "Ben: Good. Anything else before the launch?"
    for surface in _rendered(reading):
        assert "Good. Anything else before the launch?" in surface
        assert " / " not in surface


def test_a_preconception_quotes_the_thought_that_comes_back_to_it_not_its_number() -> None:
    reading = _reading(
        ("Thanks for the notes.", "The battery drain is back on the Pixel though."),
        ("Here are the notes.",),
        returned_by=(1,),
    )

    for surface in _rendered(reading):
        assert "comes back to it in “The battery drain is back on the Pixel though.”" in surface
        assert "thought 2" not in surface


def test_a_message_that_comes_back_whole_says_so_without_quoting_itself() -> None:
    reading = _reading(("The battery drain is back.",), ("Done.",), returned_by=(0,))

    for surface in _rendered(reading):
        assert "comes back to it here" in surface
        assert "thought 1" not in surface


def test_japanese_readers_get_the_quote_in_japanese_brackets() -> None:
    reading = _reading(
        ("了解です。", "データが消えないかまだ心配です。"),
        ("リハーサル完了です。",),
        returned_by=(1,),
        language="ja",
    )

    for surface in _rendered(reading):
        assert "「データが消えないかまだ心配です。」でまたこの話に戻っている" in surface
        assert "思考" not in surface


def test_a_note_on_a_part_only_partly_embedded_quotes_that_part_on_every_surface() -> None:
    reading = _reading(
        ("Fine.", "The migration plan needs a rollback step for every single table."),
        ("Here is the plan.",),
    )
    note = ReadingNote(kind="embedding-cut", count=40, thoughts=(2,))
    reading = reading.model_copy(
        update={"context": reading.context.model_copy(update={"notes": (note,)})}
    )

    for surface in _rendered(reading):
        assert "“The migration plan needs a rollback…”" in surface
        assert "thought 2" not in surface


def test_a_connection_to_the_previous_message_quotes_it_as_it_was_said() -> None:
    reading = _reading(("Agreed, let's ship it.",), ("Good.", "Anything else before the launch?"))
    context = reading.context
    assert context.flow.previous is not None
    answered = ReplyScore(
        message=context.flow.previous.message, probability=0.9, confident=True, asks=True
    )

    headline, _ = connect(context.model_copy(update={"replies": (answered,)}))

    assert headline.connection is not None
    assert headline.connection.earlier_text == "Good. Anything else before the launch?"


def _with_a_possible_connection(reading: Reading) -> Reading:
    """``reading`` connected to the message just before it, with no headline target."""
    previous = reading.context.flow.previous
    assert previous is not None
    related = Connection(
        message=previous.message,
        relation="relates-to",
        decided_by="cues",
        origin="reply",
        distance=0,
        earlier_text=as_said([thought.text for thought in previous.thoughts]),
    )
    return reading.model_copy(update={"connections": (related,)})


@pytest.mark.parametrize("language", ["en", "ja"])
def test_a_headline_without_a_target_does_not_deny_the_connections_listed_below_it(
    language: str,
) -> None:
    said = ("Thanks.",) if language == "en" else ("ありがとうございます。",)
    before = ("Here are the notes.",) if language == "en" else ("メモです。",)
    alone = _reading(said, before, language=language)
    connected = _with_a_possible_connection(alone)
    words = labels_for(language)

    for surface in _rendered(connected):
        assert words["no_clear_target"] in surface
        assert words["nothing_connects"] not in surface
    for surface in _rendered(alone):  # with nothing listed, nothing is what it says
        assert words["nothing_connects"] in surface
    assert words["no_clear_target"] in layout(connected).plain_summary


@pytest.mark.parametrize("language", ["en", "ja"])
def test_an_offline_reading_says_it_is_offline_once_under_its_headline(language: str) -> None:
    said = ("Thanks.",) if language == "en" else ("ありがとうございます。",)
    before = ("Here are the notes.",) if language == "en" else ("メモです。",)
    reading = _reading(said, before, language=language).model_copy(
        update={"offline_reason": "not-configured"}
    )
    words = labels_for(language)

    headline = layout(reading).section("headline")
    assert headline is not None
    assert [plain_text(line) for line in headline.lines][-1] == words["offline:not-configured"]
    for surface in _rendered(reading):
        assert surface.count(words["offline:not-configured"]) == 1
        assert words["from_cues"] not in surface
        assert surface.count("オフライン" if language == "ja" else "ffline") == 1


def test_a_code_block_is_quoted_as_its_first_line_never_as_fences_on_every_surface() -> None:
    code = "```kotlin\nval request = buildRequest(1, HOURS)\n    .build()\n```"
    reading = _with_a_possible_connection(
        _reading(("That looks right.",), ("Rough idea for the change:", code))
    )

    for surface in _rendered(reading):
        assert "```" not in surface
        assert "kotlin" not in surface
        assert surface.count("(code) val request = buildRequest(1, HOURS) …") == 2  # flow, quote


def test_the_message_read_keeps_its_lines_and_a_code_thought_reads_as_code_on_every_surface() -> (
    None
):
    code = "```python\ndef serialize_card(card):\n    return card.brand\n```"
    reading = _reading(("Here's the failing bit:", code), ("Which card?",))
    reading = reading.model_copy(
        update={
            "context": reading.context.model_copy(
                update={"text": f"Here's the failing bit:\n{code}"}
            )
        }
    )
    console = Console(record=True, width=100)

    render_reading(reading, console, details=True)
    slack, _ = _rendered(reading)
    terminal = console.export_text()

    assert re.search(r"│ Here's the failing bit: +│", terminal)  # its own line, not run on
    # the code's own indentation kept, under the code's two-space indent; no fence shown
    assert re.search(r"│       return card\.brand +│", terminal)
    assert "```" not in terminal.split("Connections")[0]
    assert ">`def serialize_card(card):`\\n>`    return card.brand`" in slack  # code, as code
    assert "2. (code) def serialize_card(card): …" in terminal
    assert "\\n" not in terminal  # no escaped line break anywhere


def test_a_long_message_is_cut_by_lines_with_an_open_code_fence_closed() -> None:
    text = "Log:\n```\n" + "\n".join(f"line {n}" for n in range(40)) + "\n```"

    shown = shorten_keeping_lines(text, 2000, 6)

    assert shown.splitlines() == ["Log:", "```", "line 0", "line 1", "line 2", "line 3", "…", "```"]
    assert shorten_keeping_lines("a\n\n\n\nb  \n", 100, 5) == "a\n\nb"
    assert shorten_keeping_lines("    indented words that run long", 16, 5) == "    indented…"
