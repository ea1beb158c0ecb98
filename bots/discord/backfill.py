"""Reading a channel's (or thread's) history into AWAI, resumable after a restart.

History is read oldest first after a cursor (the last message id whose page is stored), in pages
of ``PAGE_SIZE``, by the backfill action in a worker thread (:mod:`bots.actions.backfill`: a page stored before its
cursor is saved, so nothing is lost and nothing stored twice). The cursor is kept per Discord
channel or thread (threads have their own history), so a restart, or the next ``/awai
backfill``, goes on from where the last one stopped.
Catching up after downtime (:mod:`bots.discord.catchup`) reads the same way from the newest
stored message, with a cursor of its own (``start_after``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

import discord

from bots.actions.backfill import BackfillProgress, Page, Start, backfill
from bots.discord.access import Readable
from bots.discord.bridge import OnLoop
from bots.discord.ingest import spoken_utterances
from bots.discord.keys import channel_key, line_of
from bots.discord.threads import active_threads, threads_of
from bots.records import BackfillCursor
from bots.runtime import Runtime

PAGE_SIZE = 100
"""Messages per page: Discord's own maximum per history request."""

History = discord.TextChannel | discord.Thread | discord.VoiceChannel | discord.StageChannel


ProgressReport = Callable[[BackfillProgress], None]
"""Shows a history's progress after each page (blocking: called in the backfill's worker)."""


def cursor_key(channel: Readable) -> str:
    """The cursor's key: the Discord channel or thread itself (a thread has its own history)."""
    return channel_key(channel.guild.id, channel.id)


def backfill_with_threads(
    loop: OnLoop,
    channel: History,
    runtime: Runtime,
    report: ProgressReport,
    page_size: int = PAGE_SIZE,
) -> tuple[BackfillProgress, int]:
    """The channel's history, then each of its threads' (active, archived public, archived
    private where the bot may list them), each with its own cursor so that a second run, or a
    restart, resumes every one where it stopped. ``report`` gets the running total, never marked
    done (the caller says when all is done); returns the total and how many threads were read.
    Blocking (the backfill action, in a worker thread); Discord is asked through ``loop``."""

    def reported_after(before: BackfillProgress | None) -> ProgressReport:
        def shown(progress: BackfillProgress) -> None:
            report(replace(combined(before, progress) if before else progress, done=False))

        return shown

    def history(place: History, before: BackfillProgress | None) -> DiscordHistory:
        shown = reported_after(before)
        return DiscordHistory(loop, place, shown, cursor_key(place), None, page_size)

    total = backfill(runtime, history(channel, None))
    threads = 0
    if isinstance(channel, discord.TextChannel):
        for thread in loop.run(listed_threads(channel, None, None)):
            progress = backfill(runtime, history(thread, total))
            total, threads = combined(total, progress), threads + 1
    return total, threads


async def listed_threads(
    channel: discord.TextChannel,
    active: list[discord.Thread] | None,
    archived_since: datetime | None,
) -> list[discord.Thread]:
    """The channel's threads (:func:`bots.discord.threads.threads_of`); ``active``: the guild's
    active threads when already listed, else they are asked for."""
    if active is None:
        active = await active_threads(channel.guild)
    return [thread async for thread in threads_of(channel, active, archived_since)]


def combined(earlier: BackfillProgress, later: BackfillProgress) -> BackfillProgress:
    """The progress of two histories read one after the other (a channel, then a thread)."""
    return BackfillProgress(
        fetched=earlier.fetched + later.fetched,
        added=earlier.added + later.added,
        refused=earlier.refused + later.refused,
        done=later.done,
        resumed=earlier.resumed or later.resumed,
    )


def refusal_of(error: Exception) -> str | None:
    """Discord's few words when ``error`` is Discord refusing or failing a call."""
    if not isinstance(error, discord.HTTPException):
        return None
    return error.text or str(error)


class DiscordHistory:
    """A Discord channel's or thread's history as the backfill action reads it: oldest first,
    after the id of the last message stored."""

    def __init__(
        self,
        loop: OnLoop,
        channel: History,
        report: ProgressReport,
        key: str,
        start_after: int | None,
        page_size: int,
    ) -> None:
        self.loop, self.channel, self.report = loop, channel, report
        self.key, self.start_after, self.page_size = key, start_after, page_size
        self.line = line_of(channel)

    def start(self, saved: BackfillCursor | None) -> Start:
        reached = saved.cursor if saved is not None else None
        fetched = saved.fetched if saved is not None else 0
        if (
            saved is not None
            and reached is not None
            and (self.start_after is None or not saved.done)
        ):
            return Start(reached, fetched, resumed=True)
        if self.start_after is not None:
            return Start(str(max(self.start_after, int(reached or 0))), fetched)
        return Start(None, fetched)

    def page(self, cursor: str | None) -> Page:
        messages = self.loop.run(self._messages(cursor))
        if not messages:
            return Page([], 0, cursor, last=True)
        last = len(messages) < self.page_size
        utterances = spoken_utterances(messages, self.line)
        return Page(utterances, len(messages), str(messages[-1].id), last)

    def show(self, progress: BackfillProgress) -> None:
        self.report(progress)

    async def _messages(self, cursor: str | None) -> list[discord.Message]:
        after = discord.Object(int(cursor)) if cursor else None
        return [
            message
            async for message in self.channel.history(
                limit=self.page_size, after=after, oldest_first=True
            )
        ]
