"""``/awai backfill``: who may start one, one at a time per channel, progress shown in a message.

The history itself is read by :func:`bots.discord.backfill.backfill_with_threads` (resumable,
page by page, in a worker thread); this module is the command around it: who may start one (the
backfill action's rule, asked of :class:`Moderating`), AWAI's own permissions, the running task
of each channel, and the status message it posts, whose edits and ending are
:mod:`bots.actions.backfill_status`'s, in Discord's words.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import discord

from bots.actions.backfill import BackfillProgress, check_may_backfill
from bots.actions.backfill_status import Status, read_shown
from bots.actions.platform import Refused
from bots.discord import access, messages
from bots.discord.backfill import History, backfill_with_threads, refusal_of
from bots.discord.bridge import OnLoop
from bots.discord.interactions import acknowledge, refuse_now
from bots.runtime import Runtime


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

    async def _run(self, channel: History, posted: discord.Message) -> BackfillProgress | None:
        """The channel's history, then each of its threads' (active, archived public, archived
        private where the bot may list them), each with its own cursor, so a second run resumes
        every one where it stopped; one status message counts them all."""
        loop, words = OnLoop.here(), DiscordStatusWords()
        status = Status(str(channel.id), DiscordStatus(loop, posted), words, refusal_of)
        page_size = self.runtime.settings.discord.backfill_page_size

        def read() -> BackfillProgress:
            total, words.threads = backfill_with_threads(
                loop, channel, self.runtime, status.show, page_size
            )
            return total

        return await asyncio.to_thread(read_shown, read, status)


@dataclass(frozen=True)
class DiscordStatus:
    """The status message, edited from the backfill's worker through the loop bridge."""

    loop: OnLoop
    message: discord.Message

    def say(self, text: str) -> None:
        self.loop.run(self.message.edit(content=text))


@dataclass
class DiscordStatusWords:
    """Discord's sentences for a backfill's status (:mod:`bots.actions.backfill_status`)."""

    threads: int = 0
    """The channel's threads read, once all are."""

    def progress(self, progress: BackfillProgress) -> str:
        return messages.backfill_progress(progress.fetched, progress.added)

    def done(self, progress: BackfillProgress) -> str:
        return messages.backfill_done(progress.fetched, progress.added, self.threads)

    def stopped(self, progress: BackfillProgress, reason: str | None) -> str:
        return messages.backfill_stopped(reason or messages.BACKFILL_FAILED)
