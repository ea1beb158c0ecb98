"""The channel digest: a PNG map of the expected size, Markdown naming every speaker's schemas,
and what changed since the previous digest."""

from __future__ import annotations

import io
import json
import re

import matplotlib.image
import numpy as np
import pytest

from awai_engine.samples import SAMPLES
from awai_engine.schemas.basis import Basis, RowVectors, SpeakerRows
from awai_engine.schemas.digest import (
    Trend,
    changes_of,
    members_hash,
    speaker_digest,
    speaker_panel,
)
from awai_engine.schemas.markdown import change_text
from awai_engine.schemas.model import SchemaState
from awai_engine.schemas.picture import font_families, picture_size, row_label, trend_text
from awai_engine.schemas.ports import DigestEntry
from awai_engine.schemas.service import UnknownChannelError
from awai_engine.schemas.wording import WORDS, words_for
from awai_engine.visibility import EVERYTHING
from bots.discord.embeds import digest_message as discord_digest_message
from bots.runtime import Runtime
from bots.slack.blocks import digest_message
from bots.terminal.transcript import read_transcript
from tests.schema_topics import CHATTER, said, topic_sentences

CHANNEL = "terminal:local:digest"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def texts(topic: str, count: int, seed: int = 0) -> list[str]:
    return [text for text, _ in topic_sentences([topic], count, seed)]


def three_speakers(runtime: Runtime) -> None:
    runtime.engine.ingest(
        said(CHANNEL, "ann", texts("battery", 8) + CHATTER[:2] + texts("food", 8), 1)
        + said(CHANNEL, "bob", texts("pricing", 8) + CHATTER[2:4], 100)
        + said(CHANNEL, "cy", CHATTER[4:], 200)
    )


@pytest.mark.slow
def test_the_digest_picture_has_one_panel_per_speaker_with_preconceptions(
    runtime: Runtime,
) -> None:
    three_speakers(runtime)
    digest = runtime.schemas.digest(CHANNEL, EVERYTHING)
    assert digest.png.startswith(PNG_SIGNATURE)
    pixels = matplotlib.image.imread(io.BytesIO(digest.png), format="png")
    assert digest.png_size == (pixels.shape[1], pixels.shape[0])
    assert pixels.std() > 0  # something is drawn
    sections = {section.speaker_id: section for section in digest.speakers}
    panels = [
        speaker_panel(section, basis_of(runtime, sid), 4, first=True)
        for sid, section in sections.items()
    ]
    drawn = [panel for panel in panels if panel is not None]
    assert [panel.speaker_name for panel in drawn] == ["Ann", "Bob"]  # cy has none: no panel
    assert digest.png_size == picture_size(drawn, runtime.settings.digest)
    ann = drawn[0]
    assert [row.messages for row in ann.rows] == sorted(
        (row.messages for row in ann.rows), reverse=True
    )  # the most recurring first
    assert all(row.name and row.trend is None for row in ann.rows)  # no trend on a first digest


def test_the_digest_picture_is_wide_for_a_preview_with_people_beyond_four_counted(
    runtime: Runtime,
) -> None:
    topics = ["battery", "pricing", "food", "accessibility", "battery", "pricing"]
    runtime.engine.ingest(
        [
            utterance
            for number, topic in enumerate(topics)
            for utterance in said(CHANNEL, f"p{number}", texts(topic, 8, seed=number), 100 * number)
        ]
    )
    digest = runtime.schemas.digest(CHANNEL, EVERYTHING)
    drawn = [section for section in digest.speakers if section.schemas]
    assert len(drawn) == len(topics)
    width, height = digest.png_size
    pixels = matplotlib.image.imread(io.BytesIO(digest.png), format="png")
    assert (pixels.shape[1], pixels.shape[0]) == (width, height)
    # Two columns of at most four panels: a preview (about 500 px wide) shows it whole.
    assert width / height >= 1.3
    assert runtime.settings.digest.picture_speakers == 4


def test_the_picture_draws_japanese_with_a_packaged_font() -> None:
    assert "IPAexGothic" in font_families()
    from matplotlib import font_manager

    path = font_manager.findfont(font_manager.FontProperties(family="IPAexGothic"))
    assert path.endswith("ipaexg.ttf")


def basis_of(runtime: Runtime, speaker_id: str) -> Basis:
    timeline = runtime.store.timeline(CHANNEL)
    basis = SpeakerRows(timeline).basis(CHANNEL, speaker_id)
    assert basis is not None
    return basis


def test_the_markdown_names_each_speaker_and_each_of_their_preconceptions(runtime: Runtime) -> None:
    three_speakers(runtime)
    digest = runtime.schemas.digest(CHANNEL, EVERYTHING)
    by_speaker = {section.speaker_id: section for section in digest.speakers}
    assert len(by_speaker["ann"].schemas) == 2 and len(by_speaker["bob"].schemas) == 1
    assert not by_speaker["cy"].schemas
    for section in digest.speakers:
        assert f"## {section.speaker_name}:" in digest.markdown
        assert "schema" not in digest.markdown.lower()
        for schema in section.schemas:
            assert f"**{schema.summary}**" in digest.markdown
            assert schema.schema_id not in digest.markdown  # no internal id for people
            assert schema.examples
            for example in schema.examples:
                assert f"({example.message_id})" in digest.markdown
    assert "First digest of this channel." in digest.markdown


def test_each_speakers_preconceptions_are_numbered_from_one_on_every_surface(
    runtime: Runtime,
) -> None:
    three_speakers(runtime)
    digest = runtime.schemas.digest(CHANNEL, EVERYTHING)
    slack = json.dumps(
        digest_message(digest, lambda message_id, _: f"https://s/{message_id}").blocks
    )
    discord_embed, _ = discord_digest_message(digest, "#general", {})
    surfaces = {
        "markdown": digest.markdown,
        "slack": slack.replace("\\n", "\n"),
        "discord": discord_embed.description or "",
    }

    for surface, shown in surfaces.items():
        numbered = [int(number) for number in re.findall(r"^(\d+)\. ", shown, re.MULTILINE)]
        assert numbered == [1, 2, 1], (surface, shown)  # ann's two, then bob's one


@pytest.mark.slow
def test_the_next_digest_reports_new_grown_and_dissolved_schemas(runtime: Runtime) -> None:
    three_speakers(runtime)
    first = runtime.schemas.digest(CHANNEL, EVERYTHING)
    food_messages = {f"m{number:04d}" for number in range(11, 19)}
    food = next(
        schema
        for section in first.speakers
        for schema in section.schemas
        if {example.message_id for example in schema.examples} <= food_messages
    )
    (pricing,) = next(s for s in first.speakers if s.speaker_id == "bob").schemas

    runtime.engine.ingest(said(CHANNEL, "ann", texts("food", 12)[8:], 300))
    runtime.engine.ingest(said(CHANNEL, "cy", texts("accessibility", 8), 400))
    for number in range(100, 108):  # bob's pricing thoughts are deleted: that schema dissolves
        runtime.engine.delete(CHANNEL, f"m{number:04d}")
    second = runtime.schemas.digest(CHANNEL, EVERYTHING)
    sections = {section.speaker_id: section for section in second.speakers}

    grown = next(s for s in sections["ann"].schemas if s.schema_id == food.schema_id)
    assert grown.changes[0].kind == "grown" and grown.changes[0].previous_size == food.size
    assert all(c.kind == "new" for s in sections["cy"].schemas for c in s.changes)
    assert sections["cy"].schemas
    assert [d.schema_id for d in sections["bob"].dissolved] == [pricing.schema_id]
    assert sections["bob"].dissolved[0].summary is None  # its text went with the messages
    # Counted in messages, as the rest of the digest and its picture count.
    assert f"grown (was {food.messages} messages)" in second.markdown
    assert "No longer coming back" in second.markdown
    panel = speaker_panel(sections["ann"], basis_of(runtime, "ann"), 4, first=False)
    assert panel is not None
    trends = {row.name: row.trend for row in panel.rows}
    grew = grown.messages - food.messages
    assert trends[grown.summary] == Trend("delta", grew)  # in the bar's unit, messages
    assert trend_text(Trend("delta", grew), words_for("en")) == f"+{grew}"
    assert trend_text(Trend("delta", -2), words_for("ja")) == "−2件"
    assert trend_text(Trend("new"), words_for("ja")) == "新規"
    assert second.previous_at == first.created_at


def _state(members: tuple[str, ...]) -> SchemaState:
    return SchemaState(
        schema_id="s1",
        version=1,
        speaker_id="ann",
        speaker_name="Ann",
        members=members,
        member_positions=tuple(range(len(members))),
        centroid=np.zeros(4, dtype=np.float32),
        summary=None,
        as_of_message_id="m9",
        as_of=len(members),
    )


def test_grown_and_its_was_count_messages_as_the_rest_of_the_digest_does() -> None:
    before = ("m1#0", "m2#0", "m3#0")
    entry = DigestEntry("ann", "s1", 1, 3, "", messages=3, members_hash=members_hash(before))
    words = words_for("en")
    # Two more messages: grown, and "was" counts the messages it came back in before.
    (grown,) = changes_of(_state((*before, "m4#0", "m5#0")), entry)[:1]
    assert change_text(grown, words) == "grown (was 3 messages)"
    # More thoughts of the same messages: not grown in messages, so other members only.
    (more,) = changes_of(_state((*before, "m3#1", "m3#2")), entry)[:1]
    assert more.kind == "members changed"
    # A snapshot from before messages were recorded can only say thoughts.
    old = DigestEntry("ann", "s1", 1, size=3, summary_hash="")
    (thoughts,) = changes_of(_state((*before, "m4#0")), old)[:1]
    assert change_text(thoughts, words) == "grown (was 3 thoughts)"


def test_a_schema_whose_members_did_not_change_since_the_last_digest_is_reported_unchanged(
    runtime: Runtime,
) -> None:
    # 19 thoughts: the digest clusters all of them (as of now), between her fixed points 16
    # and 20; by the next digest the job has clustered the same members again at 20, under
    # that point's version number.
    runtime.engine.ingest(
        said(CHANNEL, "ann", texts("battery", 8) + CHATTER[:2] + texts("food", 9), 1)
    )
    first = runtime.schemas.digest(CHANNEL, EVERYTHING)
    runtime.engine.ingest(said(CHANNEL, "ann", CHATTER[2:4], 100))  # nothing on her topics
    second = runtime.schemas.digest(CHANNEL, EVERYTHING)
    before = {s.schema_id: s for s in first.speakers[0].schemas}
    after = {s.schema_id: s for s in second.speakers[0].schemas}
    assert before.keys() == after.keys() and len(after) == 2
    assert any(after[i].version != before[i].version for i in after)  # renumbered, not changed
    assert all(not schema.changes for schema in after.values())


@pytest.mark.slow
def test_a_preview_digest_is_not_the_reference_for_the_next_one(runtime: Runtime) -> None:
    three_speakers(runtime)
    recorded = runtime.schemas.digest(CHANNEL, EVERYTHING)
    runtime.schemas.digest(CHANNEL, EVERYTHING, record=False)
    assert runtime.schemas.digest(CHANNEL, EVERYTHING).previous_at == recorded.created_at


def test_a_digest_of_an_unknown_channel_says_so(runtime: Runtime) -> None:
    with pytest.raises(UnknownChannelError):
        runtime.schemas.digest("terminal:local:nowhere", EVERYTHING)


@pytest.mark.slow
def test_a_japanese_channel_gets_its_digest_in_japanese(runtime: Runtime) -> None:
    sample = SAMPLES["ja"]
    transcript = read_transcript(sample.path, sample.channel, 10**7)
    runtime.engine.ingest(transcript.utterances)
    digest = runtime.schemas.digest(transcript.channel, EVERYTHING)
    assert digest.language == "ja"
    title = digest.markdown.splitlines()[0]
    assert title.endswith("の思い込み")
    assert "思い込み" in digest.markdown and "初めてのダイジェスト" in digest.markdown
    for english in ("preconception", "message", "thought", "First digest", "schema"):
        assert english not in digest.markdown
    width, height = digest.png_size
    assert digest.png.startswith(PNG_SIGNATURE) and width > height


@pytest.mark.slow
def test_the_digest_counts_messages_as_its_picture_does_and_quotes_distinct_messages(
    runtime: Runtime,
) -> None:
    sample = SAMPLES["en"]
    transcript = read_transcript(sample.path, sample.channel, 10**7)
    runtime.engine.ingest(transcript.utterances)
    digest = runtime.schemas.digest(transcript.channel, EVERYTHING)

    for section in digest.speakers:
        said = {u.message_id for u in transcript.utterances if u.speaker_id == section.speaker_id}
        assert section.messages == len(said)  # the picture's "15 messages", not 33 thoughts
        assert f"## {section.speaker_name}: {section.messages} messages," in digest.markdown
        assert 0 <= section.unclustered < section.messages  # messages, like the rest
        for schema in section.schemas:
            quoted = [example.message_id for example in schema.examples]
            assert len(quoted) == len(set(quoted)), f"{schema.summary}: {quoted}"
            assert len(quoted) == min(3, schema.messages)
    assert " thoughts in no preconception" not in digest.markdown
    assert "Not in any preconception: " in digest.markdown


def test_both_languages_word_every_part_of_the_digest() -> None:
    """A word missing in Japanese would fail only in a Japanese channel's digest."""

    def base(key: str) -> str:  # English has plural forms ("message:one"), Japanese none
        return key.removesuffix(":one").removesuffix(":other")

    assert {base(key) for key in WORDS["en"]} == set(WORDS["ja"])


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("battery, Android, drain", "battery, Android, drain"),
        ("design review, basic reminders, bigger tap", "design review…"),  # whole phrases
        ("データ移行、バックアップ、復元テスト", "データ移行…"),  # two columns a kanji
        ("a very long single phrase that does not fit at all", "a very long single…"),
    ],
)
def test_a_long_preconception_name_stops_short_of_the_count_beside_its_bar(
    name: str, shown: str
) -> None:
    # A half-width column (two panels side by side) leaves a bar of 346 pixels.
    assert row_label(name, columns=64, track=346.0) == shown


def test_a_digest_quotes_worded_thoughts_before_pleasantries_of_a_preconception() -> None:
    texts = (
        "The cache evicts session keys.",
        "Cache eviction again on checkout.",
        "Nice work Maya.",
        "Thanks!",
        "Cache eviction metrics are on the dashboard.",
    )
    keys = tuple(f"m{n}#0" for n in range(1, 6))
    basis = Basis(
        channel="c",
        speaker_id="ann",
        speaker_name="Ann",
        keys=keys,
        texts=texts,
        message_ids=tuple(key.split("#")[0] for key in keys),
        positions=np.arange(5),
        rows=RowVectors(np.zeros((5, 4), dtype=np.float32)),
        digest="d",
        speakers=(("Ann", 0), ("Maya", 0)),
    )
    state = _state(keys)
    section = speaker_digest(basis, [state], 1, None, {}, examples=3)
    quoted = [example.text for example in section.schemas[0].examples]
    assert quoted == [texts[4], texts[1], texts[0]]  # newest first, the pleasantries left out
    (few,) = speaker_digest(basis, [_state(keys[1:4])], 1, None, {}, examples=3).schemas
    assert [example.message_id for example in few.examples] == ["m4", "m3", "m2"]  # all it has
