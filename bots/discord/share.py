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
from bots.language import reader_language
from bots.runtime import Runtime


def reading_buttons(
    channel_id: int, message_id: int, language: str, shared_url: str | None = None
) -> discord.ui.View:
    """The view under a private reading of message ``message_id`` in ``channel_id``: Share, or
    a link to the message's one shared reading once someone shared it, and Details."""
    view = discord.ui.View(timeout=None)
    if shared_url is None:
        view.add_item(ReadingButton(Asked.SHARE, channel_id, message_id, language))
    else:
        label = "共有された読みを見る" if language == "ja" else "See the shared reading"
        view.add_item(discord.ui.Button(label=label, url=shared_url))
    view.add_item(ReadingButton(Asked.DETAILS, channel_id, message_id, language))
    return view


BUTTONS = {
    Asked.SHARE: ("share", discord.ButtonStyle.primary, {"en": "Share", "ja": "共有"}),
    Asked.DETAILS: ("details", discord.ButtonStyle.secondary, {"en": "Details", "ja": "詳細"}),
}
"""Each button: the word in its ``custom_id``, its style, and its label in each language."""


class ReadingButton(
    discord.ui.DynamicItem[discord.ui.Button],
    template=r"awai:(?P<kind>share|details):(?P<channel>\d+):(?P<message>\d+)(?::(?P<lang>[a-z]{2}))?",
):
    """Share or Details under a reading of message ``message_id`` in ``channel_id``; its
    ``custom_id`` (``awai:<kind>:<channel>:<message>:<language>``) is all it needs after a
    restart."""

    def __init__(self, asked: Asked, channel_id: int, message_id: int, language: str) -> None:
        self.asked, self.channel_id, self.message_id = asked, channel_id, message_id
        kind, style, labels = BUTTONS[asked]
        super().__init__(
            discord.ui.Button(
                label=labels.get(language, labels["en"]),
                style=style,
                custom_id=f"awai:{kind}:{channel_id}:{message_id}:{language}",
            )
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str]
    ) -> ReadingButton:
        asked = Asked.SHARE if match["kind"] == "share" else Asked.DETAILS
        return cls(asked, int(match["channel"]), int(match["message"]), match["lang"] or "en")

    async def callback(self, interaction: discord.Interaction) -> None:
        await _runtime_action(interaction, self.channel_id, self.message_id, self.asked)


async def _runtime_action(
    interaction: discord.Interaction, channel_id: int, message_id: int, asked: Asked
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
    said = await asyncio.to_thread(answer, runtime, asking, asked)
    if said.reading is not None:
        language = reader_language(said.reading, interaction.locale.value)
        embed = reading_embed(said.reading, language, details=True)
        await interaction.followup.send(embed=embed, ephemeral=True)
    elif (text := messages.answered(said, asking.link_to)) is not None:
        await interaction.followup.send(text, ephemeral=True)
