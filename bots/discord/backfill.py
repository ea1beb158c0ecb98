"""Reading a channel's (or thread's) history into AWAI, resumable after a restart.

History is read oldest first after a cursor (the last message id whose page is stored), in pages
of ``PAGE_SIZE``. A page is ingested, then its cursor saved, so a crash between the two only means
the page is fetched again, and ingest is idempotent: nothing is lost and nothing is stored twice.
The cursor is kept per Discord channel or thread (threads have their own history) in the
database, so a restart, or the next ``/awai backfill``, goes on from where the last one stopped.
Catching up after downtime (:mod:`bots.discord.catchup`) reads the same way from the newest
stored message, with a cursor of its own.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

import discord

from awai_engine.engine import IngestReport
from bots.discord.access import Readable
from bots.discord.ingest import is_read, to_utterance
from bots.discord.keys import Line, channel_key, line_of
from bots.discord.threads import active_threads, threads_of
from bots.runtime import Runtime

log = logging.getLogger(__name__)

PAGE_SIZE = 100
"""Messages per page: Discord's own maximum per history request."""

History = discord.TextChannel | discord.Thread | discord.VoiceChannel | discord.StageChannel


@dataclass(frozen=True)
class BackfillProgress:
    """Where a backfill of one Discord channel or thread stands."""

    fetched: int
    added: int
    refused: int
    done: bool
    resumed: bool


ProgressReport = Callable[[BackfillProgress], Awaitable[None]]


def cursor_key(channel: Readable) -> str:
    """The cursor's key: the Discord channel or thread itself (a thread has its own history)."""
    return channel_key(channel.guild.id, channel.id)


async def backfill(
    channel: History, runtime: Runtime, report: ProgressReport, page_size: int = PAGE_SIZE
) -> BackfillProgress:
    """Ingest the history of ``channel`` from its saved cursor to now, reporting after each page."""
    return await read_history(channel, runtime, report, cursor_key(channel), None, page_size)


async def backfill_with_threads(
    channel: History, runtime: Runtime, report: ProgressReport, page_size: int = PAGE_SIZE
) -> tuple[BackfillProgress, int]:
    """The channel's history, then each of its threads' (active, archived public, archived
    private where the bot may list them), each with its own cursor so that a second run, or a
    restart, resumes every one where it stopped. ``report`` gets the running total, never marked
    done (the caller says when all is done); returns the total and how many threads were read."""

    async def partial(progress: BackfillProgress, before: BackfillProgress | None = None) -> None:
        await report(replace(combined(before, progress) if before else progress, done=False))

    total = await backfill(channel, runtime, partial, page_size)
    threads = 0
    if isinstance(channel, discord.TextChannel):
        active = await active_threads(channel.guild)
        async for thread in threads_of(channel, active, archived_since=None):
            before = total
            progress = await backfill(
                thread, runtime, lambda p, before=before: partial(p, before), page_size
            )
            total, threads = combined(total, progress), threads + 1
    return total, threads


def combined(earlier: BackfillProgress, later: BackfillProgress) -> BackfillProgress:
    """The progress of two histories read one after the other (a channel, then a thread)."""
    return BackfillProgress(
        fetched=earlier.fetched + later.fetched,
        added=earlier.added + later.added,
        refused=earlier.refused + later.refused,
        done=later.done,
        resumed=earlier.resumed or later.resumed,
    )


async def read_history(
    channel: History,
    runtime: Runtime,
    report: ProgressReport,
    key: str,
    start_after: int | None,
    page_size: int = PAGE_SIZE,
) -> BackfillProgress:
    """Ingest ``channel``'s messages after its cursor ``key`` (an unfinished one), else after
    ``start_after`` (``None``: from the beginning), oldest first, page by page, each page stored
    before the cursor moves past it; rate limits are honoured by discord.py's HTTP client."""
    saved = await asyncio.to_thread(runtime.cursor, key)
    reached = saved.cursor if saved is not None else None
    cursor: str | None
    if saved is not None and reached is not None and (start_after is None or not saved.done):
        cursor, resumed = reached, True
    elif start_after is not None:
        cursor, resumed = str(max(start_after, int(reached or 0))), False
    else:
        cursor, resumed = None, False
    line = line_of(channel)
    progress = BackfillProgress(
        fetched=saved.fetched if saved else 0, added=0, refused=0, done=False, resumed=resumed
    )
    while True:
        after = discord.Object(int(cursor)) if cursor else None
        page = [
            message
            async for message in channel.history(limit=page_size, after=after, oldest_first=True)
        ]
        if not page:
            break
        progress, cursor = await _store_page(page, line, key, runtime, progress)
        await report(progress)
        if len(page) < page_size:
            break
    await asyncio.to_thread(runtime.save_cursor, key, cursor, progress.fetched, True)
    progress = replace(progress, done=True)
    await report(progress)
    return progress


async def _store_page(
    page: list[discord.Message],
    line: Line,
    key: str,
    runtime: Runtime,
    progress: BackfillProgress,
) -> tuple[BackfillProgress, str]:
    """Ingest one page, then save its cursor: the order that makes a crash harmless."""
    utterances = [
        utterance
        for message in page
        if is_read(message) and (utterance := to_utterance(message, line)) is not None
    ]
    report: IngestReport = await asyncio.to_thread(runtime.engine.ingest, utterances)
    cursor = str(page[-1].id)
    fetched = progress.fetched + len(page)
    await asyncio.to_thread(runtime.save_cursor, key, cursor, fetched, False)
    if report.problems:
        log.info("backfill %s: %d message(s) not stored", key, len(report.problems))
    progress = replace(
        progress,
        fetched=fetched,
        added=progress.added + report.added,
        refused=progress.refused + len(report.problems) + report.refused_deleted,
    )
    return progress, cursor
