"""Digests on Discord: ``/awai digest`` on demand, and the ones ``discord.digest_schedule`` posts.

The command is acknowledged privately in every mode, so a refusal is only ever seen by the asker;
a digest for everyone (``discord.ephemeral_readings`` off) is posted in the channel on its own.
A digest shown only to the asker is one person's look, so it is not recorded: the next shared
digest still reports its changes from the last shared one. A digest posted for everyone goes on
the record of AWAI's posts with the messages it quotes, so a later delete or forget redacts it.
Making, posting and recording are the digest action's (:mod:`bots.actions.digest`); here is
where Discord's channels are found and how a digest is shown on them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import discord

from awai_engine.posts import Post
from awai_engine.schemas.digest import Digest
from awai_engine.values import MessageRef
from bots.actions.digest import answer_digest, keep_schedules
from bots.discord import access, messages
from bots.discord.access import ReadRefused
from bots.discord.backfill import History
from bots.discord.bridge import OnLoop
from bots.discord.embeds import digest_message
from bots.discord.interactions import acknowledge, refuse_now
from bots.discord.keys import line_of, parse_channel_key
from bots.runtime import Runtime

if TYPE_CHECKING:
    from bots.scheduler import SchedulerService

log = logging.getLogger(__name__)

DIGEST_POSTER = "discord"
"""The name the scheduler knows this adapter's digest poster by."""


class Digests:
    def __init__(self, bot: discord.Client, runtime: Runtime) -> None:
        self.bot = bot
        self.runtime = runtime

    async def answer(self, interaction: discord.Interaction) -> None:
        """``/awai digest``: the channel's digest as the asker may see it."""
        channel = interaction.channel
        if not isinstance(channel, History):
            await refuse_now(interaction, messages.DIGEST_TEXT_CHANNELS_ONLY)
            return
        try:
            access.check_may_read_here(interaction)
        except ReadRefused as refusal:
            await refuse_now(interaction, str(refusal))
            return
        ephemeral = self.runtime.settings.discord.ephemeral_readings
        if not await acknowledge(interaction):  # privately, whatever the mode: see interactions
            return
        board = DiscordBoard(OnLoop.here(), channel)
        try:
            stored = await asyncio.to_thread(self.runtime.engine.scopes_of, board.channel)
            scopes = await access.asker_scopes(self.bot, interaction, stored, not ephemeral)
        except ReadRefused as refusal:
            await interaction.followup.send(str(refusal), ephemeral=True)
            return
        # Shown to the asker alone it is one person's look: not recorded.
        said = await asyncio.to_thread(answer_digest, self.runtime, board, scopes, not ephemeral)
        if said.mine is not None:
            mine = said.mine
            embed, files = digest_message(mine.digest, channel_title(channel), mine.refs)
            await interaction.followup.send(embed=embed, files=files, ephemeral=True)
        elif said.posted:
            jump_url = channel.get_partial_message(int(said.posted[0].post_id)).jump_url
            await interaction.followup.send(messages.digest_posted(jump_url), ephemeral=True)
        else:
            text = messages.NOTHING_READ_HERE if said.nothing_read else messages.FAILED
            await interaction.followup.send(text, ephemeral=True)

    async def schedule(self, scheduler: SchedulerService) -> None:
        """Make the scheduler's Discord digests what ``discord.digest_schedule`` says."""
        wanted: dict[str, str] = {}
        for channel_id, crontab in self.runtime.settings.discord.digest_schedule.items():
            try:
                channel = await self.bot.fetch_channel(channel_id)
            except discord.HTTPException as error:
                log.error(
                    "AWAI_DISCORD__DIGEST_SCHEDULE names channel %s, which AWAI cannot see (%s);"
                    " its digest is not scheduled",
                    channel_id,
                    error,
                )
                continue
            if not isinstance(channel, History):
                log.error("AWAI_DISCORD__DIGEST_SCHEDULE: %s is not a text channel", channel_id)
                continue
            wanted[line_of(channel).key] = crontab
        keep_schedules(scheduler, DIGEST_POSTER, wanted)

    def board_of(self, key: str) -> DiscordBoard | None:
        """Where a scheduled digest of channel ``key`` goes (called in a scheduler thread);
        ``None`` when it is no text channel of its server here."""
        parsed = parse_channel_key(key)
        if parsed is None:
            return None
        loop = OnLoop(self.bot.loop)
        channel = loop.run(self._channel(*parsed))
        return None if channel is None else DiscordBoard(loop, channel)

    async def _channel(self, guild_id: int, channel_id: int) -> History | None:
        channel = self.bot.get_channel(channel_id) or await self.bot.fetch_channel(channel_id)
        if not isinstance(channel, History) or channel.guild.id != guild_id:
            return None
        return channel


class DiscordBoard:
    """A Discord channel as the digest action posts on it: one embed with its picture attached
    (blocking: from a worker thread, Discord asked through the loop bridge)."""

    def __init__(self, loop: OnLoop, place: History) -> None:
        self.loop, self.place = loop, place

    @property
    def channel(self) -> str:
        return line_of(self.place).key

    @property
    def title(self) -> str:
        return channel_title(self.place)

    def post(self, digest: Digest, refs: Mapping[str, MessageRef]) -> Iterator[Post]:
        embed, files = digest_message(digest, channel_title(self.place), refs)
        sent = self.loop.run(self.place.send(embed=embed, files=files))
        yield Post(channel=digest.channel, place=str(sent.channel.id), post_id=str(sent.id))


def channel_title(channel: History) -> str:
    """How people know the channel; a thread's digest is its parent channel's."""
    parent = channel.parent if isinstance(channel, discord.Thread) else None
    return f"#{(parent or channel).name}"
