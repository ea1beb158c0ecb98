"""The Discord client: intents, the message content check, the cog, and the explicit command sync.

Intents: guilds (channels, threads, roles: enough to resolve names and permissions), guild
messages, and the privileged message content intent, without which Discord sends messages with
empty text. Command sync is never done on connect: it is an explicit step (``awai discord --sync``)
because Discord rate-limits it and a sync on every start is how bots get their commands throttled.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import Any

import discord
from discord.ext import commands

from bots.actions.digest import scheduled_poster, scheduled_title
from bots.discord.cog import AwaiCog
from bots.discord.digests import DIGEST_POSTER
from bots.discord.ingest import lacks_expected_text
from bots.discord.interactions import AwaiTree
from bots.discord.mentions import answer_command_error
from bots.discord.share import ReadingButton
from bots.runtime import Runtime
from bots.scheduler import SchedulerService

log = logging.getLogger(__name__)

PORTAL_HINT = (
    "Turn on “Message Content Intent” in the Discord Developer Portal (your application → Bot →"
    " Privileged Gateway Intents), then restart `awai discord`. See manifest/discord.md."
)


def intents() -> discord.Intents:
    return discord.Intents(guilds=True, guild_messages=True, message_content=True)


class MessageContentCheck:
    """Says clearly, once, when Discord is withholding message text from the bot.

    At start: the application's flags say whether the privileged intent is enabled in the portal.
    While running: a person's message that arrives with no words and nothing else can only be a
    message whose text Discord withheld (see :func:`bots.discord.ingest.lacks_expected_text`).
    """

    def __init__(self) -> None:
        self.warned = False

    def check_at_start(self, client: discord.Client) -> bool:
        """``True`` when the bot asks for message content and the portal allows it."""
        if not client.intents.message_content:
            self._warn("The bot does not request the message content intent. " + PORTAL_HINT)
            return False
        flags = client.application_flags
        if not (flags.gateway_message_content or flags.gateway_message_content_limited):
            self._warn(
                "The Message Content Intent is off for this application, so Discord will send"
                " messages without their text and AWAI will have nothing to read. " + PORTAL_HINT
            )
            return False
        return True

    def observe(self, message: discord.Message) -> bool:
        """``True`` (and a warning, the first time) when the message's text was withheld."""
        if not lacks_expected_text(message):
            return False
        if not self.warned:
            self._warn(
                f"Message {message.id} from {message.author} arrived with no text: Discord is"
                " withholding message content from AWAI. " + PORTAL_HINT
            )
        return True

    def _warn(self, text: str) -> None:
        self.warned = True
        log.warning(text)


class AwaiBot(commands.Bot):
    """The bot: one cog with the listeners and commands, and nothing that pings anyone.

    With a ``scheduler`` (``awai discord`` always gives one) the bot registers its digest poster,
    schedules the digests the settings ask for, and runs the scheduler (re-clustering included)
    in this process, stopping it when the bot closes.
    """

    def __init__(self, runtime: Runtime, scheduler: SchedulerService | None = None) -> None:
        super().__init__(
            command_prefix=commands.when_mentioned,
            tree_cls=AwaiTree,
            intents=intents(),
            help_command=None,
            allowed_mentions=discord.AllowedMentions.none(),
        )
        self.runtime = runtime
        self.scheduler = scheduler
        self.content_check = MessageContentCheck()

    async def setup_hook(self) -> None:
        self.content_check.check_at_start(self)
        cog = AwaiCog(self, self.runtime, self.content_check.observe)
        await self.add_cog(cog)
        self.add_dynamic_items(ReadingButton)  # a private reading's buttons
        if self.scheduler is not None:
            board_of = cog.digests.board_of
            poster = scheduled_poster(self.runtime, board_of)
            self.scheduler.add_digest_poster(DIGEST_POSTER, poster, scheduled_title(board_of))
            await cog.schedule_digests(self.scheduler)
            self.scheduler.start()

    async def on_command_error(
        self, context: commands.Context[Any], exception: commands.CommandError, /
    ) -> None:
        """``@AWAI …`` that is no command, or failed: answered (never a traceback on stderr)."""
        await answer_command_error(context, exception)

    async def close(self) -> None:
        if self.scheduler is not None:
            await asyncio.to_thread(self.scheduler.shutdown)
        await super().close()


async def sync_commands(bot: commands.Bot, guild_id: int | None = None) -> list[str]:
    """Register the commands with Discord (globally, or in one guild at once); returns their names.

    Global commands can take up to an hour to appear everywhere; a guild sync is immediate, which
    is what to use while trying AWAI out in one server.
    """
    if guild_id is None:
        synced = await bot.tree.sync()
    else:
        guild = discord.Object(guild_id)
        bot.tree.copy_global_to(guild=guild)
        synced = await bot.tree.sync(guild=guild)
    return [command.name for command in synced]


async def sync_once(runtime: Runtime, token: str, guild_id: int | None = None) -> list[str]:
    """Log in (no gateway connection), register the commands, log out: ``awai discord --sync``."""
    async with AwaiBot(runtime) as bot:
        await bot.login(token)
        return await sync_commands(bot, guild_id)


async def clear_guild_commands(runtime: Runtime, token: str, guild_id: int) -> None:
    """Remove the commands registered in one guild only: ``awai discord --clear-guild ID``.

    Why: ``--sync --guild`` (quick, for trying AWAI out) and then a global ``--sync`` leave both
    registrations in that server, so Discord shows every command twice. The global ones stay.
    """
    async with AwaiBot(runtime) as bot:
        await bot.login(token)
        guild = discord.Object(guild_id)
        bot.tree.clear_commands(guild=guild)
        await bot.tree.sync(guild=guild)


async def serve(runtime: Runtime, token: str) -> None:
    """Run the bot, and the scheduler in the same process, until stopped: ``awai discord``.

    SIGTERM (systemd, ``docker stop``) closes the bot as Ctrl-C does: the gateway connection and
    the scheduler are closed, and the caller closes the store.
    """
    async with AwaiBot(runtime, SchedulerService(runtime)) as bot:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, lambda: loop.create_task(bot.close()))
        try:
            await bot.start(token)
        finally:
            loop.remove_signal_handler(signal.SIGTERM)
