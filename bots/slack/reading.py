"""One reading, from a request to a finished message in Slack, whatever route asked for it.

The shortcut, ``@AWAI read`` and ``/awai read`` all end here, after Slack has been acknowledged:
check the person is a member of the message's channel, give one reading per person and message
within a minute, post a "Reading…" placeholder in the message's thread (or privately), read, and
replace the placeholder with the reading. Whatever goes wrong, the person gets a polite sentence
and the app carries on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from awai_engine.engine import UnknownMessageError
from awai_engine.errors import AwaiError
from awai_engine.values import Reading
from bots.runtime import Runtime
from bots.slack import messages
from bots.slack.access import MEMBER_SCOPES, AccessRefusedError, check_member
from bots.slack.blocks import SlackMessage, notice, reading_message
from bots.slack.directory import SlackDirectory
from bots.slack.history import fetch_message
from bots.slack.ingest import Message, channel_key, is_spoken, to_utterance
from bots.slack.privacy import record_reading

log = logging.getLogger(__name__)

Tell = Callable[[str], None]
"""Answers the person who asked, privately."""

CANNOT_POST_ERRORS = frozenset({"not_in_channel", "channel_not_found", "is_archived"})


@dataclass(frozen=True)
class ReadingRequest:
    """Someone asked for the reading of one message."""

    team_id: str
    channel_id: str
    ts: str
    user_id: str
    bot_user_id: str | None
    thread_ts: str | None = None
    message: Message | None = None  # the message itself, when Slack sent it (a shortcut)

    @property
    def channel(self) -> str:
        return channel_key(self.team_id, self.channel_id)


def _reason(refusal: str) -> str:
    """Which refusal, in a word or two for the log (the sentence itself is for the person)."""
    return {
        messages.NOT_A_MEMBER: "not a member of the channel",
        messages.CANNOT_SEE_CHANNEL: "AWAI cannot see the channel",
    }.get(refusal, "refused by the access check")


class UnreadableError(AwaiError):
    """The message cannot be read; ``str(error)`` is the polite reason."""


class _Reply:
    """Where the reading goes: a placeholder in the thread to update, or private messages."""

    def __init__(self, client: WebClient, request: ReadingRequest, ephemeral: bool) -> None:
        self.client, self.request, self.ephemeral = client, request, ephemeral
        self.thread_ts = request.thread_ts or request.ts
        self.placeholder_ts: str | None = None

    def post_placeholder(self) -> None:
        if self.ephemeral:
            self._ephemeral(SlackMessage(text=messages.PLACEHOLDER))
        else:
            response = self.client.chat_postMessage(
                channel=self.request.channel_id,
                thread_ts=self.thread_ts,
                text=messages.PLACEHOLDER,
            )
            self.placeholder_ts = response["ts"]

    def finish(self, message: SlackMessage) -> None:
        if self.placeholder_ts is None:
            self._ephemeral(message)
        else:
            self.client.chat_update(
                channel=self.request.channel_id,
                ts=self.placeholder_ts,
                text=message.text,
                blocks=message.blocks,
            )

    def _ephemeral(self, message: SlackMessage) -> None:
        self.client.chat_postEphemeral(
            channel=self.request.channel_id,
            user=self.request.user_id,
            thread_ts=self.thread_ts,
            text=message.text,
            blocks=message.blocks or None,
        )


class Readings:
    def __init__(self, runtime: Runtime, directory: SlackDirectory) -> None:
        self.runtime = runtime
        self.directory = directory
        self.settings = runtime.settings.slack

    def deliver(self, request: ReadingRequest, client: WebClient, tell: Tell) -> None:
        """Do everything after the acknowledgement; never raises."""
        try:
            check_member(client, request.channel_id, request.user_id)
        except AccessRefusedError as refusal:
            log.info(
                "Refused %s the reading of %s in %s: %s",
                request.user_id,
                request.ts,
                request.channel,
                _reason(str(refusal)),
            )
            tell(str(refusal))
            return
        claim = f"slack:reading:{request.channel}:{request.ts}:{request.user_id}"
        if not self.runtime.store.claims.claim(claim, self.settings.duplicate_window_seconds):
            log.info(
                "Reading of %s in %s for %s: already on its way",
                request.ts,
                request.channel,
                request.user_id,
            )
            tell(messages.ALREADY_READING)
            return
        reply = _Reply(client, request, self.settings.reply_placement == "ephemeral")
        try:
            reply.post_placeholder()
        except SlackApiError as error:
            if error.response.get("error") in CANNOT_POST_ERRORS:
                log.info(
                    "Reading of %s in %s not posted: %s",
                    request.ts,
                    request.channel,
                    error.response.get("error"),
                )
                tell(messages.CANNOT_POST)
                return
            raise
        try:
            message, reading = self._render(request, client)
            reply.finish(message)
        except Exception:
            log.exception("Reading %s in %s failed", request.ts, request.channel)
            reply.finish(notice(messages.FAILED))
            return
        if reading is None:
            log.info(
                "Reading of %s in %s for %s: unreadable, said so",
                request.ts,
                request.channel,
                request.user_id,
            )
            return
        log.info(
            "Read %s in %s for %s (%s, %s)",
            request.ts,
            request.channel,
            request.user_id,
            reading.backend,
            "private" if reply.placeholder_ts is None else "in its thread",
        )
        if reply.placeholder_ts is not None:  # posted for everyone
            record_reading(self.runtime, reading, request.channel_id, reply.placeholder_ts)

    def _render(
        self, request: ReadingRequest, client: WebClient
    ) -> tuple[SlackMessage, Reading | None]:
        try:
            reading, notes = self._read(request, client)
        except UnreadableError as reason:
            return notice(str(reason)), None

        def permalink_of(message_id: str, thread_root: str | None) -> str:
            return self.directory.permalink(
                client, request.team_id, request.channel_id, message_id, thread_root
            )

        return reading_message(reading, permalink_of, notes), reading

    def _read(self, request: ReadingRequest, client: WebClient) -> tuple[Reading, tuple[str, ...]]:
        """The reading; a message AWAI has not stored yet is fetched and stored first."""
        engine = self.runtime.engine
        try:
            return engine.read(request.channel, request.ts, MEMBER_SCOPES), ()
        except UnknownMessageError:
            pass
        message = request.message or fetch_message(
            client, request.channel_id, request.ts, request.thread_ts
        )
        if message is None or message.get("ts") != request.ts:
            raise UnreadableError(messages.NOT_FOUND)
        if not is_spoken(message, request.bot_user_id):
            raise UnreadableError(messages.NOT_SPOKEN)
        utterance = to_utterance(
            message,
            request.team_id,
            request.channel_id,
            lambda user_id: self.directory.display_name(client, request.team_id, user_id),
        )
        if utterance is None:
            raise UnreadableError(messages.NO_WORDS)
        engine.ingest([utterance])
        try:
            reading = engine.read(request.channel, request.ts, MEMBER_SCOPES)
        except UnknownMessageError:
            raise UnreadableError(messages.NOT_FOUND) from None
        cursor = self.runtime.store.cursors.get(request.channel)
        history_read = cursor is not None and cursor.done
        return reading, () if history_read else (messages.HISTORY_MISSING,)
