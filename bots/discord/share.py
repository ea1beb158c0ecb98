"""The buttons under a private reading: *Share* and *Details*, kept across restarts.

A reading arrives ephemeral. *Share* posts it in the message's channel as a reply to the
message, saying who shared it, with only what everyone there may read, once per message: a
second share, by anyone, gets the link to the first. *Details* answers privately with the
numbers behind every connection. Both are :class:`discord.ui.DynamicItem` buttons whose
``custom_id`` names the message, so they still work after the bot restarts.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import discord

from bots.actions.answer import Asked, answer
from bots.actions.platform import Refused
from bots.discord import access, messages
from bots.discord.bridge import OnLoop
from bots.discord.embeds import reading_embed
from bots.discord.platform import DiscordAsking
from bots.runtime import Runtime


def reading_buttons(
    channel_id: int, message_id: int, language: str, shared_url: str | None = None
) -> discord.ui.View:
    """The view under a private reading of message ``message_id`` in ``channel_id``: Share, or
    a link to the message's one shared reading once someone shared it, and Details."""
    view = discord.ui.View(timeout=None)
    if shared_url is None:
        view.add_item(ShareButton(channel_id, message_id, language))
    else:
        label = "共有された読みを見る" if language == "ja" else "See the shared reading"
        view.add_item(discord.ui.Button(label=label, url=shared_url))
    view.add_item(DetailsButton(channel_id, message_id, language))
    return view


class ShareButton(
    discord.ui.DynamicItem[discord.ui.Button],
    template=r"awai:share:(?P<channel>\d+):(?P<message>\d+)(?::(?P<lang>[a-z]{2}))?",
):
    def __init__(self, channel_id: int, message_id: int, language: str = "en") -> None:
        self.channel_id, self.message_id = channel_id, message_id
        label = "共有" if language == "ja" else "Share"
        super().__init__(
            discord.ui.Button(
                label=label,
                style=discord.ButtonStyle.primary,
                custom_id=f"awai:share:{channel_id}:{message_id}:{language}",
            )
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str]
    ) -> ShareButton:
        return cls(int(match["channel"]), int(match["message"]), match["lang"] or "en")

    async def callback(self, interaction: discord.Interaction) -> None:
        await _runtime_action(interaction, self.channel_id, self.message_id, share=True)


class DetailsButton(
    discord.ui.DynamicItem[discord.ui.Button],
    template=r"awai:details:(?P<channel>\d+):(?P<message>\d+)(?::(?P<lang>[a-z]{2}))?",
):
    def __init__(self, channel_id: int, message_id: int, language: str = "en") -> None:
        self.channel_id, self.message_id = channel_id, message_id
        super().__init__(
            discord.ui.Button(
                label="詳細" if language == "ja" else "Details",
                style=discord.ButtonStyle.secondary,
                custom_id=f"awai:details:{channel_id}:{message_id}:{language}",
            )
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str]
    ) -> DetailsButton:
        return cls(int(match["channel"]), int(match["message"]), match["lang"] or "en")

    async def callback(self, interaction: discord.Interaction) -> None:
        await _runtime_action(interaction, self.channel_id, self.message_id, share=False)


async def _runtime_action(
    interaction: discord.Interaction, channel_id: int, message_id: int, share: bool
) -> None:
    """Acknowledge privately at once, then act (:mod:`bots.actions.share` or
    :mod:`bots.actions.details`, which check the presser may read the message); every refusal
    and failure is answered privately."""
    runtime: Runtime = interaction.client.runtime  # type: ignore[attr-defined]
    await interaction.response.defer(thinking=True, ephemeral=True)
    try:
        guild, member = access.asker_in(interaction)
        channel = await access.resolve_channel(interaction.client, guild, channel_id)
    except Refused as refusal:
        await interaction.followup.send(str(refusal), ephemeral=True)
        return
    asking = DiscordAsking(OnLoop.here(), interaction.client, runtime, member, channel, message_id)
    asked = Asked.SHARE if share else Asked.DETAILS
    said = await asyncio.to_thread(answer, runtime, asking, asked)
    if said.reading is not None:
        embed = reading_embed(said.reading, details=True)
        await interaction.followup.send(embed=embed, ephemeral=True)
    elif (text := messages.answered(said, asking.link_to)) is not None:
        await interaction.followup.send(text, ephemeral=True)
