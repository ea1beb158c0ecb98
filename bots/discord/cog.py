"""AWAI on Discord, as discord.py sees it: the listeners and commands, each a line or two.

The cog only wires Discord's events and commands to the modules that do the work, the way
python-discord keeps its cogs thin: :mod:`~bots.discord.sync` keeps the store in step with the
gateway, :mod:`~bots.discord.readings`, :mod:`~bots.discord.digests`,
:mod:`~bots.discord.backfills` and :mod:`~bots.discord.forget` answer the commands, and
:mod:`~bots.discord.messages` holds what AWAI says. Context menus cannot live in a cog, so the
"Read with AWAI" menu is built here and added to the command tree when the cog loads, and removed
when it unloads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bots.actions.backfill import BackfillProgress
from bots.commands import description
from bots.discord import forget
from bots.discord.backfills import Backfills
from bots.discord.catchup import CatchUp
from bots.discord.digests import Digests
from bots.discord.embeds import help_embed
from bots.discord.interactions import refuse_now
from bots.discord.links import MalformedLinkError, MessageLink, parse_message_link
from bots.discord.mentions import MentionReadings
from bots.discord.readings import Readings
from bots.discord.sync import StoreSync
from bots.runtime import Runtime

if TYPE_CHECKING:
    from bots.scheduler import SchedulerService

READ_MENU_NAME = "Read with AWAI"


class AwaiCog(commands.Cog):
    awai = app_commands.Group(
        name="awai",
        description="Read a message in the context of what was said before it, and only before it.",
        guild_only=True,
    )

    def __init__(
        self,
        bot: commands.Bot,
        runtime: Runtime,
        withheld: Callable[[discord.Message], bool],
    ) -> None:
        """``withheld``: whether Discord withheld a message's text (the bot's content check)."""
        self.bot = bot
        self.runtime = runtime
        self.sync = StoreSync(bot, runtime, withheld)
        self.readings = Readings(bot, runtime)
        self.mentions = MentionReadings(bot, runtime)
        self.digests = Digests(bot, runtime)
        self.backfills = Backfills(runtime)
        self.catch_up = CatchUp(bot, runtime)
        self.read_menu = app_commands.ContextMenu(
            name=READ_MENU_NAME,
            callback=self.read_with_awai,
            allowed_contexts=app_commands.AppCommandContext(guild=True),
        )

    async def cog_load(self) -> None:
        self.bot.tree.add_command(self.read_menu)

    async def cog_unload(self) -> None:
        self.bot.tree.remove_command(self.read_menu.name, type=self.read_menu.type)

    # -- the gateway: keeping the store in step ------------------------------------------------

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        await self.sync.message(message)

    @commands.Cog.listener()
    async def on_raw_message_edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        await self.sync.edit(payload)

    @commands.Cog.listener()
    async def on_raw_message_delete(self, payload: discord.RawMessageDeleteEvent) -> None:
        if payload.guild_id is not None:
            await self.sync.delete(payload.guild_id, payload.channel_id, [payload.message_id])

    @commands.Cog.listener()
    async def on_raw_bulk_message_delete(self, payload: discord.RawBulkMessageDeleteEvent) -> None:
        if payload.guild_id is not None:
            await self.sync.delete(
                payload.guild_id, payload.channel_id, sorted(payload.message_ids)
            )

    @commands.Cog.listener()
    async def on_raw_thread_delete(self, payload: discord.RawThreadDeleteEvent) -> None:
        await self.sync.thread_deleted(payload)

    @commands.Cog.listener()
    async def on_guild_available(self, guild: discord.Guild) -> None:
        await self.sync.guild_available(guild)
        self.catch_up.start(guild)

    @commands.Cog.listener()
    async def on_resumed(self) -> None:
        for guild in self.bot.guilds:
            self.catch_up.start(guild)

    @commands.Cog.listener()
    async def on_guild_channel_delete(self, channel: discord.abc.GuildChannel) -> None:
        await self.sync.channel_deleted(channel)

    @commands.Cog.listener()
    async def on_guild_remove(self, guild: discord.Guild) -> None:
        await self.sync.guild_left(guild)

    # -- commands ------------------------------------------------------------------------------

    async def read_with_awai(
        self, interaction: discord.Interaction, message: discord.Message
    ) -> None:
        """The "Read with AWAI" message menu."""
        link = MessageLink(
            message_id=message.id, channel_id=message.channel.id, guild_id=interaction.guild_id
        )
        await self.readings.answer(interaction, link, message)

    @awai.command(name="read", description=description("read"))
    @app_commands.describe(message="A message link (“Copy Message Link”) or a message id here.")
    async def read(self, interaction: discord.Interaction, message: str) -> None:
        try:
            link = parse_message_link(message)
        except MalformedLinkError as error:
            await refuse_now(interaction, str(error))
            return
        await self.readings.answer(interaction, link)

    @commands.command(name="read")
    @commands.guild_only()
    async def read_mention(
        self, ctx: commands.Context[commands.Bot], *, link: str | None = None
    ) -> None:
        """``@AWAI read [link]``: a reading asked for in a plain message (see mentions)."""
        await self.mentions.read(ctx, link)

    @awai.command(name="backfill", description=description("backfill"))
    async def backfill_command(self, interaction: discord.Interaction) -> None:
        await self.backfills.start(interaction)

    @awai.command(name="digest", description=description("digest"))
    async def digest(self, interaction: discord.Interaction) -> None:
        await self.digests.answer(interaction)

    @awai.command(name="forget-me", description=description("forget-me"))
    async def forget_me(self, interaction: discord.Interaction) -> None:
        await forget.forget_me(self.bot, self.runtime, interaction)

    @awai.command(name="help", description=description("help"))
    async def help(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message(embed=help_embed(READ_MENU_NAME), ephemeral=True)

    # -- for the bot and the scheduler ---------------------------------------------------------

    def running_backfill(self, channel_id: int) -> asyncio.Task[BackfillProgress | None] | None:
        """The backfill task of a channel, while one runs (or has just finished)."""
        return self.backfills.running(channel_id)

    async def schedule_digests(self, scheduler: SchedulerService) -> None:
        await self.digests.schedule(scheduler)
