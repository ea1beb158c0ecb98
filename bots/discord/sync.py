"""Keeping the store in step with Discord: new messages stored, edits and deletes applied, and a
deleted thread, channel or a server AWAI left purged.

Every engine call runs in a worker thread (``asyncio.to_thread``): embedding a message takes
milliseconds to seconds, and the event loop must keep answering Discord's heartbeats meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import discord

from bots.actions.edit import message_edited
from bots.actions.purge import purge_channel, purge_place
from bots.actions.redact import delete_messages, redact_posts
from bots.actions.said import message_said
from bots.discord import access
from bots.discord.access import ReadRefused
from bots.discord.bridge import OnLoop
from bots.discord.ingest import addressed_to_awai, is_read, to_utterance
from bots.discord.keys import channel_key, guild_prefix, line_of
from bots.discord.platform import DiscordPosts
from bots.discord.privacy import correct_thread_scopes, drop_thread
from bots.runtime import Runtime

log = logging.getLogger(__name__)


class StoreSync:
    def __init__(
        self, bot: discord.Client, runtime: Runtime, withheld: Callable[[discord.Message], bool]
    ) -> None:
        """``withheld``: whether Discord withheld a message's text (the bot's content check)."""
        self.bot = bot
        self.runtime = runtime
        self.withheld = withheld

    async def message(self, message: discord.Message) -> None:
        """A new message: stored if it is one AWAI reads."""
        if self.withheld(message) or not is_read(message):
            return
        channel = await self.resolve(message.guild, message.channel.id)
        if channel is None:
            return
        utterance = to_utterance(message, line_of(channel))
        if utterance is None:
            return
        await asyncio.to_thread(message_said, self.runtime, [utterance])

    async def edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        """An edit: the message as it is now is kept (:func:`bots.actions.edit.message_edited`).
        An edit that leaves no words, or turns the message into a command to AWAI (``@AWAI
        read``), took the person's words off Discord."""
        guild = self.bot.get_guild(payload.guild_id) if payload.guild_id else None
        if guild is None:
            return
        channel = await self.resolve(guild, payload.channel_id)
        if channel is None:
            return
        message = payload.message
        if "content" not in payload.data:  # a partial update: ask Discord for the message
            try:
                message = await channel.fetch_message(payload.message_id)
            except discord.HTTPException as error:
                log.warning(
                    "edit of message %s skipped: its text was not in the update and fetching"
                    " it failed (%s)",
                    payload.message_id,
                    error,
                )
                return
        if self.withheld(message):
            return
        read, line = is_read(message), line_of(channel)
        now = to_utterance(message, line) if read else None
        taken = read or (not message.author.bot and addressed_to_awai(message))
        edited = message.edited_at.timestamp() if message.edited_at else None
        await asyncio.to_thread(
            message_edited,
            self.runtime,
            self._posts(),
            line.key,
            str(message.id),
            now,
            taken,
            edited,
        )

    async def delete(self, guild_id: int, channel_id: int, message_ids: list[int]) -> None:
        """Delete everywhere: in the message's channel, or in every channel of the guild when the
        channel can no longer be resolved (a deleted thread): ids are unique across Discord.
        AWAI's posts quoting them are redacted."""
        guild = self.bot.get_guild(guild_id)
        channel = await self.resolve(guild, channel_id) if guild else None
        if channel is not None:
            keys = [line_of(channel).key]
        else:
            prefix = guild_prefix(guild_id)
            keys = [
                key
                for key in await asyncio.to_thread(self.runtime.channels)
                if key.startswith(prefix)
            ]

        posts, ids = self._posts(), [str(message_id) for message_id in message_ids]

        def delete_all() -> None:
            for key in keys:
                delete_messages(self.runtime, posts, key, ids)

        await asyncio.to_thread(delete_all)

    async def thread_deleted(self, payload: discord.RawThreadDeleteEvent) -> None:
        """A deleted thread: its messages go, and AWAI's posts quoting them are redacted."""
        posts = self._posts()

        def drop() -> None:
            drop_thread(self.runtime, payload.guild_id, payload.parent_id, payload.thread_id)
            redact_posts(self.runtime, posts, channel_key(payload.guild_id, payload.parent_id))

        await asyncio.to_thread(drop)

    async def guild_available(self, guild: discord.Guild) -> None:
        """Messages of private threads stored before they carried their thread's scope get it."""
        await correct_thread_scopes(self.bot, self.runtime, guild)

    async def channel_deleted(self, channel: discord.abc.GuildChannel) -> None:
        key = channel_key(channel.guild.id, channel.id)
        await asyncio.to_thread(purge_channel, self.runtime, key)

    async def guild_left(self, guild: discord.Guild) -> None:
        """AWAI left or was removed from a server: its data goes, unless configured to stay."""
        if not self.runtime.settings.discord.purge_on_guild_leave:
            log.info(
                "left guild %s; its data is kept (AWAI_DISCORD__PURGE_ON_GUILD_LEAVE)", guild.id
            )
            return
        await asyncio.to_thread(purge_place, self.runtime, guild_prefix(guild.id))

    def _posts(self) -> DiscordPosts:
        """AWAI's posts, for the actions to redact from a worker thread."""
        return DiscordPosts(OnLoop.here(), self.bot)

    async def resolve(self, guild: discord.Guild | None, channel_id: int) -> access.Readable | None:
        """The channel or thread AWAI reads, or ``None`` (logged) when it cannot be resolved."""
        if guild is None:
            return None
        try:
            return await access.resolve_channel(self.bot, guild, channel_id)
        except ReadRefused:
            log.info("channel %s of guild %s cannot be resolved", channel_id, guild.id)
            return None
