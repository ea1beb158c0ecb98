"""A message AWAI has not stored yet, fetched from Discord and stored before it is read.

A reading can be asked for a message AWAI never received: one older than AWAI in the channel
(before ``/awai backfill``), or one still on its way through the gateway. As on Slack
(``bots/slack/reading.py``), it is fetched, stored and then read, and the reading notes that the
channel's earlier history is not read yet. The caller checks first that the asker may read the
channel, so nothing is fetched from a place they cannot see. A message someone had AWAI forget
is refused by the store when it comes back, so it stays unread.
"""

from __future__ import annotations

import asyncio

import discord

from awai_engine.values import ReadingNote, Utterance
from awai_engine.visibility import Scopes
from bots.discord import messages
from bots.discord.access import Readable, ReadRefused
from bots.discord.backfill import cursor_key
from bots.discord.ingest import READ_TYPES, is_read, to_utterance
from bots.discord.keys import Line
from bots.runtime import Runtime


async def fetch_message(channel: Readable, message_id: int) -> discord.Message:
    """The message as Discord has it now; a refusal that says why when it cannot be had."""
    if not isinstance(channel, discord.abc.Messageable):
        raise ReadRefused(messages.NOT_READ)
    try:
        return await channel.fetch_message(message_id)
    except discord.NotFound:
        raise ReadRefused(messages.NOT_FOUND) from None
    except discord.HTTPException:
        raise ReadRefused(messages.CANNOT_SEE_HERE) from None


def utterance_of(message: discord.Message, line: Line) -> Utterance:
    """What AWAI would have stored of ``message``; a refusal naming why it reads nothing of it."""
    spoken = not message.author.bot and message.webhook_id is None and message.type in READ_TYPES
    if not spoken:
        raise ReadRefused(messages.NOT_SPOKEN)
    utterance = to_utterance(message, line) if is_read(message) else None
    if utterance is None:
        raise ReadRefused(messages.NO_WORDS if is_read(message) else messages.NOT_READ)
    return utterance


async def store_if_new(
    runtime: Runtime,
    channel: Readable,
    line: Line,
    message_id: int,
    scopes: Scopes,
    given: discord.Message | None = None,
) -> bool:
    """Store the message unless the asker (who may read ``scopes``) finds it stored already
    (``given``: the message Discord sent with the command, saving a fetch); whether it was
    fetched and stored now. A stored message the asker may not see is fetched like an unknown
    one, from the channel the asker named, so both get the same answer."""
    engine = runtime.engine
    if await asyncio.to_thread(engine.is_stored, line.key, str(message_id), scopes):
        return False
    waited = await asyncio.to_thread(engine.await_write, line.key, str(message_id), scopes)
    if waited and await asyncio.to_thread(engine.is_stored, line.key, str(message_id), scopes):
        return False  # another writer was storing it (it was just posted): now it is stored
    message = given if given is not None else await fetch_message(channel, message_id)
    utterance = utterance_of(message, line)
    await asyncio.to_thread(engine.ingest, [utterance])
    await asyncio.to_thread(engine.await_write, line.key, str(message_id), scopes)  # meanwhile
    return True


async def history_missing(runtime: Runtime, channel: Readable) -> ReadingNote | None:
    """The note a reading of a just-stored message carries while the history of its channel (or
    thread: each has its own backfill) from before AWAI joined is not read."""
    cursor = await asyncio.to_thread(runtime.cursor, cursor_key(channel))
    if cursor is not None and cursor.done:
        return None
    return ReadingNote(kind="history-missing")
