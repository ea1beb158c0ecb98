"""``@AWAI read``: a reading asked for in a plain message, as Slack users ask for one.

What it reads: the message it replies to; else the message a link after it names
(``@AWAI read <link>``); else the message just before it in the channel or thread, in Discord's
own order (fetched from Discord, so a message still being stored here is not skipped, and what
came before it is stored first so the reading's context is whole).

Where the reading goes: a plain message cannot be answered privately on Discord (only
interactions have ephemeral answers), so a private reading (the default) is sent to the asker as
a direct message, and nothing of it appears in the channel. When the asker's direct messages are
closed, a short reply in the channel says so and points to **Read with AWAI**, without a word of
the message. With readings public (``discord.ephemeral_readings`` off), the reading is the
message's one shared reading, posted as a reply to it, with only what everyone there may read.
The same person asking for the same reading within a minute gets one; a failure gives that back.
Nothing shows in the channel while AWAI works (no typing indicator): the asker is waiting for a
direct message, and the channel need not learn that someone asked.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

import discord
from discord.ext import commands

from awai_engine.engine import StillStoringError, UnknownMessageError
from awai_engine.visibility import Scopes
from bots.discord import access, messages
from bots.discord.access import ReadRefused
from bots.discord.embeds import reading_embed
from bots.discord.ingest import is_read, to_utterance
from bots.discord.keys import Line, line_of
from bots.discord.links import MalformedLinkError, parse_message_link
from bots.discord.readings import DUPLICATE_WINDOW_SECONDS, claim_key
from bots.discord.share import publish_reading
from bots.discord.unstored import fetch_message, history_missing, utterance_of
from bots.runtime import Runtime

if TYPE_CHECKING:
    from bots.discord.bot import AwaiBot

log = logging.getLogger(__name__)

LOOK_BACK = 25
"""Messages fetched before the mention to find the one it reads (bots' posts are skipped)."""
CANNOT_DM = 50007
"""Discord's code when a user does not accept direct messages from the bot."""


class MentionReadings:
    def __init__(self, bot: AwaiBot, runtime: Runtime) -> None:
        self.bot = bot
        self.runtime = runtime

    async def read(self, ctx: commands.Context[AwaiBot], argument: str | None) -> None:
        """``@AWAI read [link]`` in ``ctx.message``."""
        asker, guild, here = ctx.author, ctx.guild, ctx.channel
        if guild is None or not isinstance(asker, discord.Member):
            return  # direct messages are not read (the bot asks for no DM intent)
        if not isinstance(here, discord.abc.GuildChannel | discord.Thread):
            return
        ephemeral = self.runtime.settings.discord.ephemeral_readings
        try:
            target, before = await self._target(ctx.message, argument, guild)
            channel = await access.resolve_channel(self.bot, guild, target.channel.id)
            await access.check_member_may_read(asker, channel)
            if not ephemeral:
                access.check_shown_where_it_belongs(channel.id, here.id, ephemeral)
            line = line_of(channel)
            await self._store(line, before)
            stored_now = not ephemeral and await self._store(line, [target])
            stored = await asyncio.to_thread(self.runtime.engine.scopes_of, line.key)
            scopes = await access.readable_scopes(self.bot, guild, asker, stored)
            if ephemeral:
                await self._send_privately(ctx.message, asker, channel, line, target, scopes)
            else:
                note = await history_missing(self.runtime, channel) if stored_now else None
                shared = await publish_reading(
                    self.runtime, channel, line, target.id, scopes, asker, note
                )
                if shared.earlier or shared.busy:
                    await _reply(ctx.message, messages.shared_already(shared.url))
        except ReadRefused as refusal:
            await self._tell(ctx.message, asker, str(refusal), ephemeral)
        except StillStoringError:
            await self._tell(ctx.message, asker, messages.STILL_STORING, ephemeral)
        except UnknownMessageError:
            await self._tell(ctx.message, asker, messages.NOT_READ, ephemeral)

    async def _target(
        self, message: discord.Message, argument: str | None, guild: discord.Guild
    ) -> tuple[discord.Message, list[discord.Message]]:
        """The message to read, and the messages just before it that were fetched with it."""
        reference = message.reference
        if reference is not None and reference.message_id is not None:
            if isinstance(reference.resolved, discord.Message):
                return reference.resolved, []
            return await self._fetch(message, guild, reference.channel_id, reference.message_id), []
        if argument:
            try:
                link = parse_message_link(argument)
            except MalformedLinkError as error:
                raise ReadRefused(str(error)) from None
            access.check_same_guild(link, guild.id)
            channel_id = link.channel_id or message.channel.id
            return await self._fetch(message, guild, channel_id, link.message_id), []
        try:
            earlier = [
                candidate
                async for candidate in message.channel.history(limit=LOOK_BACK, before=message)
            ]
        except discord.HTTPException:
            raise ReadRefused(messages.CANNOT_SEE_HERE) from None
        spoken = [candidate for candidate in earlier if is_read(candidate)]
        if not spoken:
            raise ReadRefused(messages.NOTHING_BEFORE)
        return spoken[0], list(reversed(spoken[1:]))

    async def _fetch(
        self, message: discord.Message, guild: discord.Guild, channel_id: int, message_id: int
    ) -> discord.Message:
        """The message named, fetched only once the asker is known to read its channel: a
        refusal after a fetch would tell a non-member which ids exist in a private thread."""
        channel = await access.resolve_channel(self.bot, guild, channel_id)
        if isinstance(message.author, discord.Member):
            await access.check_member_may_read(message.author, channel)
        return await fetch_message(channel, message_id)

    async def _store(self, line: Line, said: list[discord.Message]) -> bool:
        """Store what Discord has that may not be stored yet (storing twice changes nothing);
        whether any of it was new to AWAI."""
        utterances = [u for m in said if is_read(m) and (u := to_utterance(m, line)) is not None]
        if not utterances:
            return False
        report = await asyncio.to_thread(self.runtime.engine.ingest, utterances)
        return report.added > 0

    async def _send_privately(
        self,
        asked_in: discord.Message,
        asker: discord.Member,
        channel: access.Readable,
        line: Line,
        target: discord.Message,
        scopes: Scopes,
    ) -> None:
        utterance = utterance_of(target, line)  # a refusal that says why, before the claim
        claim = claim_key(asker.id, line, target.id)
        if not await asyncio.to_thread(self.runtime.claim, claim, DUPLICATE_WINDOW_SECONDS):
            raise ReadRefused(messages.ALREADY_READING)
        try:
            stored = await asyncio.to_thread(
                self.runtime.read_storing_first,
                line.key,
                str(target.id),
                scopes,
                lambda: utterance,
            )
            note = await history_missing(self.runtime, channel) if stored.stored_now else None
            reading = stored.reading.noted(note)
            await asker.send(
                content=messages.reading_by_dm(target.jump_url), embed=reading_embed(reading)
            )
        except discord.Forbidden as error:
            await asyncio.to_thread(self.runtime.release, claim)
            if error.code != CANNOT_DM:
                raise
            await _reply(asked_in, messages.DMS_CLOSED)
        except BaseException:
            await asyncio.to_thread(self.runtime.release, claim)
            raise

    async def _tell(
        self, asked_in: discord.Message, asker: discord.Member, text: str, ephemeral: bool
    ) -> None:
        """A refusal: to the asker directly when readings are private (a refusal can name what
        the asker asked about), else as a reply; a closed DM gets the pointer to the menu."""
        if not ephemeral:
            await _reply(asked_in, text)
            return
        try:
            await asker.send(text)
        except discord.Forbidden:
            await _reply(asked_in, messages.DMS_CLOSED)


async def _reply(message: discord.Message, text: str) -> None:
    await message.reply(text, mention_author=False, allowed_mentions=discord.AllowedMentions.none())


async def answer_command_error(
    ctx: commands.Context[AwaiBot], error: commands.CommandError
) -> None:
    """A message that mentions AWAI first but is no command of it gets the short help; a command
    that failed is logged and answered in the user's words."""
    if isinstance(error, commands.CommandNotFound):
        await _reply(ctx.message, messages.MENTION_HELP)
        return
    original = error.original if isinstance(error, commands.CommandInvokeError) else error
    log.error("@AWAI %s failed", ctx.invoked_with, exc_info=original)
    try:
        await _reply(ctx.message, messages.FAILED)
    except discord.HTTPException as answer_error:
        log.warning("could not answer @AWAI %s: %s", ctx.invoked_with, answer_error)
