"""Catching up on what was said while AWAI was away: when a server becomes available (start,
reconnect) and when the gateway resumes.

For each channel of the server that AWAI has read before, its messages after the newest one
stored are read, and so are those of each of its threads: the active ones, and those archived
since the newest message AWAI stored in the channel (a thread can be archived during the
downtime). A thread with nothing stored is read from its start if it was made after AWAI began
reading the channel; older ones are left to ``/awai backfill``, as channels never read are. A
backfill that a stop interrupted is finished first, from its cursor.

Each line is read oldest first in pages, each page stored before its catch-up cursor moves
(``catchup:<channel or thread>``), so an interrupted catch-up resumes where it stopped even when
live messages have been stored past the gap meanwhile. Rate limits are honoured by discord.py's
HTTP client (it waits out a 429's ``Retry-After``). Progress goes to the log: one line per channel
or thread with anything new, one per server.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import discord

from bots.actions.backfill import BackfillProgress
from bots.discord.access import may_read_history
from bots.discord.backfill import (
    History,
    backfill_with_threads,
    cursor_key,
    read_history,
)
from bots.discord.keys import line_of
from bots.discord.threads import active_threads, threads_of
from bots.runtime import Runtime

log = logging.getLogger(__name__)

CATCH_UP = "catchup:"


@dataclass(frozen=True)
class CaughtUp:
    """What one catch-up of a server read: lines (channels and threads) looked at, messages stored."""

    lines: int
    added: int


class CatchUp:
    def __init__(self, bot: discord.Client, runtime: Runtime) -> None:
        self.bot = bot
        self.runtime = runtime
        self._running: dict[int, asyncio.Task[CaughtUp]] = {}

    def start(self, guild: discord.Guild) -> asyncio.Task[CaughtUp]:
        """Catch the server up in the background; a catch-up already running is not doubled."""
        running = self._running.get(guild.id)
        if running is None or running.done():
            running = asyncio.create_task(self.guild(guild), name=f"awai-catch-up-{guild.id}")
            self._running[guild.id] = running
        return running

    def running(self, guild_id: int) -> asyncio.Task[CaughtUp] | None:
        return self._running.get(guild_id)

    async def guild(self, guild: discord.Guild) -> CaughtUp:
        lines, added = await self._resume_backfills(guild)
        stored = set(await asyncio.to_thread(self.runtime.channels))
        channels = [c for c in guild.text_channels if line_of(c).key in stored]
        if not channels:
            return CaughtUp(lines, added)
        active = await active_threads(guild)
        for channel in channels:
            if not may_read_history(channel.permissions_for(guild.me)):
                continue
            try:
                counted = await self._channel(channel, active)
            except discord.HTTPException as error:
                log.warning("Catch-up of #%s (%s) stopped: %s", channel.name, channel.id, error)
                continue
            except Exception:  # one channel's failure must not stop the others' catch-up
                log.exception("Catch-up of #%s (%s) failed", channel.name, channel.id)
                continue
            lines += counted.lines
            added += counted.added
        log.info(
            "Caught up server %s: %d new message(s) in %d channel(s) and thread(s)",
            guild.id,
            added,
            lines,
        )
        return CaughtUp(lines, added)

    async def _resume_backfills(self, guild: discord.Guild) -> tuple[int, int]:
        """Finish the backfills a stop interrupted (their cursor is saved but not done), threads
        included, before catching up: the channel's past first, then what came after."""
        page_size = self.runtime.settings.discord.backfill_page_size
        lines = added = 0
        for channel in guild.text_channels:
            saved = await asyncio.to_thread(self.runtime.cursor, cursor_key(channel))
            if saved is None or saved.done:
                continue
            log.info("Resuming the interrupted backfill of #%s (%s)", channel.name, channel.id)
            try:
                total, threads = await backfill_with_threads(
                    channel, self.runtime, _quiet, page_size
                )
            except discord.HTTPException as error:
                log.warning("Backfill of #%s stopped again: %s", channel.name, error)
                continue
            log.info("Backfill of #%s finished: %d new message(s)", channel.name, total.added)
            lines, added = lines + 1 + threads, added + total.added
        return lines, added

    async def _channel(
        self, channel: discord.TextChannel, active: list[discord.Thread]
    ) -> CaughtUp:
        key = line_of(channel).key
        newest = await asyncio.to_thread(self.runtime.newest_per_line, key)
        ids = await asyncio.to_thread(self.runtime.message_ids, key)
        if not ids:
            return CaughtUp(0, 0)
        began = min(int(i) for i in ids if i.isdigit())
        last_seen = discord.utils.snowflake_time(max(newest.values()))
        lines, added = 1, await self._line(channel, newest.get(None, began))
        async for thread in threads_of(channel, active, archived_since=last_seen):
            start = newest.get(str(thread.id))
            if start is None and thread.id < began:
                continue  # older than AWAI's reading of the channel: left to /awai backfill
            lines += 1
            added += await self._line(thread, start)
        return CaughtUp(lines, added)

    async def _line(self, channel: History, start_after: int | None) -> int:
        async def report(progress: BackfillProgress) -> None:
            if progress.done and progress.added:
                log.info("Caught up %s: %d new message(s)", channel.id, progress.added)

        key = CATCH_UP + cursor_key(channel)
        page_size = self.runtime.settings.discord.backfill_page_size
        progress = await read_history(channel, self.runtime, report, key, start_after, page_size)
        return progress.added


async def _quiet(progress: BackfillProgress) -> None:
    """A resumed backfill has no status message to edit: its end is logged instead."""
