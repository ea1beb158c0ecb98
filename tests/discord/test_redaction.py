"""AWAI's shared posts on Discord lose a deleted or forgotten message's words; private threads
stored before messages carried scopes are narrowed when the server becomes available.

Posts are made through the command tree with readings shared (``ephemeral_readings`` off); the
fake Discord server records the message edit (``PATCH /channels/{channel}/messages/{id}``).
"""

from __future__ import annotations

import json
from typing import Any

import discord
import pytest

from awai_engine.values import Utterance
from bots.actions.redact import REMOVED_NOTICE
from tests.discord import payloads
from tests.discord.conftest import KEY, Harness
from tests.discord.payloads import ANN, BOB, CAROL, SNOWFLAKES
from tests.discord.test_private_threads import (
    PRIVATE_THREAD_ID,
    SECRET,
    _conversation,
    _private_thread,
    _read,
)

WORDS = "quokkadrift"


async def _shared_reading(start_bot: Any) -> tuple[Harness, dict[str, Any]]:
    harness = await start_bot(discord={"ephemeral_readings": False})
    said = [
        payloads.message(SNOWFLAKES.next(), author=BOB, content=f"The {WORDS} release is late."),
        payloads.message(SNOWFLAKES.next(), author=CAROL, content=f"Then ship {WORDS} next week."),
    ]
    await harness.post(*said)
    shared = await _read(harness, payloads.message_menu(said[-1]), ANN)
    assert WORDS in shared and harness.runtime.store.posts.count(KEY) == 1
    return harness, said[0]


def _edits(harness: Harness) -> list[dict[str, Any]]:
    return [
        r.body
        for r in harness.server.calls("PATCH", "/channels/")
        if r.body and r.body.get("content") == REMOVED_NOTICE
    ]


@pytest.mark.slow
async def test_deleting_a_quoted_message_edits_the_shared_reading_to_a_notice(start_bot: Any):
    harness, bob = await _shared_reading(start_bot)
    event = discord.RawMessageDeleteEvent(
        {"id": bob["id"], "channel_id": bob["channel_id"], "guild_id": str(payloads.GUILD_ID)}
    )
    await harness.cog.on_raw_message_delete(event)

    (edit,) = _edits(harness)
    assert edit["embeds"] == [] and WORDS not in json.dumps(edit)
    assert harness.runtime.store.posts.count(KEY) == 0


@pytest.mark.slow
async def test_editing_a_quoted_message_into_a_command_to_awai_forgets_it_and_redacts(
    start_bot: Any,
):
    harness, bob = await _shared_reading(start_bot)
    edited = {**bob, "content": f"<@{payloads.APPLICATION_ID}> read"}  # the words taken back
    await harness.cog.on_raw_message_edit(
        discord.RawMessageUpdateEvent(data=edited, message=harness.message(edited))  # type: ignore[arg-type]
    )

    assert bob["id"] not in harness.stored()
    (edit,) = _edits(harness)
    assert WORDS not in json.dumps(edit)


@pytest.mark.slow
async def test_forget_me_edits_the_shared_reading_that_quotes_the_person(start_bot: Any):
    harness, _ = await _shared_reading(start_bot)
    sent = await _read(harness, payloads.slash("forget-me"), BOB)  # everything sent, as text
    assert REMOVED_NOTICE in sent and WORDS not in sent
    assert harness.runtime.store.posts.count(KEY) == 0


@pytest.mark.slow
async def test_private_thread_messages_stored_before_scopes_are_narrowed_at_start(
    harness: Harness,
):
    await _conversation(harness)
    # As a database from before scopes holds them: the thread's messages under the channel's.
    legacy = [
        Utterance(
            channel=KEY,
            message_id=str(SNOWFLAKES.next()),
            speaker_id=str(payloads.BOB_ID),
            speaker_name="Bob",
            text=f"Old news: the {SECRET} migration is still secret.",
            ts=1_714_554_000.0,
            thread_root=str(PRIVATE_THREAD_ID),
        )
    ]
    harness.runtime.engine.ingest(legacy)
    assert SECRET in await _read(harness, payloads.slash("read", message=legacy[0].message_id), ANN)

    harness.bot._connection.parse_thread_create(_private_thread())  # type: ignore[attr-defined]
    await harness.cog.on_guild_available(harness.guild)

    refused = await _read(harness, payloads.slash("read", message=legacy[0].message_id), ANN)
    assert SECRET not in refused
    assert SECRET in await _read(harness, payloads.slash("read", message=legacy[0].message_id), BOB)
