"""AWAI on Discord: gateway listeners that keep the store in step, and the commands people use.

Every engine and storage call runs in a worker thread (``asyncio.to_thread``): embedding a message
or assembling a reading takes milliseconds to seconds, and the event loop must keep answering
Discord's heartbeats and other people's commands meanwhile.

Readings are acknowledged at once (``defer(thinking=True)``): the checks that can be made on what
Discord sent with the command come first and are answered privately; everything slower runs after
the acknowledgement. Context menus cannot live in a cog, so the "Read with AWAI" menu is built here
and added to the command tree when the cog loads, and removed when it unloads.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from awai_engine.engine import UnknownMessageError
from awai_engine.schemas.digest import Digest
from awai_engine.schemas.service import UnknownChannelError
from awai_engine.values import MessageRef
from awai_engine.visibility import Scopes
from bots.discord import access
from bots.discord.access import ReadRefused
from bots.discord.backfill import BackfillProgress, History, backfill
from bots.discord.embeds import digest_message, help_embed, reading_embed
from bots.discord.ingest import is_read, to_utterance
from bots.discord.keys import Line, channel_key, guild_prefix, line_of, parse_channel_key
from bots.discord.links import MalformedLinkError, MessageLink, parse_message_link
from bots.discord.privacy import (
    correct_thread_scopes,
    drop_channel,
    drop_thread,
    post_of,
    purge_guild,
    redact_posts,
)
from bots.discord.share import reading_buttons
from bots.runtime import Runtime

if TYPE_CHECKING:
    from bots.discord.bot import AwaiBot
    from bots.scheduler import SchedulerService

log = logging.getLogger(__name__)

READ_MENU_NAME = "Read with AWAI"
DUPLICATE_WINDOW_SECONDS = 60.0
"""The same person asking for the same reading again within this window gets one reading."""
STATUS_EDIT_INTERVAL_SECONDS = 2.0
"""Backfill progress edits at most this often (Discord rate-limits message edits)."""
DIGEST_POSTER = "discord"
"""The name the scheduler knows this adapter's digest poster by."""
SCHEDULED_DIGEST_WINDOW_SECONDS = 300.0
"""Two bot processes firing the same scheduled digest post it once."""
ALREADY_ACKNOWLEDGED = 40060
"""Discord's error code when another process answered the interaction first."""


class AwaiCog(commands.Cog):
    awai = app_commands.Group(
        name="awai",
        description="Read a message in the context of what was said before it, and only before it.",
        guild_only=True,
    )

    def __init__(self, bot: AwaiBot, runtime: Runtime) -> None:
        self.bot = bot
        self.runtime = runtime
        self.settings = runtime.settings.discord
        self.read_menu = app_commands.ContextMenu(
            name=READ_MENU_NAME,
            callback=self.read_with_awai,
            allowed_contexts=app_commands.AppCommandContext(guild=True),
        )
        self._backfills: dict[int, asyncio.Task[BackfillProgress | None]] = {}

    async def cog_load(self) -> None:
        self.bot.tree.add_command(self.read_menu)

    async def cog_unload(self) -> None:
        self.bot.tree.remove_command(self.read_menu.name, type=self.read_menu.type)

    # -- ingest --------------------------------------------------------------------------------

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        if self.bot.content_check.observe(message) or not is_read(message):
            return
        channel = await self._channel(message.guild, message.channel.id)
        if channel is None:
            return
        utterance = to_utterance(message, line_of(channel))
        if utterance is None:
            return
        report = await asyncio.to_thread(self.runtime.engine.ingest, [utterance])
        for problem in report.problems:
            log.info("message %s not stored: %s", problem.message_id, problem.reason)

    @commands.Cog.listener()
    async def on_raw_message_edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        guild = self.bot.get_guild(payload.guild_id) if payload.guild_id else None
        if guild is None:
            return
        channel = await self._channel(guild, payload.channel_id)
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
        if self.bot.content_check.observe(message) or not is_read(message):
            return
        line = line_of(channel)
        utterance = to_utterance(message, line)
        if utterance is None:  # the words were edited away: forget them
            await asyncio.to_thread(self.runtime.engine.delete, line.key, str(message.id))
            return
        await asyncio.to_thread(self.runtime.engine.edit, utterance)

    @commands.Cog.listener()
    async def on_raw_message_delete(self, payload: discord.RawMessageDeleteEvent) -> None:
        if payload.guild_id is not None:
            await self._delete(payload.guild_id, payload.channel_id, [payload.message_id])

    @commands.Cog.listener()
    async def on_raw_bulk_message_delete(self, payload: discord.RawBulkMessageDeleteEvent) -> None:
        if payload.guild_id is not None:
            await self._delete(payload.guild_id, payload.channel_id, sorted(payload.message_ids))

    @commands.Cog.listener()
    async def on_raw_thread_delete(self, payload: discord.RawThreadDeleteEvent) -> None:
        await asyncio.to_thread(
            drop_thread, self.runtime, payload.guild_id, payload.parent_id, payload.thread_id
        )
        await redact_posts(self.bot, self.runtime, channel_key(payload.guild_id, payload.parent_id))

    @commands.Cog.listener()
    async def on_guild_available(self, guild: discord.Guild) -> None:
        """Messages of private threads stored before they carried their thread's scope get it."""
        await correct_thread_scopes(self.bot, self.runtime, guild)

    @commands.Cog.listener()
    async def on_guild_channel_delete(self, channel: discord.abc.GuildChannel) -> None:
        await asyncio.to_thread(drop_channel, self.runtime, channel.guild.id, channel.id)

    @commands.Cog.listener()
    async def on_guild_remove(self, guild: discord.Guild) -> None:
        if not self.settings.purge_on_guild_leave:
            log.info(
                "left guild %s; its data is kept (AWAI_DISCORD__PURGE_ON_GUILD_LEAVE)", guild.id
            )
            return
        known = [channel.id for channel in guild.channels] + [thread.id for thread in guild.threads]
        await asyncio.to_thread(purge_guild, self.runtime, guild.id, known)

    async def _delete(self, guild_id: int, channel_id: int, message_ids: list[int]) -> None:
        """Delete everywhere: in the message's channel, or in every channel of the guild when the
        channel can no longer be resolved (a deleted thread): ids are unique across Discord."""
        guild = self.bot.get_guild(guild_id)
        channel = await self._channel(guild, channel_id) if guild else None
        if channel is not None:
            keys = [line_of(channel).key]
        else:
            prefix = guild_prefix(guild_id)
            keys = [
                key
                for key in await asyncio.to_thread(self.runtime.channels)
                if key.startswith(prefix)
            ]

        def delete_all() -> None:
            for key in keys:
                for message_id in message_ids:
                    self.runtime.engine.delete(key, str(message_id))

        await asyncio.to_thread(delete_all)
        for key in keys:
            await redact_posts(self.bot, self.runtime, key)

    async def _channel(
        self, guild: discord.Guild | None, channel_id: int
    ) -> access.Readable | None:
        if guild is None:
            return None
        try:
            return await access.resolve_channel(self.bot, guild, channel_id)
        except ReadRefused:
            log.info("channel %s of guild %s cannot be resolved", channel_id, guild.id)
            return None

    # -- readings ------------------------------------------------------------------------------

    async def read_with_awai(
        self, interaction: discord.Interaction, message: discord.Message
    ) -> None:
        """The "Read with AWAI" message menu."""
        link = MessageLink(
            message_id=message.id, channel_id=message.channel.id, guild_id=interaction.guild_id
        )
        await self._answer_reading(interaction, link)

    @awai.command(name="read", description="Read a message in the context of what came before it.")
    @app_commands.describe(message="A message link (“Copy Message Link”) or a message id here.")
    async def read(self, interaction: discord.Interaction, message: str) -> None:
        try:
            link = parse_message_link(message)
        except MalformedLinkError as error:
            await self._refuse_now(interaction, str(error))
            return
        await self._answer_reading(interaction, link)

    async def _answer_reading(self, interaction: discord.Interaction, link: MessageLink) -> None:
        guild = interaction.guild
        if guild is None:
            await self._refuse_now(interaction, "AWAI reads server channels only.")
            return
        channel_id = link.channel_id or interaction.channel_id
        assert channel_id is not None  # a guild interaction always has a channel
        ephemeral = self.settings.ephemeral_readings
        here = channel_id == interaction.channel_id
        try:  # what can be checked on the command's own data, before acknowledging it
            access.check_same_guild(link, guild.id)
            access.check_shown_where_it_belongs(channel_id, interaction.channel_id, ephemeral)
            if here:
                access.check_may_read_here(interaction)
        except ReadRefused as refusal:
            await self._refuse_now(interaction, str(refusal))
            return
        if not await self._acknowledge(interaction, ephemeral):
            return
        try:
            channel = await access.resolve_channel(self.bot, guild, channel_id)
            if not here:
                await access.check_may_read_there(interaction, channel)
            line = line_of(channel)
            stored = await asyncio.to_thread(self.runtime.engine.scopes_of, line.key)
            scopes = await access.asker_scopes(self.bot, interaction, stored, not ephemeral)
            if not await self._first_request(interaction.user.id, line, link.message_id):
                raise ReadRefused(
                    "A reading of that message for you is already on its way (or was just"
                    " posted); ask again in a minute for a new one."
                )
            reading = await asyncio.to_thread(
                self.runtime.engine.read, line.key, str(link.message_id), scopes
            )
        except ReadRefused as refusal:
            await interaction.followup.send(str(refusal), ephemeral=True)
            return
        except UnknownMessageError:
            await interaction.followup.send(
                "AWAI has not read that message: it may be older than AWAI in this channel (someone"
                " who can manage messages can run `/awai backfill`), or have no words to read"
                " (images, stickers and bots' messages are not read), or have been deleted.",
                ephemeral=True,
            )
            return
        buttons = reading_buttons(channel.id, link.message_id, reading.language)
        sent = await interaction.followup.send(
            embed=reading_embed(reading),
            ephemeral=ephemeral,
            wait=True,
            **({"view": buttons} if ephemeral else {}),
        )
        if not ephemeral:  # a post everyone sees: on the record of what it quotes
            await asyncio.to_thread(self.runtime.posts.reading, reading, post_of(line.key, sent))

    async def _first_request(self, user_id: int, line: Line, message_id: int) -> bool:
        key = f"discord:read:{user_id}:{line.key}:{message_id}"
        return await asyncio.to_thread(self.runtime.claim, key, DUPLICATE_WINDOW_SECONDS)

    # -- the other commands --------------------------------------------------------------------

    @awai.command(name="backfill", description="Read this channel's earlier messages into AWAI.")
    async def backfill_command(self, interaction: discord.Interaction) -> None:
        channel = interaction.channel
        if not isinstance(channel, History):
            await self._refuse_now(
                interaction, "AWAI can read the history of text channels and threads only."
            )
            return
        if not (
            interaction.user.id in self.settings.owner_ids
            or interaction.permissions.manage_messages
        ):
            await self._refuse_now(
                interaction, "Backfill is for people who may manage messages in this channel."
            )
            return
        if not access.may_read_history(interaction.app_permissions):
            await self._refuse_now(
                interaction, "AWAI needs the “Read Message History” permission in this channel."
            )
            return
        running = self._backfills.get(channel.id)
        if running is not None and not running.done():
            await self._refuse_now(interaction, "A backfill of this channel is already running.")
            return
        if not await self._acknowledge(interaction, ephemeral=True):
            return
        try:
            status = await channel.send("AWAI is reading this channel's earlier messages…")
        except discord.HTTPException as error:
            await interaction.followup.send(
                f"AWAI cannot post its progress here ({error.text or error}); it needs the"
                " “Send Messages” permission.",
                ephemeral=True,
            )
            return
        await interaction.followup.send(
            f"Backfill started; progress is shown in {status.jump_url}.", ephemeral=True
        )
        self._backfills[channel.id] = asyncio.create_task(self._run_backfill(channel, status))

    def running_backfill(self, channel_id: int) -> asyncio.Task[BackfillProgress | None] | None:
        """The backfill task of a channel, while one runs (or has just finished)."""
        return self._backfills.get(channel_id)

    async def _run_backfill(
        self, channel: History, status: discord.Message
    ) -> BackfillProgress | None:
        reporter = _StatusReporter(status)
        try:
            return await backfill(
                channel, self.runtime, reporter.update, self.settings.backfill_page_size
            )
        except discord.HTTPException as error:
            log.warning("backfill of %s stopped: %s", channel.id, error)
            await reporter.say(
                f"AWAI stopped reading this channel's history ({error.text or error})."
                " Run `/awai backfill` again to go on from where it stopped."
            )
            return None

    @awai.command(name="digest", description="Each speaker's preconceptions here, with a map.")
    async def digest(self, interaction: discord.Interaction) -> None:
        channel = interaction.channel
        if not isinstance(channel, History):
            await self._refuse_now(interaction, "AWAI makes digests of text channels only.")
            return
        try:
            access.check_may_read_here(interaction)
        except ReadRefused as refusal:
            await self._refuse_now(interaction, str(refusal))
            return
        ephemeral = self.settings.ephemeral_readings
        if not await self._acknowledge(interaction, ephemeral):
            return
        key = line_of(channel).key
        try:
            stored = await asyncio.to_thread(self.runtime.engine.scopes_of, key)
            scopes = await access.asker_scopes(self.bot, interaction, stored, not ephemeral)
            # A private digest is one person's look: it does not move the point that the next
            # shared digest reports its changes from.
            digest, embed, files = await asyncio.to_thread(
                self._digest_message, key, _channel_title(channel), not ephemeral, scopes
            )
        except ReadRefused as refusal:
            await interaction.followup.send(str(refusal), ephemeral=True)
            return
        except UnknownChannelError:
            await interaction.followup.send(
                "AWAI has not read anything in this channel yet.", ephemeral=True
            )
            return
        sent = await interaction.followup.send(
            embed=embed, files=files, ephemeral=ephemeral, wait=True
        )
        if not ephemeral:
            await asyncio.to_thread(self.runtime.posts.digest, digest, [post_of(key, sent)])

    def _digest_message(
        self, key: str, title: str, record: bool, scopes: Scopes
    ) -> tuple[Digest, discord.Embed, list[discord.File]]:
        """The digest of a channel as ``scopes`` may see it, ready to post (blocking: run it in a
        worker thread)."""
        digest = self.runtime.schemas.digest(key, scopes, record=record)
        embed, files = digest_message(
            digest, f"Preconceptions digest · {title}", self._example_refs(key, digest)
        )
        return digest, embed, files

    def _example_refs(self, key: str, digest: Digest) -> dict[str, MessageRef]:
        """Where each example of the digest was posted, for its jump link (blocking)."""
        examples = {
            example.message_id
            for speaker in digest.speakers
            for schema in speaker.schemas
            for example in schema.examples
        }
        return self.runtime.message_refs(key, examples)

    # -- scheduled digests ---------------------------------------------------------------------

    async def schedule_digests(self, scheduler: SchedulerService) -> None:
        """Make the scheduler's Discord digests what ``discord.digest_schedule`` says: add or
        replace the configured ones, remove those no longer configured."""
        wanted: dict[str, str] = {}
        for channel_id, crontab in self.settings.digest_schedule.items():
            try:
                channel = await self.bot.fetch_channel(channel_id)
            except discord.HTTPException as error:
                log.error(
                    "AWAI_DISCORD__DIGEST_SCHEDULE names channel %s, which AWAI cannot see (%s);"
                    " its digest is not scheduled",
                    channel_id,
                    error,
                )
                continue
            if not isinstance(channel, History):
                log.error("AWAI_DISCORD__DIGEST_SCHEDULE: %s is not a text channel", channel_id)
                continue
            wanted[line_of(channel).key] = crontab
        for poster, key, _ in scheduler.digest_schedules():
            if poster == DIGEST_POSTER and key not in wanted:
                scheduler.unschedule_digest(key, DIGEST_POSTER)
        for key, crontab in wanted.items():
            try:
                scheduler.schedule_digest(key, DIGEST_POSTER, cron=crontab)
            except ValueError as error:
                log.error("AWAI_DISCORD__DIGEST_SCHEDULE: %r is not a crontab: %s", crontab, error)

    def post_scheduled_digest(self, key: str, digest: Digest) -> None:
        """The scheduler's poster (called in a scheduler thread): hop onto the bot's loop to post."""
        parsed = parse_channel_key(key)
        if parsed is None:
            return
        claim = f"discord:scheduled-digest:{key}"
        if not self.runtime.claim(claim, SCHEDULED_DIGEST_WINDOW_SECONDS):
            log.info("digest of %s already posted by another process", key)
            return
        refs = self._example_refs(key, digest)
        posting = asyncio.run_coroutine_threadsafe(
            self._post_digest(parsed[0], parsed[1], digest, refs), self.bot.loop
        )
        posting.result(timeout=120)

    async def _post_digest(
        self, guild_id: int, channel_id: int, digest: Digest, refs: dict[str, MessageRef]
    ) -> None:
        channel = self.bot.get_channel(channel_id) or await self.bot.fetch_channel(channel_id)
        if not isinstance(channel, History) or channel.guild.id != guild_id:
            log.error(
                "digest of %s not posted: the channel is not a text channel here", digest.channel
            )
            return
        embed, files = digest_message(
            digest, f"Preconceptions digest · {_channel_title(channel)}", refs
        )
        sent = await channel.send(embed=embed, files=files)
        await asyncio.to_thread(self.runtime.posts.digest, digest, [post_of(digest.channel, sent)])

    @awai.command(name="forget-me", description="Remove what you said in this channel from AWAI.")
    async def forget_me(self, interaction: discord.Interaction) -> None:
        channel = interaction.channel
        if not isinstance(channel, History):
            await self._refuse_now(interaction, "AWAI keeps data of text channels only.")
            return
        if not await self._acknowledge(interaction, ephemeral=True):
            return
        key = line_of(channel).key
        try:
            report = await asyncio.to_thread(
                self.runtime.schemas.forget_speaker, key, str(interaction.user.id)
            )
        except UnknownChannelError:
            await interaction.followup.send(
                "AWAI keeps nothing of this channel, so nothing of yours.", ephemeral=True
            )
            return
        await redact_posts(self.bot, self.runtime, key)
        await interaction.followup.send(
            f"Done. AWAI removed {report.messages:,} of your messages in this channel (their"
            f" thoughts and vectors with them) and {report.schema_versions:,} versions of your"
            " preconceptions made from them; they will not be read again, even by a backfill."
            " What you write here from now on is read as before.",
            ephemeral=True,
        )

    @awai.command(name="help", description="What AWAI does, its commands, and what it cannot see.")
    async def help(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message(embed=help_embed(READ_MENU_NAME), ephemeral=True)

    # -- plumbing ------------------------------------------------------------------------------

    async def _acknowledge(self, interaction: discord.Interaction, ephemeral: bool) -> bool:
        """Defer with "thinking"; ``False`` when another process already answered it."""
        try:
            await interaction.response.defer(thinking=True, ephemeral=ephemeral)
        except discord.HTTPException as error:
            if error.code == ALREADY_ACKNOWLEDGED:
                return False
            raise
        return True

    async def _refuse_now(self, interaction: discord.Interaction, text: str) -> None:
        await interaction.response.send_message(text, ephemeral=True)

    async def cog_app_command_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        log.exception(
            "command %s failed",
            interaction.command and interaction.command.qualified_name,
            exc_info=error,
        )
        text = "Something went wrong on AWAI's side; it has been logged. Please try again later."
        if interaction.response.is_done():
            await interaction.followup.send(text, ephemeral=True)
        else:
            await interaction.response.send_message(text, ephemeral=True)


class _StatusReporter:
    """Backfill progress shown by editing one status message, at most every few seconds."""

    def __init__(self, status: discord.Message) -> None:
        self.status = status
        self.last_edit = float("-inf")

    async def update(self, progress: BackfillProgress) -> None:
        now = time.monotonic()
        if not progress.done and now - self.last_edit < STATUS_EDIT_INTERVAL_SECONDS:
            return
        self.last_edit = now
        if progress.done:
            text = (
                f"AWAI has read this channel's history: {progress.fetched:,} messages looked at,"
                f" {progress.added:,} new stored."
            )
        else:
            text = (
                f"AWAI is reading this channel's earlier messages… {progress.fetched:,} so far"
                f" ({progress.added:,} new)."
            )
        await self.say(text)

    async def say(self, text: str) -> None:
        try:
            await self.status.edit(content=text)
        except discord.HTTPException as error:
            log.info("backfill status not updated: %s", error)


def _channel_title(channel: History) -> str:
    """How people know the channel; a thread's digest is its parent channel's."""
    parent = channel.parent if isinstance(channel, discord.Thread) else None
    return f"#{(parent or channel).name}"
