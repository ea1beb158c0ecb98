"""``/awai forget-me`` on Discord: the action is :mod:`bots.actions.forget`; here it is asked
for in a text channel or thread and answered privately."""

from __future__ import annotations

import asyncio

import discord

from bots.actions.forget import forget_me as forget
from bots.discord import messages
from bots.discord.backfill import History
from bots.discord.bridge import OnLoop
from bots.discord.interactions import acknowledge, refuse_now
from bots.discord.keys import line_of
from bots.discord.platform import DiscordPosts
from bots.runtime import Runtime


async def forget_me(
    bot: discord.Client, runtime: Runtime, interaction: discord.Interaction
) -> None:
    channel = interaction.channel
    if not isinstance(channel, History):
        await refuse_now(interaction, messages.FORGET_TEXT_CHANNELS_ONLY)
        return
    if not await acknowledge(interaction):
        return
    key = line_of(channel).key
    posts = DiscordPosts(OnLoop.here(), bot)
    report = await asyncio.to_thread(forget, runtime, posts, key, str(interaction.user.id))
    if report is None:
        await interaction.followup.send(messages.NOTHING_KEPT_HERE, ephemeral=True)
        return
    await interaction.followup.send(
        messages.forgotten(report.messages, report.schema_versions), ephemeral=True
    )
