"""``/awai forget-me``: remove everything the asker said in this channel from AWAI, for good.

The messages, their thoughts and vectors, and the versions of the asker's preconceptions made
from them go (a tombstone keeps a backfill from reading them again); AWAI's posts that quoted
them are redacted. What the asker writes afterwards is read as before.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import discord

from awai_engine.schemas.service import UnknownChannelError
from bots.discord import messages
from bots.discord.backfill import History
from bots.discord.interactions import acknowledge, refuse_now
from bots.discord.keys import line_of
from bots.discord.privacy import redact_posts
from bots.runtime import Runtime

if TYPE_CHECKING:
    from bots.discord.bot import AwaiBot


async def forget_me(bot: AwaiBot, runtime: Runtime, interaction: discord.Interaction) -> None:
    channel = interaction.channel
    if not isinstance(channel, History):
        await refuse_now(interaction, messages.FORGET_TEXT_CHANNELS_ONLY)
        return
    if not await acknowledge(interaction):
        return
    key = line_of(channel).key
    try:
        report = await asyncio.to_thread(
            runtime.schemas.forget_speaker, key, str(interaction.user.id)
        )
    except UnknownChannelError:
        await interaction.followup.send(messages.NOTHING_KEPT_HERE, ephemeral=True)
        return
    await redact_posts(bot, runtime, key)
    await interaction.followup.send(
        messages.forgotten(report.messages, report.schema_versions), ephemeral=True
    )
