"""A logged-in AWAI bot against the fake Discord API, with the test guild in its cache.

The bot is the real one (``AwaiBot``): ``login`` runs discord.py's own start-up (``/users/@me``,
the application info, ``setup_hook`` loading the cog) against the fake server; only the gateway
connection is left out. Gateway events are fed as the payloads Discord sends, turned into
discord.py objects by discord.py itself, and interactions go through the bot's command tree.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import discord
import pytest

from awai_engine.values import Utterance
from bots.discord.bot import AwaiBot
from bots.discord.cog import AwaiCog
from bots.discord.keys import channel_key
from bots.runtime import Runtime
from bots.scheduler import SchedulerService
from tests.discord import payloads
from tests.discord.fake_discord import FakeDiscord
from tests.discord.payloads import SNOWFLAKES

KEY = channel_key(payloads.GUILD_ID, payloads.CHANNEL_ID)


@pytest.fixture
def fake_discord() -> Iterator[FakeDiscord]:
    server = FakeDiscord()
    server.start()
    original = discord.http.Route.BASE
    discord.http.Route.BASE = server.base
    try:
        yield server
    finally:
        discord.http.Route.BASE = original
        server.stop()


class Harness:
    """One running bot, its runtime, and ways to feed it what Discord would send."""

    def __init__(self, bot: AwaiBot, server: FakeDiscord) -> None:
        self.bot = bot
        self.server = server

    @property
    def runtime(self) -> Runtime:
        return self.bot.runtime

    @property
    def cog(self) -> AwaiCog:
        cog = self.bot.get_cog("AwaiCog")
        assert isinstance(cog, AwaiCog)
        return cog

    @property
    def guild(self) -> discord.Guild:
        guild = self.bot.get_guild(payloads.GUILD_ID)
        assert guild is not None
        return guild

    def message(self, data: dict[str, Any]) -> discord.Message:
        """The discord.py message of a payload, in the cached channel, as the gateway makes it."""
        channel = self.guild.get_channel_or_thread(int(data["channel_id"]))
        assert channel is not None
        return self.bot._connection.create_message(channel=channel, data=data)  # type: ignore[arg-type]

    async def post(self, *datas: dict[str, Any]) -> None:
        """Messages arriving live: each through the cog's ``on_message`` listener."""
        for data in datas:
            await self.cog.on_message(self.message(data))

    async def say(self, data: dict[str, Any]) -> None:
        """A MESSAGE_CREATE from the gateway through discord.py's own parser: every listener
        and the command processing it dispatches (``@AWAI read``), awaited to their end."""
        await self._dispatched(lambda: self.bot._connection.parse_message_create(data))  # type: ignore[arg-type]

    async def _dispatched(self, parse: Callable[[], None]) -> None:
        """Run ``parse`` and wait for what discord.py dispatches from it, and for the events
        those handlers dispatch in turn (``command_error``, say). Tasks the bot starts on its own
        (a backfill) are not waited for: tests wait for them where they mean to."""
        seen = asyncio.all_tasks()
        parse()
        while started := {t for t in asyncio.all_tasks() - seen if _dispatch_task(t)}:
            seen |= started
            done, pending = await asyncio.wait(started, timeout=120)
            assert not pending, "an event was still being handled after two minutes"
            for task in done:
                task.result()  # an exception that escaped discord.py's own handling

    async def interact(self, data: dict[str, Any]) -> None:
        """An INTERACTION_CREATE from the gateway, through discord.py's own parser and dispatch
        (the command tree's invoker task, or the view store for a button), awaited to its end.

        The fake server learns of the interaction at the same moment, so its token's 3-second
        and 15-minute clocks start now (on the fake's clock, which moves only when a test moves
        it)."""
        self.server.open_interaction(data)
        await self._dispatched(lambda: self.bot._connection.parse_interaction_create(data))  # type: ignore[arg-type]

    def private_thread(self, *members: int, parent: int = payloads.CHANNEL_ID) -> int:
        """A new private thread of ``parent`` whose only members are ``members``, in the bot's
        cache (as THREAD_CREATE puts it there) and on the fake server; its id."""
        thread_id = SNOWFLAKES.next()
        thread = payloads.thread(thread_id, parent, "secret", private=True)
        self.bot._connection.parse_thread_create(thread)  # type: ignore[attr-defined]
        self.server.add_channel(thread)
        self.server.thread_members[thread_id] = set(members)
        return thread_id

    def stored(self, key: str = KEY) -> dict[str, str]:
        """Stored message id → text, in channel order."""
        return {
            message.message_id: message.text
            for message in self.runtime.store.timeline(key).messages
        }

    def utterances(self, key: str = KEY) -> list[Utterance]:
        return [
            Utterance(
                channel=key,
                message_id=message.message_id,
                speaker_id=message.ref.speaker_id,
                speaker_name=message.ref.speaker_name,
                text=message.text,
                ts=message.ref.ts,
                thread_root=message.ref.thread_root,
                addressees=message.addressees,
            )
            for message in self.runtime.store.timeline(key).messages
        ]


DISPATCH_TASKS = ("discord.py: ", "CommandTree-invoker", "discord-ui-")
"""How discord.py names the tasks it runs handlers in: events, app commands, components."""


def _dispatch_task(task: asyncio.Task[Any]) -> bool:
    return task.get_name().startswith(DISPATCH_TASKS)


@pytest.fixture
async def start_bot(
    fake_discord: FakeDiscord, make_runtime: Callable[..., Runtime]
) -> AsyncIterator[Callable[..., Awaitable[Harness]]]:
    bots: list[AwaiBot] = []

    async def start(
        runtime: Runtime | None = None,
        scheduler: SchedulerService | None = None,
        **overrides: object,
    ) -> Harness:
        bot = AwaiBot(runtime or make_runtime(**overrides), scheduler)
        bots.append(bot)
        await bot.login("fake-token")
        bot._connection._add_guild_from_data(payloads.guild())  # type: ignore[arg-type]
        return Harness(bot, fake_discord)

    yield start
    for bot in bots:
        await bot.close()


@pytest.fixture
async def harness(start_bot: Callable[..., Awaitable[Harness]]) -> Harness:
    return await start_bot()
