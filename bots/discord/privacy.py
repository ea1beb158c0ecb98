"""Removing a server's data: when the bot leaves it (a setting), or a channel or thread goes; and
redacting AWAI's own posts that quote a deleted or forgotten message.

Blocking storage calls: run these in a worker thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

import discord

from awai_engine.posts import Post
from awai_engine.values import CHANNEL_SCOPE
from bots.discord.keys import channel_key, guild_prefix, private_thread_scope, scope_of
from bots.runtime import Runtime

log = logging.getLogger(__name__)


def purge_guild(runtime: Runtime, guild_id: int, known_channel_ids: Iterable[int] = ()) -> int:
    """Drop every stored channel of the guild and its backfill cursors; returns channels dropped.

    ``known_channel_ids`` are the guild's channels and threads the bot still knew of: their
    cursors go too, so a later return to the server reads its history again from the start.
    """
    prefix = guild_prefix(guild_id)
    keys = runtime.purge_prefix(prefix)
    for channel_id in known_channel_ids:
        runtime.forget_cursor(channel_key(guild_id, channel_id))
    log.info("purged %d channel(s) of guild %s", len(keys), guild_id)
    return len(keys)


def drop_channel(runtime: Runtime, guild_id: int, channel_id: int) -> None:
    """A deleted Discord channel: its messages are gone, so they go here too."""
    key = channel_key(guild_id, channel_id)
    runtime.purge_channel(key)


def drop_thread(runtime: Runtime, guild_id: int, parent_id: int, thread_id: int) -> int:
    """A deleted thread: delete each stored message posted in it; returns how many."""
    key = channel_key(guild_id, parent_id)
    thread = str(thread_id)
    in_thread = runtime.line_ids(key, thread)
    for message_id in in_thread:
        runtime.engine.delete(key, message_id)
    runtime.forget_cursor(channel_key(guild_id, thread_id))
    return len(in_thread)


REMOVED_NOTICE = (
    "This AWAI post quoted a message that has since been deleted, or whose author asked AWAI to"
    " forget them, so its text was removed. Ask AWAI again for a new one."
)


def post_of(key: str, sent: discord.Message) -> Post:
    """The record of a message AWAI posted (a reading or digest), quoting channel ``key``."""
    return Post(channel=key, place=str(sent.channel.id), post_id=str(sent.id))


async def redact_posts(client: discord.Client, runtime: Runtime, key: str) -> int:
    """Edit every post of AWAI's that quotes a deleted or forgotten message of channel ``key`` so
    its text is gone; returns how many. A post Discord refuses to change stays on the record and
    is tried again after the next delete or forget in the channel."""
    done = 0
    for post in await asyncio.to_thread(runtime.posts.to_redact, key):
        message = client.get_partial_messageable(int(post.place)).get_partial_message(
            int(post.post_id)
        )
        try:
            await message.edit(content=REMOVED_NOTICE, embeds=[], attachments=[])
        except discord.NotFound:
            pass  # already gone: nothing of it can be seen
        except discord.HTTPException as error:
            log.warning("AWAI post %s not redacted: %s", post.post_id, error)
            continue
        await asyncio.to_thread(runtime.posts.redacted, post)
        done += 1
    return done


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
    channel = guild.get_channel_or_thread(thread_id)
    if channel is None:
        try:
            channel = await client.fetch_channel(thread_id)
        except (discord.NotFound, discord.Forbidden):
            return private_thread_scope(thread_id)
    if isinstance(channel, discord.Thread):
        return scope_of(channel)
    return CHANNEL_SCOPE
