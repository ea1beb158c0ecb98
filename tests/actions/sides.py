"""One chat platform as an action test sees it: say something, ask as someone, look at what
people were shown. :class:`SlackSide` and :class:`DiscordSide` drive the real adapters'
implementations of the actions' port against the mock Slack and fake Discord servers."""

from __future__ import annotations

import json
from typing import Protocol

import discord

from bots.actions.backfill import Asker, History
from bots.actions.backfill_status import Status
from bots.actions.catchup import Workspace
from bots.actions.digest import Board
from bots.actions.platform import Platform, PostEditor
from bots.actions.redact import REMOVED_NOTICE
from bots.discord import messages as discord_messages
from bots.discord.backfill import DiscordHistory
from bots.discord.backfill import refusal_of as discord_refusal
from bots.discord.backfills import DiscordStatus, DiscordStatusWords, Moderating
from bots.discord.bridge import OnLoop
from bots.discord.catchup import DiscordServer
from bots.discord.digests import DiscordBoard
from bots.discord.embeds import reading_embed
from bots.discord.keys import channel_key, guild_prefix
from bots.discord.platform import DiscordAsking, DiscordPosts
from bots.runtime import Runtime
from bots.slack.access import ChannelAsker
from bots.slack.backfill import BackfillRequest, SlackHistory, SlackStatusWords, StatusMessage
from bots.slack.backfill import refusal_of as slack_refusal
from bots.slack.catchup import SlackWorkspace
from bots.slack.digests import SlackBoard
from bots.slack.ingest import workspace_prefix
from bots.slack.platform import ReadingRequest, SlackAsking, SlackPosts
from tests.discord import payloads
from tests.discord.conftest import Harness
from tests.discord.payloads import SNOWFLAKES
from tests.slack.conftest import ANN, BEN, CAT, GENERAL, GENERAL_KEY, SECRET, SlackHarness
from tests.slack.mock_slack_api import BOT_USER_ID, TEAM_ID


class Side(Protocol):
    """A platform with one channel where the speaker said things and the reader may read."""

    runtime: Runtime
    channel: str
    prefix: str
    speaker: str
    read_command: str
    """``@AWAI read`` as the platform writes it in a message."""

    async def said(self, text: str, stored: bool = True) -> str:
        """The speaker says ``text`` in the channel (stored by AWAI, or not yet); its id."""

    async def said_live(self, text: str) -> str:
        """The speaker says ``text`` in the channel, arriving as the platform reports a new
        message (the listener run to its end); its id."""

    async def edited(self, message_id: str, text: str) -> None:
        """The speaker edits a message of theirs into ``text``, as the platform reports it live
        (the event handled to its end)."""

    def asking(self, message_id: str) -> Platform:
        """The reader asking about one message of the channel."""

    async def outsider_asking(self) -> Platform:
        """Someone asking about a message of a place they may not read."""

    def posts(self) -> PostEditor: ...

    def refuse_private(self, refused: bool) -> None:
        """Make the platform refuse (or accept again) to show the reader anything privately."""

    def history(self, status: Status | None = None) -> History:
        """The channel's history, as a backfill reads it, two messages a page, showing its
        progress on ``status`` (else on nothing)."""

    async def status(self) -> Status:
        """A backfill's status message, posted in the channel as the platform's backfill posts
        it, with the platform's words."""

    def statuses(self) -> list[str]:
        """The texts the status message was given, in order (the first is the posted one)."""

    def backfill_asker(self, manages: bool) -> Asker:
        """Someone asking for the channel's history: one who manages the channel, or a member
        who does not."""

    def workspace(self) -> Workspace:
        """The workspace or server of the channel, as a catch-up reads it."""

    def board(self) -> Board:
        """The channel, as digests are posted on it."""

    def private(self) -> list[str]:
        """What the reader was shown privately."""

    def public(self) -> list[str]:
        """What AWAI posted for everyone."""

    def redacted(self) -> list[str]:
        """The ids of AWAI's posts whose text was replaced by the removal notice."""


class SlackSide:
    def __init__(self, harness: SlackHarness) -> None:
        self.harness = harness
        self.runtime = harness.runtime
        self.channel = GENERAL_KEY
        self.prefix = workspace_prefix(TEAM_ID)
        self.speaker = ANN
        self.read_command = f"<@{BOT_USER_ID}> read"

    async def said(self, text: str, stored: bool = True) -> str:
        if stored:
            return self.harness.seed([(ANN, text)])[0]["ts"]
        return self.harness.api.add_message(GENERAL, ANN, text)["ts"]

    async def said_live(self, text: str) -> str:
        message = self.harness.api.add_message(GENERAL, ANN, text)
        self.harness.deliver_message_event(message)
        self.harness.settle()
        return str(message["ts"])

    async def edited(self, message_id: str, text: str) -> None:
        original = self.harness.api.find(GENERAL, message_id)
        assert original is not None
        edited_ts = self.harness.api.next_ts()
        now = {**original, "text": text, "edited": {"user": ANN, "ts": edited_ts}}
        changed = {"type": "message", "subtype": "message_changed", "channel": GENERAL}
        event = {**changed, "message": now, "previous_message": original, "ts": edited_ts}
        self.harness.send(self.harness.requests.event(event))
        self.harness.settle()

    def asking(self, message_id: str) -> Platform:
        return self._asking(GENERAL, message_id, BEN)

    async def outsider_asking(self) -> Platform:
        secret = self.harness.seed([(BEN, "Only the two of us know this.")], channel=SECRET)[0]
        return self._asking(SECRET, secret["ts"], CAT)

    def _asking(self, channel_id: str, ts: str, asker: str) -> SlackAsking:
        request = ReadingRequest(TEAM_ID, channel_id, ts, asker, BOT_USER_ID)
        bot = self.harness.bot
        return SlackAsking(request, bot.app.client, bot.services.directory)

    def posts(self) -> PostEditor:
        return SlackPosts(self.harness.bot.app.client)

    def refuse_private(self, refused: bool) -> None:
        if refused:  # Slack's refusals are planned once
            self.harness.api.fail("chat.postEphemeral", status=200, error="channel_not_found")

    def history(self, status: Status | None = None) -> History:
        client = self.harness.bot.app.client
        request = BackfillRequest(TEAM_ID, GENERAL, BOT_USER_ID)
        backfills = self.harness.bot.services.backfills
        return SlackHistory(backfills, request, client, status or _unseen())

    async def status(self) -> Status:
        message = StatusMessage(self.harness.bot.app.client, GENERAL)
        return Status(GENERAL_KEY, message, SlackStatusWords(), slack_refusal)

    def statuses(self) -> list[str]:
        posted = [c.params["text"] for c in self.harness.api.calls_to("chat.postMessage")]
        return posted[:1] + [c.params["text"] for c in self.harness.api.calls_to("chat.update")]

    def backfill_asker(self, manages: bool) -> Asker:
        client = self.harness.bot.app.client
        return ChannelAsker(client, GENERAL, ANN if manages else CAT)  # ANN created it

    def workspace(self) -> Workspace:
        services = self.harness.bot.services
        return SlackWorkspace(services.catchup, self.harness.bot.app.client, TEAM_ID, BOT_USER_ID)

    def board(self) -> Board:
        bot = self.harness.bot
        return SlackBoard(bot.services.directory, bot.app.client, TEAM_ID, GENERAL)

    def private(self) -> list[str]:
        calls = self.harness.api.calls_to("chat.postEphemeral")
        return [self.harness.blocks_text(call) for call in calls if call.params["user"] == BEN]

    def public(self) -> list[str]:
        return [self.harness.blocks_text(c) for c in self.harness.api.calls_to("chat.postMessage")]

    def redacted(self) -> list[str]:
        updates = self.harness.api.calls_to("chat.update")
        return [c.params["ts"] for c in updates if c.params["text"] == REMOVED_NOTICE]


class DiscordSide:
    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.runtime = harness.runtime
        self.channel = channel_key(payloads.GUILD_ID, payloads.CHANNEL_ID)
        self.prefix = guild_prefix(payloads.GUILD_ID)
        self.speaker = str(payloads.ANN_ID)
        self.read_command = f"<@{payloads.APPLICATION_ID}> read"

    async def said(self, text: str, stored: bool = True) -> str:
        data = payloads.message(SNOWFLAKES.next(), author=payloads.ANN, content=text)
        self.harness.server.messages.setdefault(payloads.CHANNEL_ID, []).append(data)
        if stored:
            await self.harness.post(data)
        return data["id"]

    async def said_live(self, text: str) -> str:
        return await self.said(text)  # stored through the cog's on_message

    async def edited(self, message_id: str, text: str) -> None:
        (data,) = [
            m for m in self.harness.server.messages[payloads.CHANNEL_ID] if m["id"] == message_id
        ]
        now = {**data, "content": text, "edited_timestamp": payloads.iso_now()}
        await self.harness.cog.on_raw_message_edit(
            discord.RawMessageUpdateEvent(data=now, message=self.harness.message(now))  # type: ignore[arg-type]
        )

    def asking(self, message_id: str) -> Platform:
        channel = self.harness.guild.get_channel(payloads.CHANNEL_ID)
        assert isinstance(channel, discord.TextChannel)
        return self._asking(channel, int(message_id), payloads.BOB)

    async def outsider_asking(self) -> Platform:
        thread_id = self.harness.private_thread(payloads.CAROL_ID)
        thread = self.harness.guild.get_thread(thread_id)
        assert thread is not None
        return self._asking(thread, SNOWFLAKES.next(), payloads.BOB)

    def _asking(self, channel: discord.abc.GuildChannel | discord.Thread, message_id: int, who):  # type: ignore[no-untyped-def]
        member = self.harness.message(payloads.message(SNOWFLAKES.next(), author=who)).author
        assert isinstance(member, discord.Member)

        async def by_direct_message(reading, shared_url):  # type: ignore[no-untyped-def]
            await member.send(embed=reading_embed(reading))

        bot = self.harness.bot
        return DiscordAsking(
            OnLoop.here(), bot, bot.runtime, member, channel, message_id, by_direct_message
        )

    def posts(self) -> PostEditor:
        return DiscordPosts(OnLoop.here(), self.harness.bot)

    def refuse_private(self, refused: bool) -> None:
        if refused:
            self.harness.server.dms_closed.add(payloads.BOB_ID)
        else:
            self.harness.server.dms_closed.discard(payloads.BOB_ID)

    def history(self, status: Status | None = None) -> History:
        channel = self.harness.guild.get_channel(payloads.CHANNEL_ID)
        assert isinstance(channel, discord.TextChannel)
        show = (status or _unseen()).show
        return DiscordHistory(OnLoop.here(), channel, show, self.channel, None, page_size=2)

    async def status(self) -> Status:
        channel = self.harness.guild.get_channel(payloads.CHANNEL_ID)
        assert isinstance(channel, discord.TextChannel)
        posted = await channel.send(discord_messages.BACKFILL_STARTING)
        message = DiscordStatus(OnLoop.here(), posted)
        return Status(self.channel, message, DiscordStatusWords(), discord_refusal)

    def statuses(self) -> list[str]:
        posted = [d for d in self.harness.server.public() if d.route == "channel"]
        edits = self.harness.server.calls("PATCH", "/messages/")
        return [posted[0].content, *(r.body["content"] for r in edits)]  # type: ignore[index]

    def backfill_asker(self, manages: bool) -> Asker:
        allowed = payloads.VIEW_AND_HISTORY | (payloads.MANAGE_MESSAGES if manages else 0)
        data = payloads.interaction(data=payloads.slash("backfill"), permissions=allowed)
        asked = discord.Interaction(data=data, state=self.harness.bot._connection)  # type: ignore[arg-type]
        return Moderating(asked, owner_ids=())

    def workspace(self) -> Workspace:
        return DiscordServer(OnLoop.here(), self.harness.guild, self.runtime)

    def board(self) -> Board:
        channel = self.harness.guild.get_channel(payloads.CHANNEL_ID)
        assert isinstance(channel, discord.TextChannel)
        return DiscordBoard(OnLoop.here(), channel)

    def private(self) -> list[str]:
        shown = self.harness.server.private(payloads.BOB_ID)
        return [json.dumps(d.embeds, ensure_ascii=False) for d in shown]

    def public(self) -> list[str]:
        shown = [d for d in self.harness.server.public() if d.route == "channel"]
        return [json.dumps(d.embeds, ensure_ascii=False) for d in shown]

    def redacted(self) -> list[str]:
        edits = self.harness.server.calls("PATCH", "/messages/")
        return [
            r.path.rsplit("/", 1)[-1]
            for r in edits
            if isinstance(r.body, dict) and r.body.get("content") == REMOVED_NOTICE
        ]


class _Nowhere:
    """A status message nobody sees (a backfill whose progress the test does not look at)."""

    def say(self, text: str) -> None:
        pass


def _unseen() -> Status:
    return Status("unseen", _Nowhere(), SlackStatusWords(), slack_refusal)
