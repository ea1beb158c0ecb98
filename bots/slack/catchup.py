"""Catching up on what was said while AWAI was away: on start, and on every Socket Mode reconnect.

For each channel AWAI is a member of (``users.conversations``) that it has read before, history
after the channel's last stored message is fetched, and so are the new replies of every thread
whose root Slack shows with a ``latest_reply`` after it (a reply to an older thread does not show
in the channel's history, so the history of the week before is scanned for such roots). Everything is fetched first,
then stored oldest first: the last stored message only moves forward over a contiguous past, so a
crash or a restart midway resumes where storing stopped, and storing twice changes nothing. Rate
limits are honoured by the clients' retry handler (``Retry-After``). A channel never read is left
to its backfill (``/awai backfill``, or the one started when AWAI joined), resumed here if it
was interrupted. Progress goes to the log, one line per channel with anything new.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bots.runtime import Runtime
from bots.slack.backfill import BackfillRequest, Backfills
from bots.slack.directory import SlackDirectory
from bots.slack.ingest import Message, channel_key, is_spoken, to_utterance

log = logging.getLogger(__name__)

PAGE = 200
THREAD_HORIZON_SECONDS = 7 * 24 * 3600.0
"""How far before the last stored message roots are looked for whose threads got new replies."""


@dataclass(frozen=True)
class CaughtUp:
    channels: int
    messages: int


class CatchUp:
    def __init__(self, runtime: Runtime, directory: SlackDirectory, backfills: Backfills) -> None:
        self.runtime = runtime
        self.directory = directory
        self.backfills = backfills
        self._running = threading.Lock()

    def run(self, client: WebClient, team_id: str, bot_user_id: str | None) -> CaughtUp | None:
        """Catch up one workspace; ``None`` if a catch-up of it is already running here."""
        if not self._running.acquire(blocking=False):
            return None
        try:
            return self._run(client, team_id, bot_user_id)
        finally:
            self._running.release()

    def _run(self, client: WebClient, team_id: str, bot_user_id: str | None) -> CaughtUp:
        stored = set(self.runtime.channels())
        channels = total = 0
        for channel_id in _member_channels(client):
            key = channel_key(team_id, channel_id)
            cursor = self.runtime.cursor(key)
            if cursor is not None and not cursor.done:
                log.info("Resuming the interrupted backfill of %s", key)
                self.backfills.run(BackfillRequest(team_id, channel_id, bot_user_id), client)
            if key not in stored:
                continue
            try:
                count = self._channel(client, team_id, channel_id, bot_user_id)
            except SlackApiError as error:
                log.warning("Catch-up of %s stopped: %s", key, error.response.get("error"))
                continue
            channels += 1
            total += count
            if count:
                log.info("Caught up %s: %d new message(s)", key, count)
        log.info("Caught up workspace %s: %d message(s) in %d channel(s)", team_id, total, channels)
        return CaughtUp(channels, total)

    def _channel(
        self, client: WebClient, team_id: str, channel_id: str, bot_user_id: str | None
    ) -> int:
        key = channel_key(team_id, channel_id)
        since = self.runtime.latest_ts(key)
        if since is None:
            return 0
        said: list[Message] = []
        for message in _history_since(client, channel_id, since - THREAD_HORIZON_SECONDS):
            if float(message["ts"]) > since:
                said.append(message)
            is_root = message.get("thread_ts") == message.get("ts")
            if is_root and float(message.get("latest_reply") or 0) > since:
                said.extend(_replies_since(client, channel_id, message["ts"], since))
        unique = {message["ts"]: message for message in said}
        ordered = sorted(unique.values(), key=lambda message: float(message["ts"]))
        utterances = [
            utterance
            for message in ordered
            if is_spoken(message, bot_user_id)
            and (
                utterance := to_utterance(
                    message,
                    team_id,
                    channel_id,
                    lambda user_id: self.directory.display_name(client, team_id, user_id),
                )
            )
            is not None
        ]
        report = self.runtime.engine.ingest(utterances)  # chunked, oldest first
        return report.added + report.edited


def _member_channels(client: WebClient) -> Iterator[str]:
    """The ids of every public and private channel the bot is a member of."""
    cursor: str | None = None
    while True:
        page = client.users_conversations(
            types="public_channel,private_channel", exclude_archived=True, limit=PAGE, cursor=cursor
        )
        for channel in page.get("channels", []):
            yield channel["id"]
        cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
        if cursor is None:
            return


def _history_since(client: WebClient, channel_id: str, since: float) -> Iterator[Message]:
    cursor: str | None = None
    while True:
        page = client.conversations_history(
            channel=channel_id, oldest=f"{since:.6f}", inclusive=False, limit=PAGE, cursor=cursor
        )
        yield from page.get("messages", [])
        cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
        if not page.get("has_more") or cursor is None:
            return


def _replies_since(client: WebClient, channel_id: str, root: str, since: float) -> list[Message]:
    replies: list[Message] = []
    cursor: str | None = None
    while True:
        try:
            page = client.conversations_replies(
                channel=channel_id,
                ts=root,
                oldest=f"{since:.6f}",
                inclusive=False,
                limit=PAGE,
                cursor=cursor,
            )
        except SlackApiError as error:
            if error.response.get("error") == "thread_not_found":  # the root was deleted
                return replies
            raise
        replies.extend(m for m in page.get("messages", []) if m.get("ts") != root)
        cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
        if not page.get("has_more") or cursor is None:
            return replies
