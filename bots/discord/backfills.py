"""``/awai backfill``: who may start one, one at a time per channel, progress shown in a message.

The history itself is read by :func:`bots.discord.backfill.backfill_with_threads` (resumable,
page by page, in a worker thread); this module is the command around it: who may start one (the
backfill action's rule, asked of :class:`Moderating`), AWAI's own permissions, the running task
of each channel, and the status message edited as pages are stored (at most every few seconds,
since Discord rate-limits message edits).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

import discord

from bots.actions.backfill import BackfillProgress, check_may_backfill
from bots.actions.platform import Refused
from bots.discord import access, messages
from bots.discord.backfill import History, backfill_with_threads
from bots.discord.bridge import OnLoop
from bots.discord.interactions import acknowledge, refuse_now
from bots.runtime import Runtime

log = logging.getLogger(__name__)

STATUS_EDIT_INTERVAL_SECONDS = 2.0
"""Backfill progress edits at most this often (Discord rate-limits message edits)."""


@dataclass(frozen=True)
class Moderating:
    """Whoever ran ``/awai backfill``, as the backfill action asks: one of AWAI's owners
    (``owner_ids``, in any channel), or a member Discord lets manage messages there."""

    interaction: discord.Interaction
    owner_ids: tuple[int, ...]
    managers: str = messages.BACKFILL_MANAGERS

    def manages_place(self) -> bool:
        user = self.interaction.user
        return user.id in self.owner_ids or self.interaction.permissions.manage_messages


class Backfills:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._running: dict[int, asyncio.Task[BackfillProgress | None]] = {}

    async def start(self, interaction: discord.Interaction) -> None:
        channel = interaction.channel
        settings = self.runtime.settings.discord
        if not isinstance(channel, History):
            await refuse_now(interaction, messages.BACKFILL_TEXT_CHANNELS_ONLY)
            return
        try:
            check_may_backfill(Moderating(interaction, settings.owner_ids))
        except Refused as refusal:
            await refuse_now(interaction, str(refusal))
            return
        if not access.may_read_history(interaction.app_permissions):
            await refuse_now(interaction, messages.BACKFILL_NEEDS_HISTORY)
            return
        running = self._running.get(channel.id)
        if running is not None and not running.done():
            await refuse_now(interaction, messages.BACKFILL_RUNNING)
            return
        if not await acknowledge(interaction):
            return
        try:
            status = await channel.send(messages.BACKFILL_STARTING)
        except discord.HTTPException as error:
            await interaction.followup.send(
                messages.backfill_cannot_post(error.text or str(error)), ephemeral=True
            )
            return
        await interaction.followup.send(messages.backfill_started(status.jump_url), ephemeral=True)
        self._running[channel.id] = asyncio.create_task(self._run(channel, status))

    def running(self, channel_id: int) -> asyncio.Task[BackfillProgress | None] | None:
        """The backfill task of a channel, while one runs (or has just finished)."""
        return self._running.get(channel_id)

    async def _run(self, channel: History, status: discord.Message) -> BackfillProgress | None:
        """The channel's history, then each of its threads' (active, archived public, archived
        private where the bot may list them), each with its own cursor, so a second run resumes
        every one where it stopped; one status message counts them all."""
        reporter = StatusReporter(status)
        page_size = self.runtime.settings.discord.backfill_page_size
        try:
            total, reporter.threads = await asyncio.to_thread(
                backfill_with_threads,
                OnLoop.here(),
                channel,
                self.runtime,
                reporter.update,
                page_size,
            )
            await reporter.update(total)
            return total
        except discord.HTTPException as error:
            log.warning("backfill of %s stopped: %s", channel.id, error)
            await reporter.say(messages.backfill_stopped(error.text or str(error)))
            return None
        except Exception:  # the status must not promise progress that stopped
            log.exception("backfill of %s failed", channel.id)
            await reporter.say(messages.backfill_stopped(messages.BACKFILL_FAILED))
            return None


class StatusReporter:
    """Backfill progress shown by editing one status message, at most every few seconds."""

    def __init__(self, status: discord.Message) -> None:
        self.status = status
        self.last_edit = float("-inf")
        self.threads = 0

    async def update(self, progress: BackfillProgress) -> None:
        now = time.monotonic()
        if not progress.done and now - self.last_edit < STATUS_EDIT_INTERVAL_SECONDS:
            return
        self.last_edit = now
        if progress.done:
            text = messages.backfill_done(progress.fetched, progress.added, self.threads)
        else:
            text = messages.backfill_progress(progress.fetched, progress.added)
        await self.say(text)

    async def say(self, text: str) -> None:
        try:
            await self.status.edit(content=text)
        except discord.HTTPException as error:
            log.info("backfill status not updated: %s", error)
