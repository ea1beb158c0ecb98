"""Slack's side of catching up (:mod:`bots.actions.catchup`): on start, and on every Socket Mode
reconnect.

The channels are those AWAI is a member of (``users.conversations``). A channel's line is its
history after its last stored message, and the new replies of every thread whose root Slack shows
with a ``latest_reply`` after it (a reply to an older thread does not show in the channel's
history, so the history of the week before is scanned for such roots), fetched whole and stored
oldest first as one page: the last stored message only moves forward over a contiguous past, so
a crash midway resumes where storing stopped. Rate limits are honoured by the clients' retry
handler (``Retry-After``). An interrupted backfill is resumed through :class:`Backfills`, with
its status message in the channel.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bots.actions.backfill import BackfillProgress, Page, Start
from bots.actions.catchup import CaughtUp, catch_up
from bots.records import BackfillCursor, catch_up_key
from bots.runtime import Runtime
from bots.slack.backfill import BackfillRequest, Backfills, refusal_of
from bots.slack.directory import SlackDirectory
from bots.slack.history import thread_replies
from bots.slack.ingest import Message, channel_key, spoken_utterances
from bots.slack.workers import OnePerKey

PAGE = 200
THREAD_HORIZON_SECONDS = 7 * 24 * 3600.0
"""How far before the last stored message roots are looked for whose threads got new replies."""


class CatchUp:
    def __init__(self, runtime: Runtime, directory: SlackDirectory, backfills: Backfills) -> None:
        self.runtime = runtime
        self.directory = directory
        self.backfills = backfills
        self._workspaces = OnePerKey()

    def run(self, client: WebClient, team_id: str, bot_user_id: str | None) -> CaughtUp | None:
        """Catch up one workspace; ``None`` if a catch-up of it is already running here (the
        other workspaces are caught up meanwhile)."""
        with self._workspaces.run(team_id) as runs:
            if not runs:
                return None
            return catch_up(self.runtime, SlackWorkspace(self, client, team_id, bot_user_id))


@dataclass(frozen=True)
class SlackWorkspace:
    """A workspace as the catch-up action reads it."""

    catchup: CatchUp
    client: WebClient
    team_id: str
    bot_user_id: str | None

    @property
    def name(self) -> str:
        return f"workspace {self.team_id}"

    def places(self) -> Iterator[SlackChannel]:
        for channel_id in _member_channels(self.client):
            yield SlackChannel(self, channel_id)

    def refusal(self, error: Exception) -> str | None:
        return refusal_of(error)


@dataclass(frozen=True)
class SlackChannel:
    """One channel AWAI is a member of."""

    workspace: SlackWorkspace
    channel_id: str

    @property
    def key(self) -> str:
        return channel_key(self.workspace.team_id, self.channel_id)

    def resume_backfill(self) -> int:
        space = self.workspace
        request = BackfillRequest(space.team_id, self.channel_id, space.bot_user_id)
        outcome = space.catchup.backfills.backfill(request, space.client)
        return 0 if isinstance(outcome, str) else outcome

    def lines(self) -> Iterable[SlackLine]:
        since = self.workspace.catchup.runtime.latest_ts(self.key)
        return [] if since is None else [SlackLine(self, since)]


@dataclass(frozen=True)
class SlackLine:
    """A channel's messages after ``since`` with its threads' new replies: one page, oldest
    first, always from the newest stored message (so its cursor is only the action's)."""

    channel: SlackChannel
    since: float

    @property
    def key(self) -> str:
        return catch_up_key(self.channel.key)

    def start(self, saved: BackfillCursor | None) -> Start:
        return Start(None)

    def page(self, cursor: str | None) -> Page:
        space, channel_id = self.channel.workspace, self.channel.channel_id
        said: list[Message] = []
        for message in _history_since(
            space.client, channel_id, self.since - THREAD_HORIZON_SECONDS
        ):
            if float(message["ts"]) > self.since:
                said.append(message)
            is_root = message.get("thread_ts") == message.get("ts")
            if is_root and float(message.get("latest_reply") or 0) > self.since:
                said.extend(_replies_since(space.client, channel_id, message["ts"], self.since))
        unique = {message["ts"]: message for message in said}
        ordered = sorted(unique.values(), key=lambda message: float(message["ts"]))

        names = space.catchup.directory.names(space.client, space.team_id)
        utterances = spoken_utterances(ordered, space.team_id, channel_id, space.bot_user_id, names)
        return Page(utterances, len(utterances), None, last=True)

    def show(self, progress: BackfillProgress) -> None:
        """The catch-up action logs what a channel's lines stored."""


def _member_channels(client: WebClient) -> Iterator[str]:
    """The ids of every public and private channel the bot is a member of."""
    listed = client.users_conversations(
        types="public_channel,private_channel", exclude_archived=True, limit=PAGE
    )
    for page in listed:
        yield from (channel["id"] for channel in page.get("channels", []))


def _history_since(client: WebClient, channel_id: str, since: float) -> Iterator[Message]:
    listed = client.conversations_history(
        channel=channel_id, oldest=f"{since:.6f}", inclusive=False, limit=PAGE
    )
    for page in listed:
        yield from page.get("messages", [])


def _replies_since(client: WebClient, channel_id: str, root: str, since: float) -> list[Message]:
    replies: list[Message] = []
    try:
        replies.extend(thread_replies(client, channel_id, root, PAGE, after=since))
    except SlackApiError as error:
        if error.response.get("error") != "thread_not_found":  # else the root was deleted
            raise
    return replies
