"""Discord's side of catching up (:mod:`bots.actions.catchup`): when a server becomes available
(start, reconnect) and when the gateway resumes.

A channel's lines are its own history after the newest message stored, and those of each of its
threads: the active ones, and those archived since the newest message AWAI stored in the channel
(a thread can be archived during the downtime). A thread with nothing stored is read from its
start if it was made after AWAI began reading the channel; older ones are left to ``/awai
backfill``. Each line keeps its own catch-up cursor, so an interrupted catch-up resumes where it
stopped even when live messages have been stored past the gap meanwhile. Rate limits are honoured
by discord.py's HTTP client (it waits out a 429's ``Retry-After``). The action runs in a worker
thread; Discord is asked through the loop bridge.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import discord

from bots.actions.backfill import BackfillProgress
from bots.actions.catchup import CaughtUp, catch_up
from bots.discord.access import may_read_history
from bots.discord.backfill import (
    DiscordHistory,
    History,
    backfill_with_threads,
    cursor_key,
    listed_threads,
    refusal_of,
)
from bots.discord.bridge import OnLoop
from bots.discord.keys import line_of
from bots.discord.threads import active_threads
from bots.records import catch_up_key
from bots.runtime import Runtime


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
        server = DiscordServer(OnLoop.here(), guild, self.runtime)
        try:
            return await asyncio.to_thread(catch_up, self.runtime, server)
        except asyncio.CancelledError:  # the bot stops: its worker goes on to no next channel
            server.stopped.set()
            raise


class DiscordServer:
    """A server as the catch-up action reads it (blocking: from a worker thread)."""

    def __init__(self, loop: OnLoop, guild: discord.Guild, runtime: Runtime) -> None:
        self.loop, self.guild, self.runtime = loop, guild, runtime
        self.page_size = runtime.settings.discord.backfill_page_size
        self._active: list[discord.Thread] | None = None
        self.stopped = threading.Event()

    @property
    def name(self) -> str:
        return f"server {self.guild.id}"

    def places(self) -> Iterator[DiscordChannel]:
        for channel in self.guild.text_channels:
            if self.stopped.is_set():
                return
            yield DiscordChannel(self, channel)

    def refusal(self, error: Exception) -> str | None:
        return refusal_of(error)

    def active_threads(self) -> list[discord.Thread]:
        """The server's active threads, listed once per catch-up (one request for all)."""
        if self._active is None:
            self._active = self.loop.run(active_threads(self.guild))
        return self._active


class DiscordChannel:
    """One text channel of the server."""

    def __init__(self, server: DiscordServer, channel: discord.TextChannel) -> None:
        self.server, self.channel = server, channel

    @property
    def key(self) -> str:
        return line_of(self.channel).key

    def resume_backfill(self) -> int:
        server = self.server
        total, _ = backfill_with_threads(
            server.loop, self.channel, server.runtime, _quiet, server.page_size
        )
        return total.added

    def lines(self) -> list[DiscordHistory]:
        server, channel = self.server, self.channel
        if not may_read_history(channel.permissions_for(server.guild.me)):
            return []
        newest = server.runtime.newest_per_line(self.key)
        ids = server.runtime.message_ids(self.key)
        if not ids:
            return []
        began = min(int(i) for i in ids if i.isdigit())
        last_seen = discord.utils.snowflake_time(max(newest.values()))
        lines = [self._line(channel, newest.get(None, began))]
        active = server.active_threads()
        for thread in server.loop.run(listed_threads(channel, active, last_seen)):
            start = newest.get(str(thread.id))
            if start is None and thread.id < began:
                continue  # older than AWAI's reading of the channel: left to /awai backfill
            lines.append(self._line(thread, start))
        return lines

    def _line(self, place: History, start_after: int | None) -> DiscordHistory:
        key = catch_up_key(cursor_key(place))
        return DiscordHistory(
            self.server.loop, place, _quiet, key, start_after, self.server.page_size
        )


def _quiet(progress: BackfillProgress) -> None:
    """Nobody watches a catch-up's pages, nor a resumed backfill's: the action logs the end."""
