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

import discord
from discord.ext import commands

from awai_engine.posts import Post
from awai_engine.values import Reading
from bots.actions.answer import Answer, Asked, Outcome, answer
from bots.actions.platform import Refused
from bots.actions.read import LOOK_BACK
from bots.discord import access, messages
from bots.discord.access import ReadRefused
from bots.discord.bridge import OnLoop
from bots.discord.embeds import reading_embed
from bots.discord.ingest import is_read, spoken_utterances
from bots.discord.links import MalformedLinkError, jump_url, parse_message_link
from bots.discord.platform import DiscordAsking, fetch_message
from bots.runtime import Runtime

log = logging.getLogger(__name__)

CANNOT_DM = 50007
"""Discord's code when a user does not accept direct messages from the bot."""


class MentionReadings:
    def __init__(self, bot: discord.Client, runtime: Runtime) -> None:
        self.bot = bot
        self.runtime = runtime

    async def read(self, ctx: commands.Context[commands.Bot], argument: str | None) -> None:
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

            async def by_direct_message(reading: Reading, shared_url: str | None) -> None:
                try:
                    await asker.send(
                        content=messages.reading_by_dm(target.jump_url),
                        embed=reading_embed(reading),
                    )
                except discord.Forbidden as error:
                    if error.code != CANNOT_DM:
                        raise
                    raise ReadRefused(messages.DMS_CLOSED, "direct messages closed") from None

            asking = DiscordAsking(
                OnLoop.here(),
                self.bot,
                self.runtime,
                asker,
                channel,
                target.id,
                by_direct_message,
                given=target,
                checked=True,
            )
            asked = Asked.READING if ephemeral else Asked.SHARE
            before_it = spoken_utterances(before, asking.line)
            said = await asyncio.to_thread(
                answer, self.runtime, asking, asked, said_before=before_it
            )
        except Refused as refusal:  # the asker, the link or the channel, before the action
            said = Answer(Outcome.REFUSED, refusal=str(refusal))

        def link_to(post: Post) -> str:
            return jump_url(guild.id, int(post.place), post.post_id)

        text = messages.answered(said, link_to)
        if said.outcome in (Outcome.FAILED, Outcome.SHARED_EARLIER, Outcome.SHARING_NOW):
            await _reply(ctx.message, text or messages.FAILED)
        elif said.outcome is not Outcome.SHARED and text is not None:  # shared: the reply itself
            await self._tell(ctx.message, asker, text, ephemeral)

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

    async def _tell(
        self, asked_in: discord.Message, asker: discord.Member, text: str, ephemeral: bool
    ) -> None:
        """A refusal: to the asker directly when readings are private (a refusal can name what
        the asker asked about), else as a reply; a closed DM gets the pointer to the menu."""
        if not ephemeral or text == messages.DMS_CLOSED:  # a closed DM: the pointer to the menu
            await _reply(asked_in, text)
            return
        try:
            await asker.send(text)
        except discord.Forbidden:
            await _reply(asked_in, messages.DMS_CLOSED)


async def _reply(message: discord.Message, text: str) -> None:
    await message.reply(text, mention_author=False, allowed_mentions=discord.AllowedMentions.none())


async def answer_command_error(
    ctx: commands.Context[commands.Bot], error: commands.CommandError
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
