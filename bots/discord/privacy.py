"""What only Discord needs for privacy: a deleted thread's messages go, and private threads'
messages carry the thread's own scope. (Purging a server or channel and redacting AWAI's posts
are the actions', :mod:`bots.actions.purge` and :mod:`bots.actions.redact`.)

:func:`drop_thread` blocks on storage: run it in a worker thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
import logging

import discord

from awai_engine.values import CHANNEL_SCOPE
from bots.discord.keys import channel_key, guild_prefix, private_thread_scope, scope_of
from bots.runtime import Runtime

log = logging.getLogger(__name__)


def drop_thread(runtime: Runtime, guild_id: int, parent_id: int, thread_id: int) -> int:
    """A deleted thread: delete each stored message posted in it; returns how many."""
    key = channel_key(guild_id, parent_id)
    thread = str(thread_id)
    in_thread = runtime.line_ids(key, thread)
    for message_id in in_thread:
        runtime.engine.delete(key, message_id)
    runtime.forget_cursor(channel_key(guild_id, thread_id))
    return len(in_thread)


async def correct_thread_scopes(
    client: discord.Client, runtime: Runtime, guild: discord.Guild
) -> int:
    """Give the stored messages of every private thread of the guild the thread's own scope.

    Why: messages stored before scopes existed carry the channel's, so a private thread's words
    would reach everyone in its channel. Each thread with messages under the channel's scope
    is looked up (the cache, else Discord); a private one, or one AWAI can no longer see (nobody
    can be checked against it), is narrowed to its own scope. Returns the messages changed.
    """
    changed = 0
    prefix = guild_prefix(guild.id)
    keys = [key for key in await asyncio.to_thread(runtime.channels) if key.startswith(prefix)]
    for key in keys:
        threads = await asyncio.to_thread(runtime.engine.thread_scopes, key)
        for thread_root, scopes in threads.items():
            if CHANNEL_SCOPE not in scopes or not thread_root.isdigit():
                continue
            scope = await _scope_of_thread(client, guild, int(thread_root))
            if scope != CHANNEL_SCOPE:
                changed += await asyncio.to_thread(
                    runtime.engine.rescope_thread, key, thread_root, scope
                )
    if changed:
        log.info("%d stored message(s) of private threads of guild %s narrowed", changed, guild.id)
    return changed


async def _scope_of_thread(client: discord.Client, guild: discord.Guild, thread_id: int) -> str:
    channel: object = guild.get_channel_or_thread(thread_id)
    if channel is None:
        try:
            channel = await client.fetch_channel(thread_id)
        except (discord.NotFound, discord.Forbidden):
            return private_thread_scope(thread_id)
    if isinstance(channel, discord.Thread):
        return scope_of(channel)
    return CHANNEL_SCOPE
