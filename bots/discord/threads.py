"""The threads of a channel that AWAI may read: active ones, and archived ones as far back as asked.

Discord lists them in three places: a guild's active threads (one request for the whole guild),
a channel's archived public threads, and its archived private threads, which only someone who
may manage threads can list; without that permission the bot lists the private archived threads
it has joined. Archived threads come newest archived first, so a listing can stop at a time
(``archived_since``) instead of walking the whole past.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from datetime import datetime

import discord

from bots.discord.access import may_read_history

log = logging.getLogger(__name__)


async def active_threads(guild: discord.Guild) -> list[discord.Thread]:
    """Every active thread of the guild the bot can see (one request), or none when refused."""
    try:
        return await guild.active_threads()
    except discord.HTTPException as error:
        log.warning("active threads of guild %s not listed: %s", guild.id, error)
        return []


async def threads_of(
    channel: discord.TextChannel, active: list[discord.Thread], archived_since: datetime | None
) -> AsyncIterator[discord.Thread]:
    """The channel's active threads (from the guild's ``active`` list), then its archived ones
    archived at or after ``archived_since`` (every one when ``None``), public, then private
    where the bot may list them. A listing Discord refuses is logged and skipped."""
    seen: set[int] = set()
    for thread in active:
        if thread.parent_id == channel.id:
            seen.add(thread.id)
            yield thread
    permissions = channel.permissions_for(channel.guild.me)
    if not may_read_history(permissions):
        return
    # (private, joined only): public ones, then private ones, all of them or those it joined.
    for private, joined in ((False, False), (True, not permissions.manage_threads)):
        listing = {"private": private, "joined": joined}
        try:
            async for thread in channel.archived_threads(
                limit=None, private=private, joined=joined
            ):
                archived_at = thread.archive_timestamp
                if archived_since is not None and archived_at < archived_since:
                    break
                if thread.id not in seen:
                    seen.add(thread.id)
                    yield thread
        except discord.HTTPException as error:
            log.info("archived threads of %s (%s) not listed: %s", channel.id, listing, error)
