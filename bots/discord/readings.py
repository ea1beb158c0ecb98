"""A reading asked for on Discord, from the "Read with AWAI" menu or ``/awai read <link>``.

The checks that can be made on what Discord sent with the command come first and are answered
privately at once; the interaction is then acknowledged privately (``defer(thinking=True,
ephemeral=True)``) and the slower work (resolving the channel, then the action itself: the
asker's scopes, the reading) runs after it. So a refusal or an error is only ever seen by the
asker. The reading is :mod:`bots.actions.read`'s, sent as an ephemeral follow-up with Share and
Details buttons; with readings public (``discord.ephemeral_readings`` off) it is
:mod:`bots.actions.share`'s, posted in the channel as a reply to the message, and the asker is
told where.
"""

from __future__ import annotations

import asyncio

import discord

from awai_engine.values import Reading
from bots.actions.answer import Asked, answer
from bots.actions.platform import Refused
from bots.discord import access, messages
from bots.discord.access import ReadRefused
from bots.discord.bridge import OnLoop
from bots.discord.embeds import reading_embed
from bots.discord.interactions import acknowledge, refuse_now
from bots.discord.links import MessageLink
from bots.discord.platform import DiscordAsking
from bots.discord.share import reading_buttons
from bots.language import reader_language
from bots.runtime import Runtime


class Readings:
    def __init__(self, bot: discord.Client, runtime: Runtime) -> None:
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
            _, member = access.asker_in(interaction)
            channel = await access.resolve_channel(self.bot, guild, channel_id)
            if not here:
                await access.check_may_read_there(interaction, channel)

            async def deliver(reading: Reading, shared_url: str | None) -> None:
                language = reader_language(reading, interaction.locale.value)
                buttons = reading_buttons(channel.id, link.message_id, language, shared_url)
                await interaction.followup.send(
                    embed=reading_embed(reading, language), ephemeral=True, view=buttons
                )

            asking = DiscordAsking(
                OnLoop.here(),
                self.bot,
                self.runtime,
                member,
                channel,
                link.message_id,
                deliver,
                given=message,
                checked=True,
            )
            asked = Asked.READING if ephemeral else Asked.SHARE
            said = await asyncio.to_thread(answer, self.runtime, asking, asked)
            text = messages.answered(said, asking.link_to)
        except Refused as refusal:  # the asker or the channel, before the action
            text = str(refusal)
        if text is not None:
            await interaction.followup.send(text, ephemeral=True)
