"""Reading embeds stay within Discord's limits however long the reading, and keep every link."""

from __future__ import annotations

import discord
import pytest

from awai_engine.values import Interpretation, SchemaBearing, ThoughtLink
from awai_engine.visibility import EVERYTHING
from bots.discord.embeds import reading_embed
from bots.discord.keys import channel_key
from bots.discord.limits import Entry, cut, fit_entries, shares, size
from bots.discord.links import jump_url_of
from bots.runtime import Runtime
from tests.factories import utterance

KEY = channel_key(111111111111111111, 222222222222222222)

TOPICS = [
    "The deployment pipeline fails whenever the integration tests time out on the build server.",
    "Our customers keep asking for a dark mode in the mobile application settings screen.",
    "The quarterly budget review needs the final numbers from every team by Thursday.",
    "Lunch options near the office have improved since the new food market opened.",
]


def _long(text: str, sentences: int) -> str:
    return " ".join(f"{text[:-1]} (point {n})." for n in range(sentences))


def _ingest_long_channel(runtime: Runtime) -> str:
    items = []
    for n in range(8):
        topic = TOPICS[n % len(TOPICS)]
        items.append(
            utterance(
                f"{1000 + n}", _long(topic, 1), speaker=("ann", "bob", "cy")[n % 3], channel=KEY
            )
        )
    last = utterance("2000", _long(TOPICS[0], 12), speaker="ann", channel=KEY)
    report = runtime.engine.ingest([*items, last])
    assert report.added == 9
    return last.message_id


def _assert_within_limits(embed: discord.Embed) -> None:
    data = embed.to_dict()
    assert len(data.get("title", "")) <= 256
    assert len(data.get("description", "")) <= 4096
    assert len(data.get("fields", [])) <= 25
    for field in data.get("fields", []):
        assert 0 < len(field["value"]) <= 1024 and len(field["name"]) <= 256
    assert len(data["footer"]["text"]) <= 2048
    total = sum(size(part) for part in _texts(data))
    assert total <= 6000, total


def _texts(data: dict) -> list[str]:
    fields = data.get("fields", [])
    return [
        data.get("title", ""),
        data.get("description", ""),
        data["footer"]["text"],
        *(field["name"] for field in fields),
        *(field["value"] for field in fields),
    ]


@pytest.mark.slow
def test_a_very_long_reading_fits_and_still_links_every_cited_message(runtime: Runtime):
    message_id = _ingest_long_channel(runtime)
    reading = runtime.engine.read(KEY, message_id, EVERYTHING)
    context = reading.context
    cited = [
        ref for ref in (*(i.message for i in context.flow.earlier), context.flow.previous.message)
    ]
    cited += [item.source for item in context.associations]
    assert context.associations, "the repeated topic should be recalled"
    interpretation = Interpretation(
        meaning="It returns to the failing pipeline. " * 200,
        links=tuple(
            ThoughtLink(
                thought_index=i % len(context.thoughts),
                relation="returns-to",
                message_id=cited[i % len(cited)].message_id,
                explanation="Because the same build server problem was raised before. " * 20,
            )
            for i in range(30)
        ),
        schema_bearings=tuple(
            SchemaBearing(schema_id=f"s{i}", stance="supports", explanation="Consistent. " * 100)
            for i in range(5)
        ),
    )
    written = reading.model_copy(
        update={"interpretation": interpretation, "offline": False, "offline_reason": None}
    )

    for shown in (reading, written):
        embed = reading_embed(shown)
        _assert_within_limits(embed)
        text = "\n".join(_texts(embed.to_dict()))
        for ref in cited:
            assert jump_url_of(KEY, ref) in text
    assert "It returns to the failing pipeline." in reading_embed(written).description


@pytest.mark.slow
def test_a_japanese_reading_has_japanese_headings(runtime: Runtime):
    runtime.engine.ingest(
        [
            utterance("1", "来週のリリースを延期すべきだと思います。", channel=KEY),
            utterance("2", "テストが不安定なので賛成です。", speaker="bob", channel=KEY),
        ]
    )
    reading = runtime.engine.read(KEY, "2", EVERYTHING)
    embed = reading_embed(reading)
    assert embed.title.startswith("読み")
    assert any(field.name.startswith("直前の流れ") for field in embed.fields)
    assert "同意している" in embed.description, "賛成 agrees with the message before, in Japanese"
    assert any(field.name == "考え" for field in reading_embed(reading, details=True).fields)


def test_cut_measures_as_discord_does_and_ends_with_an_ellipsis():
    assert cut("short", 10) == "short"
    assert size("😀") == 2
    shortened = cut("😀" * 10, 7)
    assert size(shortened) <= 7 and shortened.endswith("…")
    assert size(cut("word " * 100, 50)) <= 50


def test_shares_give_small_parts_all_they_want_and_split_the_rest():
    assert shares([10, 1000, 1000], 610) == [10, 300, 300]
    assert shares([5, 5], 100) == [5, 5]


def test_fit_entries_keeps_links_and_shortens_text_first():
    entries = [Entry(f"[n{i}](https://discord.com/channels/1/2/{i})", "x" * 500) for i in range(5)]
    fitted = fit_entries(entries, 600)
    assert size(fitted) <= 600
    for i in range(5):
        assert f"https://discord.com/channels/1/2/{i})" in fitted
    assert size(fit_entries(entries, 120)) <= 120


def test_the_headline_sits_right_under_the_quoted_message(runtime: Runtime):
    said = "Testing is flaky.\nI agree we should delay the release."
    runtime.engine.ingest(
        [
            utterance("1", "We should delay next week's release.", channel=KEY),
            utterance("2", said, speaker="bob", channel=KEY),
        ]
    )
    embed = reading_embed(runtime.engine.read(KEY, "2", EVERYTHING))

    lines = embed.description.split("\n")
    assert lines[:2] == ["> Testing is flaky.", "> I agree we should delay the release."]
    assert lines[2].startswith("**"), "the headline next, with no blank line showing as a gap"
