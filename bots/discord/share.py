"""The buttons under a private reading: *Share* and *Details*, kept across restarts.

A reading arrives ephemeral. *Share* posts it in the message's channel as a reply to the
message, saying who shared it, with only what everyone there may read, once per message: a
second share, by anyone, gets the link to the first. *Details* answers privately with the
numbers behind every connection. Both are :class:`discord.ui.DynamicItem` buttons whose
``custom_id`` names the message, so they still work after the bot restarts.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass

import discord

from awai_engine.engine import UnknownMessageError
from awai_engine.posts import Post
from awai_engine.values import ReadingNote
from awai_engine.visibility import Scopes
from bots.discord import access
from bots.discord.access import ReadRefused
from bots.discord.embeds import reading_embed
from bots.discord.keys import Line, line_of
from bots.runtime import Runtime

log = logging.getLogger(__name__)

SHARE_SECONDS = 60.0
"""Presses of Share on one message within this long are one share (a double click)."""


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


async def shared_reading_url(
    runtime: Runtime, guild_id: int, line: Line, message_id: int
) -> str | None:
    """The jump link of the message's one shared reading; None while nobody shared it."""
    existing = await asyncio.to_thread(runtime.posts.shared_reading, line.key, str(message_id))
    if existing is None:
        return None
    return f"https://discord.com/channels/{guild_id}/{existing.place}/{existing.post_id}"


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
        cls, interaction: discord.Interaction, item: discord.ui.Button, match: re.Match[str]
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
        cls, interaction: discord.Interaction, item: discord.ui.Button, match: re.Match[str]
    ) -> DetailsButton:
        return cls(int(match["channel"]), int(match["message"]), match["lang"] or "en")

    async def callback(self, interaction: discord.Interaction) -> None:
        await _runtime_action(interaction, self.channel_id, self.message_id, share=False)


async def _runtime_action(
    interaction: discord.Interaction, channel_id: int, message_id: int, share: bool
) -> None:
    """Acknowledge privately at once, check the presser may read the message, then act; every
    refusal and failure is answered privately."""
    runtime: Runtime = interaction.client.runtime  # type: ignore[attr-defined]
    await interaction.response.defer(thinking=True, ephemeral=True)
    try:
        guild = interaction.guild
        if guild is None:
            raise ReadRefused("AWAI reads server channels only.")
        channel = await access.resolve_channel(interaction.client, guild, channel_id)
        await access.check_may_read_there(interaction, channel)
        line = line_of(channel)
        stored = await asyncio.to_thread(runtime.engine.scopes_of, line.key)
        member = interaction.user
        if not isinstance(member, discord.Member):
            raise ReadRefused("AWAI could not check your permissions in that channel.")
        scopes = await access.readable_scopes(interaction.client, guild, member, stored)
        if share:
            await share_reading(interaction, runtime, channel, line, message_id, scopes)
        else:
            reading = await asyncio.to_thread(
                runtime.engine.read, line.key, str(message_id), scopes
            )
            await interaction.followup.send(
                embed=reading_embed(reading, details=True), ephemeral=True
            )
    except ReadRefused as refusal:
        await interaction.followup.send(str(refusal), ephemeral=True)
    except UnknownMessageError:
        await interaction.followup.send(
            "AWAI no longer has that message: it may have been deleted.", ephemeral=True
        )
    except Exception:
        log.exception("Reading button on %s failed", message_id)
        await interaction.followup.send(
            "Sorry, something went wrong; nothing was posted. Please try again in a minute.",
            ephemeral=True,
        )


async def share_reading(
    interaction: discord.Interaction,
    runtime: Runtime,
    channel: access.Readable,
    line: Line,
    message_id: int,
    scopes: Scopes,
    note: ReadingNote | None = None,
) -> None:
    """Post the reading of ``message_id`` in ``channel`` for everyone, once per message, and tell
    the (privately acknowledged) asker where it is. Share presses and, when readings are public
    (``discord.ephemeral_readings`` off), every reading go through here; ``note``: what the
    reading must say besides its own notes (that the channel's earlier history is not read yet,
    for a message only just fetched), so everyone who sees it is told, not just the asker."""
    shared = await publish_reading(
        runtime, channel, line, message_id, scopes, interaction.user, note
    )
    if shared.busy:
        text = "Someone is sharing this message's reading right now."
    elif shared.earlier:
        text = f"This message's reading is already shared: {shared.url}"
    else:
        text = f"Shared: {shared.url}"
    await interaction.followup.send(text, ephemeral=True)


@dataclass(frozen=True)
class Shared:
    """Where a message's one shared reading is: just posted, posted earlier, or being posted by
    someone else right now (``busy``, no url yet)."""

    url: str | None
    earlier: bool = False
    busy: bool = False


async def publish_reading(
    runtime: Runtime,
    channel: access.Readable,
    line: Line,
    message_id: int,
    scopes: Scopes,
    shared_by: discord.abc.User,
    note: ReadingNote | None = None,
) -> Shared:
    """The message's one shared reading, posted now as a reply to it unless it already is; with
    only what everyone in ``channel`` may read of ``scopes``. A failure gives the claim back."""
    url = await shared_reading_url(runtime, channel.guild.id, line, message_id)
    if url is not None:
        return Shared(url, earlier=True)
    claim = f"discord:share:{line.key}:{message_id}"
    if not await asyncio.to_thread(runtime.claim, claim, SHARE_SECONDS):
        return Shared(None, busy=True)
    public = scopes & access.audience_of(channel)  # only what everyone there may read
    try:
        reading = await asyncio.to_thread(runtime.engine.read, line.key, str(message_id), public)
        reading = reading.noted(note)
        sent = await channel.send(
            content=f"Shared by {shared_by.mention}",
            embed=reading_embed(reading),
            reference=discord.MessageReference(
                message_id=message_id, channel_id=channel.id, fail_if_not_exists=False
            ),
            allowed_mentions=discord.AllowedMentions.none(),
        )
    except BaseException:  # nothing was shared: asking again must try again
        await asyncio.to_thread(runtime.release, claim)
        raise
    post = Post(
        channel=line.key, place=str(sent.channel.id), post_id=str(sent.id), subject=str(message_id)
    )
    await asyncio.to_thread(runtime.posts.reading, reading, post)
    return Shared(sent.jump_url)
