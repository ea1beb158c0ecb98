"""Digests on Discord: ``/awai digest`` on demand, and the ones ``discord.digest_schedule`` posts.

The command is acknowledged privately in every mode, so a refusal is only ever seen by the asker;
a digest for everyone (``discord.ephemeral_readings`` off) is posted in the channel on its own.
A digest shown only to the asker is one person's look, so it is not recorded: the next shared
digest still reports its changes from the last shared one. A digest posted for everyone goes on
the record of AWAI's posts with the messages it quotes, so a later delete or forget redacts it.
Two bot processes firing the same scheduled digest post it once (a claim in the database).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

import discord

from awai_engine.posts import Post
from awai_engine.schemas.digest import Digest
from awai_engine.schemas.service import UnknownChannelError
from awai_engine.values import MessageRef
from awai_engine.visibility import Scopes
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
SCHEDULED_DIGEST_WINDOW_SECONDS = 300.0
"""Two bot processes firing the same scheduled digest post it once."""


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
        key = line_of(channel).key
        try:
            stored = await asyncio.to_thread(self.runtime.engine.scopes_of, key)
            scopes = await access.asker_scopes(self.bot, interaction, stored, not ephemeral)
            digest, embed, files = await asyncio.to_thread(
                self._digest_message, key, channel_title(channel), not ephemeral, scopes
            )
        except ReadRefused as refusal:
            await interaction.followup.send(str(refusal), ephemeral=True)
            return
        except UnknownChannelError:
            await interaction.followup.send(messages.NOTHING_READ_HERE, ephemeral=True)
            return
        if ephemeral:
            await interaction.followup.send(embed=embed, files=files, ephemeral=True)
            return
        sent = await channel.send(embed=embed, files=files)  # for everyone: on the record
        await asyncio.to_thread(self.runtime.posts.digest, digest, [_post_of(key, sent)])
        await interaction.followup.send(messages.digest_posted(sent.jump_url), ephemeral=True)

    def _digest_message(
        self, key: str, title: str, record: bool, scopes: Scopes
    ) -> tuple[Digest, discord.Embed, list[discord.File]]:
        """The digest of a channel as ``scopes`` may see it, ready to post (blocking: run it in a
        worker thread)."""
        digest = self.runtime.schemas.digest(key, scopes, record=record)
        embed, files = digest_message(digest, title, self._example_refs(key, digest))
        return digest, embed, files

    def _example_refs(self, key: str, digest: Digest) -> dict[str, MessageRef]:
        """Where each example of the digest was posted, for its jump link (blocking)."""
        examples = {
            example.message_id
            for speaker in digest.speakers
            for schema in speaker.schemas
            for example in schema.examples
        }
        return self.runtime.message_refs(key, examples)

    async def schedule(self, scheduler: SchedulerService) -> None:
        """Make the scheduler's Discord digests what ``discord.digest_schedule`` says: add or
        replace the configured ones, remove those no longer configured."""
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
        for poster, key, _ in scheduler.digest_schedules():
            if poster == DIGEST_POSTER and key not in wanted:
                scheduler.unschedule_digest(key, DIGEST_POSTER)
        for key, crontab in wanted.items():
            try:
                scheduler.schedule_digest(key, DIGEST_POSTER, cron=crontab)
            except ValueError as error:
                log.error("AWAI_DISCORD__DIGEST_SCHEDULE: %r is not a crontab: %s", crontab, error)

    def post_scheduled(self, key: str, digest: Digest) -> None:
        """The scheduler's poster (called in a scheduler thread): hop onto the bot's loop to post."""
        parsed = parse_channel_key(key)
        if parsed is None:
            return
        claim = f"discord:scheduled-digest:{key}"
        if not self.runtime.claim(claim, SCHEDULED_DIGEST_WINDOW_SECONDS):
            log.info("digest of %s already posted by another process", key)
            return
        refs = self._example_refs(key, digest)
        OnLoop(self.bot.loop).run(self._post(parsed[0], parsed[1], digest, refs))

    async def _post(
        self, guild_id: int, channel_id: int, digest: Digest, refs: dict[str, MessageRef]
    ) -> None:
        channel = self.bot.get_channel(channel_id) or await self.bot.fetch_channel(channel_id)
        if not isinstance(channel, History) or channel.guild.id != guild_id:
            log.error(
                "digest of %s not posted: the channel is not a text channel here", digest.channel
            )
            return
        embed, files = digest_message(digest, channel_title(channel), refs)
        sent = await channel.send(embed=embed, files=files)
        await asyncio.to_thread(self.runtime.posts.digest, digest, [_post_of(digest.channel, sent)])


def channel_title(channel: History) -> str:
    """How people know the channel; a thread's digest is its parent channel's."""
    parent = channel.parent if isinstance(channel, discord.Thread) else None
    return f"#{(parent or channel).name}"


def _post_of(key: str, sent: discord.Message) -> Post:
    """The record of a digest AWAI posted, quoting channel ``key``."""
    return Post(channel=key, place=str(sent.channel.id), post_id=str(sent.id))
