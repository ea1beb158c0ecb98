"""Live ingest: messages, threads, edits (with and without text), deletes, the content intent."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

import discord
import pytest

from tests.discord import payloads
from tests.discord.conftest import Harness
from tests.discord.payloads import ANN, BOB, SNOWFLAKES

_IMAGE = {
    "id": "1",
    "filename": "a.png",
    "size": 1,
    "url": "https://x/a.png",
    "proxy_url": "https://x/a.png",
}


def _at(minutes: int) -> str:
    """An edit time ``minutes`` after now, as the gateway writes it."""
    return payloads.iso(datetime.now(UTC) + timedelta(minutes=minutes))


async def test_a_message_is_stored_with_mentions_as_names_and_markup_removed(harness: Harness):
    message_id = SNOWFLAKES.next()
    await harness.post(
        payloads.message(
            message_id,
            content=(
                f"**Hey** <@{payloads.BOB_ID}>, see <#{payloads.CHANNEL_ID}> and"
                " ||the spoiler|| with `snake_case_name` <:party:123456789012345678>"
            ),
            mentions=(BOB,),
        )
    )
    (utterance,) = harness.utterances()
    assert utterance.text == "Hey @Bob, see #general and the spoiler with snake_case_name :party:"
    assert utterance.message_id == str(message_id)
    assert utterance.speaker_id == str(payloads.ANN_ID)
    assert utterance.speaker_name == "Ann"
    assert utterance.addressees == ("Bob",)
    assert utterance.ts == discord.utils.snowflake_time(message_id).timestamp()
    assert utterance.thread_root is None


async def test_bots_webhooks_system_messages_and_wordless_messages_are_not_read(harness: Harness):
    image = {
        "id": "1",
        "filename": "a.png",
        "size": 1,
        "url": "https://x/a.png",
        "proxy_url": "https://x/a.png",
    }
    await harness.post(
        payloads.message(SNOWFLAKES.next(), author=payloads.BOT_USER, content="I am a bot"),
        payloads.message(SNOWFLAKES.next(), content="from a webhook", webhook_id=42),
        payloads.message(SNOWFLAKES.next(), content="", message_type=7),  # a member joined
        payloads.message(SNOWFLAKES.next(), content="", attachments=[image]),
    )
    assert harness.stored() == {}


async def test_a_thread_reply_is_a_line_inside_its_parent_channel(harness: Harness):
    top = SNOWFLAKES.next()
    reply = SNOWFLAKES.next()
    await harness.post(
        payloads.message(top, content="Shall we plan the launch?"),
        payloads.message(reply, channel_id=payloads.THREAD_ID, author=BOB, content="Yes, Friday."),
    )
    by_id = {utterance.message_id: utterance for utterance in harness.utterances()}
    assert list(by_id) == [str(top), str(reply)]
    assert by_id[str(reply)].thread_root == str(payloads.THREAD_ID)
    assert by_id[str(top)].thread_root is None


async def test_a_message_delivered_twice_is_stored_once(harness: Harness):
    data = payloads.message(SNOWFLAKES.next(), content="Once only.")
    await harness.post(data, data)
    assert list(harness.stored().values()) == ["Once only."]


async def test_a_message_from_the_gateway_reaches_the_store(harness: Harness):
    message_id = SNOWFLAKES.next()
    harness.bot._connection.parse_message_create(
        payloads.message(message_id, content="Via the gateway.")
    )
    for _ in range(200):
        if harness.stored():
            break
        await asyncio.sleep(0.05)
    assert harness.stored() == {str(message_id): "Via the gateway."}


async def test_an_edit_with_its_text_replaces_the_stored_text(harness: Harness):
    data = payloads.message(SNOWFLAKES.next(), content="The meeting is on Monday.")
    await harness.post(data)
    edited = {
        **data,
        "content": "The meeting is on *Tuesday*.",
        "edited_timestamp": payloads.iso_now(),
    }
    await harness.cog.on_raw_message_edit(
        discord.RawMessageUpdateEvent(data=edited, message=harness.message(edited))
    )
    assert list(harness.stored().values()) == ["The meeting is on Tuesday."]
    assert harness.server.calls("GET", f"/messages/{data['id']}") == []


async def test_an_edit_without_its_text_fetches_the_message(harness: Harness):
    data = payloads.message(SNOWFLAKES.next(), content="Draft one.")
    await harness.post(data)
    now = {**data, "content": "Draft two, final."}
    harness.server.add_channel(payloads.text_channel(payloads.CHANNEL_ID, "general"), [now])
    partial = {key: value for key, value in now.items() if key != "content"}
    await harness.cog.on_raw_message_edit(
        discord.RawMessageUpdateEvent(data=partial, message=harness.message(now))  # type: ignore[arg-type]
    )
    assert list(harness.stored().values()) == ["Draft two, final."]
    assert len(harness.server.calls("GET", f"/messages/{data['id']}")) == 1


async def test_an_edit_without_text_that_cannot_be_fetched_is_skipped_with_a_log(
    harness: Harness, caplog: pytest.LogCaptureFixture
):
    data = payloads.message(SNOWFLAKES.next(), content="Kept as it was.")
    await harness.post(data)
    partial = {key: value for key, value in data.items() if key != "content"}
    with caplog.at_level(logging.WARNING, logger="bots.discord.sync"):
        await harness.cog.on_raw_message_edit(
            discord.RawMessageUpdateEvent(data=partial, message=harness.message(data))  # type: ignore[arg-type]
        )
    assert list(harness.stored().values()) == ["Kept as it was."]
    assert f"edit of message {data['id']} skipped" in caplog.text


async def test_an_edit_that_removes_every_word_forgets_the_message(harness: Harness):
    data = payloads.message(SNOWFLAKES.next(), content="Oops, wrong channel.")
    await harness.post(data)
    image = {
        "id": "1",
        "filename": "a.png",
        "size": 1,
        "url": "https://x/a.png",
        "proxy_url": "https://x/a.png",
    }
    edited = {**data, "content": "", "attachments": [image]}
    await harness.cog.on_raw_message_edit(
        discord.RawMessageUpdateEvent(data=edited, message=harness.message(edited))
    )
    assert harness.stored() == {}


async def test_words_edited_back_after_an_edit_removed_them_are_stored_again(harness: Harness):
    data = payloads.message(SNOWFLAKES.next(), content="The launch is on the 9th.")
    await harness.post(data)
    emptied = {**data, "content": "", "attachments": [_IMAGE], "edited_timestamp": _at(1)}
    back = {**data, "content": "The launch moved to the 12th.", "edited_timestamp": _at(2)}
    for edit in (emptied, back, emptied):  # the last, a late copy of the first edit
        await harness.cog.on_raw_message_edit(
            discord.RawMessageUpdateEvent(data=edit, message=harness.message(edit))
        )
    assert harness.stored() == {data["id"]: "The launch moved to the 12th."}


async def test_a_deleted_message_is_gone_and_does_not_come_back(harness: Harness):
    keep, gone = (payloads.message(SNOWFLAKES.next(), content=text) for text in ("Stays.", "Goes."))
    await harness.post(keep, gone)
    event = discord.RawMessageDeleteEvent(
        {"id": gone["id"], "channel_id": gone["channel_id"], "guild_id": str(payloads.GUILD_ID)}
    )
    await harness.cog.on_raw_message_delete(event)
    await harness.post(gone)  # a late redelivery
    assert list(harness.stored().values()) == ["Stays."]


async def test_a_bulk_delete_removes_every_message_named(harness: Harness):
    datas = [payloads.message(SNOWFLAKES.next(), content=f"Message number {n}.") for n in range(5)]
    await harness.post(*datas)
    event = discord.RawBulkMessageDeleteEvent(
        {
            "ids": [datas[1]["id"], datas[3]["id"]],
            "channel_id": str(payloads.CHANNEL_ID),
            "guild_id": str(payloads.GUILD_ID),
        }
    )
    await harness.cog.on_raw_bulk_message_delete(event)
    assert list(harness.stored().values()) == [
        "Message number 0.",
        "Message number 2.",
        "Message number 4.",
    ]


async def test_a_delete_in_a_thread_the_bot_no_longer_knows_is_still_applied(harness: Harness):
    reply = payloads.message(
        SNOWFLAKES.next(), channel_id=payloads.THREAD_ID, content="In the thread."
    )
    await harness.post(reply)
    harness.guild._remove_thread(harness.guild.get_thread(payloads.THREAD_ID))  # type: ignore[arg-type]
    event = discord.RawMessageDeleteEvent(
        {
            "id": reply["id"],
            "channel_id": str(payloads.THREAD_ID),
            "guild_id": str(payloads.GUILD_ID),
        }
    )
    await harness.cog.on_raw_message_delete(event)
    assert harness.stored() == {}


@pytest.mark.slow
async def test_a_deleted_thread_takes_its_messages_with_it(harness: Harness):
    top = payloads.message(SNOWFLAKES.next(), content="Who is coming on Friday?")
    reply = payloads.message(
        SNOWFLAKES.next(), channel_id=payloads.THREAD_ID, author=BOB, content="Me."
    )
    await harness.post(top, reply)
    await harness.cog.on_raw_thread_delete(
        discord.RawThreadDeleteEvent(
            {
                "id": str(payloads.THREAD_ID),
                "guild_id": str(payloads.GUILD_ID),
                "parent_id": str(payloads.CHANNEL_ID),
                "type": 11,
            }
        )
    )
    assert list(harness.stored().values()) == ["Who is coming on Friday?"]


async def test_withheld_message_text_is_reported_once_and_nothing_is_stored(
    harness: Harness, caplog: pytest.LogCaptureFixture
):
    with caplog.at_level(logging.WARNING, logger="bots.discord.bot"):
        for _ in range(3):
            await harness.post(payloads.message(SNOWFLAKES.next(), author=ANN, content=""))
    warnings = [
        record for record in caplog.records if "Message Content Intent" in record.getMessage()
    ]
    assert len(warnings) == 1
    assert "withholding message content" in warnings[0].getMessage()
    assert harness.stored() == {}


async def test_a_portal_without_the_content_intent_is_reported_at_start(
    start_bot, fake_discord, caplog: pytest.LogCaptureFixture
):
    fake_discord.application_flags = payloads.NO_MESSAGE_CONTENT_FLAGS
    with caplog.at_level(logging.WARNING, logger="bots.discord.bot"):
        harness = await start_bot()
    assert harness.bot.content_check.warned
    assert "Message Content Intent is off" in caplog.text


async def test_a_portal_with_the_content_intent_starts_without_a_warning(
    start_bot, caplog: pytest.LogCaptureFixture
):
    with caplog.at_level(logging.WARNING, logger="bots.discord.bot"):
        harness = await start_bot()
    assert not harness.bot.content_check.warned
    assert "Message Content" not in caplog.text
