"""A reading asked for on Discord, from the "Read with AWAI" menu or ``/awai read <link>``.

The checks that can be made on what Discord sent with the command come first and are answered
privately at once; the interaction is then acknowledged privately (``defer(thinking=True,
ephemeral=True)``) and the slower work (resolving the channel, the asker's scopes, the reading
itself) runs after it. So a refusal or an error is only ever seen by the asker: with readings
public (``discord.ephemeral_readings`` off), the reading itself is posted in the channel as a
reply to the message (once per message, as a shared reading), and the asker is told where.

Asking again for the same reading within a minute is answered once; a reading that fails gives
its claim back, so asking again right away retries it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import discord

from awai_engine.engine import StillStoringError, UnknownMessageError
from awai_engine.values import ReadingNote
from awai_engine.visibility import Scopes
from bots.discord import access, messages
from bots.discord.access import ReadRefused
from bots.discord.embeds import reading_embed
from bots.discord.interactions import acknowledge, refuse_now
from bots.discord.keys import Line, line_of
from bots.discord.links import MessageLink
from bots.discord.share import reading_buttons, share_reading, shared_reading_url
from bots.discord.unstored import history_missing, store_if_new
from bots.runtime import Runtime

if TYPE_CHECKING:
    from bots.discord.bot import AwaiBot

DUPLICATE_WINDOW_SECONDS = 60.0
"""The same person asking for the same reading again within this window gets one reading."""


class Readings:
    def __init__(self, bot: AwaiBot, runtime: Runtime) -> None:
        self.bot = bot
        self.runtime = runtime

    async def answer(
        self,
        interaction: discord.Interaction,
        link: MessageLink,
        message: discord.Message | None = None,
    ) -> None:
        """Answer a reading of ``link`` (``message``: the message itself, when Discord sent it
        with the command); a message AWAI has not stored yet is fetched and stored first."""
        guild = interaction.guild
        if guild is None:
            await refuse_now(interaction, messages.SERVER_CHANNELS_ONLY)
            return
        channel_id = link.channel_id or interaction.channel_id
        assert channel_id is not None  # a guild interaction always has a channel
        ephemeral = self.runtime.settings.discord.ephemeral_readings
        here = channel_id == interaction.channel_id
        try:  # what can be checked on the command's own data, before acknowledging it
            access.check_same_guild(link, guild.id)
            access.check_shown_where_it_belongs(channel_id, interaction.channel_id, ephemeral)
            if here:
                access.check_may_read_here(interaction)
        except ReadRefused as refusal:
            await refuse_now(interaction, str(refusal))
            return
        if not await acknowledge(interaction):
            return
        try:
            channel = await access.resolve_channel(self.bot, guild, channel_id)
            if not here:
                await access.check_may_read_there(interaction, channel)
            line = line_of(channel)
            scopes = await self._scopes(interaction, line, not ephemeral)
            stored_now = await store_if_new(
                self.runtime, channel, line, link.message_id, scopes, message
            )
            if stored_now:  # it may be the first message of a place with a scope of its own
                scopes = await self._scopes(interaction, line, not ephemeral)
            note = await history_missing(self.runtime, channel) if stored_now else None
            if not ephemeral:
                await share_reading(
                    interaction, self.runtime, channel, line, link.message_id, scopes, note
                )
                return
            await self._read_privately(interaction, channel, line, link.message_id, scopes, note)
        except ReadRefused as refusal:
            await interaction.followup.send(str(refusal), ephemeral=True)
        except StillStoringError:
            await interaction.followup.send(messages.STILL_STORING, ephemeral=True)
        except UnknownMessageError:
            await interaction.followup.send(messages.NOT_READ, ephemeral=True)

    async def _scopes(self, interaction: discord.Interaction, line: Line, public: bool) -> Scopes:
        """What the asker may read of the scopes the channel's stored messages carry."""
        stored = await asyncio.to_thread(self.runtime.engine.scopes_of, line.key)
        return await access.asker_scopes(self.bot, interaction, stored, public)

    async def _read_privately(
        self,
        interaction: discord.Interaction,
        channel: access.Readable,
        line: Line,
        message_id: int,
        scopes: Scopes,
        note: ReadingNote | None,
    ) -> None:
        """The reading, to the asker only, with its Share and Details buttons (and ``note``, when
        the message was only just fetched); once a minute per asker and message, the claim given
        back when the reading or its sending fails."""
        claim = claim_key(interaction.user.id, line, message_id)
        if not await asyncio.to_thread(self.runtime.claim, claim, DUPLICATE_WINDOW_SECONDS):
            raise ReadRefused(messages.ALREADY_READING)
        try:
            reading = await asyncio.to_thread(
                self.runtime.engine.read, line.key, str(message_id), scopes
            )
            reading = reading.noted(note)
            shared = await shared_reading_url(self.runtime, channel.guild.id, line, message_id)
            buttons = reading_buttons(channel.id, message_id, reading.language, shared)
            await interaction.followup.send(
                embed=reading_embed(reading), ephemeral=True, view=buttons
            )
        except BaseException:
            await asyncio.to_thread(self.runtime.release, claim)
            raise


def claim_key(user_id: int, line: Line, message_id: int) -> str:
    """One reading per asker and message a minute, by every route (menu, slash, mention)."""
    return f"discord:read:{user_id}:{line.key}:{message_id}"
