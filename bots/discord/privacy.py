"""Removing a server's data: when the bot leaves it (a setting), or a channel or thread goes.

Blocking storage calls: run these in a worker thread, never on the event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from bots.discord.keys import channel_key, guild_prefix
from bots.runtime import Runtime

log = logging.getLogger(__name__)


def purge_guild(runtime: Runtime, guild_id: int, known_channel_ids: Iterable[int] = ()) -> int:
    """Drop every stored channel of the guild and its backfill cursors; returns channels dropped.

    ``known_channel_ids`` are the guild's channels and threads the bot still knew of: their
    cursors go too, so a later return to the server reads its history again from the start.
    """
    prefix = guild_prefix(guild_id)
    keys = [key for key in runtime.store.channels() if key.startswith(prefix)]
    for key in keys:
        runtime.store.drop_channel(key)
        runtime.store.cursors.forget(key)
    for channel_id in known_channel_ids:
        runtime.store.cursors.forget(channel_key(guild_id, channel_id))
    log.info("purged %d channel(s) of guild %s", len(keys), guild_id)
    return len(keys)


def drop_channel(runtime: Runtime, guild_id: int, channel_id: int) -> None:
    """A deleted Discord channel: its messages are gone, so they go here too."""
    key = channel_key(guild_id, channel_id)
    runtime.store.drop_channel(key)
    runtime.store.cursors.forget(key)


def drop_thread(runtime: Runtime, guild_id: int, parent_id: int, thread_id: int) -> int:
    """A deleted thread: delete each stored message posted in it; returns how many."""
    key = channel_key(guild_id, parent_id)
    thread = str(thread_id)
    in_thread = [
        message.message_id
        for message in runtime.store.timeline(key).messages
        if message.ref.thread_root == thread
    ]
    for message_id in in_thread:
        runtime.engine.delete(key, message_id)
    runtime.store.cursors.forget(channel_key(guild_id, thread_id))
    return len(in_thread)
