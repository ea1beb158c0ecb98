"""One reading, from a request to a finished message in Slack, whatever route asked for it.

The shortcut, ``@AWAI read`` and ``/awai read`` all end here, after Slack has been acknowledged:
check the person is a member of the message's channel, give one reading per person and message
within a minute, and send it privately (ephemeral, in the message's thread) with two buttons:
*Share in thread* posts it for everyone, once per message, saying who shared it; *Details* opens
the numbers behind it. Nothing is posted for everyone until a person shares a finished reading,
so a refusal or a failure is only ever seen by the person who asked.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from awai_engine.engine import StillStoringError, UnknownMessageError
from awai_engine.errors import AwaiError
from awai_engine.values import Reading, ReadingNote, Utterance
from bots.runtime import Runtime
from bots.slack import messages
from bots.slack.access import MEMBER_SCOPES, AccessRefusedError, check_member
from bots.slack.blocks import (
    PermalinkOf,
    ReadingTarget,
    details_notice,
    details_placeholder,
    details_view,
    reading_message,
)
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


class Readings:
    """Every reading route after the acknowledgement: private readings, shares and details."""

    def __init__(self, runtime: Runtime, directory: SlackDirectory) -> None:
        self.runtime = runtime
        self.directory = directory
        self.settings = runtime.settings.slack

    def deliver(self, request: ReadingRequest, client: WebClient, tell: Tell) -> None:
        """Read a message for the person who asked: privately, with Share and Details buttons
        (or, where the operator chose ``reply_placement = "thread"``, shared at once). Never
        raises; every refusal and error is told privately, and nothing public is posted before
        the reading exists."""
        if not self._may_read(request, client, tell):
            return
        claim = f"slack:reading:{request.channel}:{request.ts}:{request.user_id}"
        if not self.runtime.claim(claim, self.settings.duplicate_window_seconds):
            log.info(
                "Reading of %s in %s for %s: already on its way",
                request.ts,
                request.channel,
                request.user_id,
            )
            tell(messages.ALREADY_READING)
            return
        if self.settings.reply_placement == "thread":
            self._share(request, client, tell, shared_by=None)
            return
        reading = self._reading(request, client, tell)
        if reading is None:  # told why; asking again ("try again in a minute") is not refused
            self.runtime.release(claim)
            return
        target = ReadingTarget(request.channel_id, request.ts, request.thread_ts)
        message = reading_message(
            reading,
            self._permalinks(request, client),
            target=target,
            shared_at=self._shared_link(request, client),
        )
        try:
            client.chat_postEphemeral(
                channel=request.channel_id,
                user=request.user_id,
                thread_ts=request.thread_ts or request.ts,
                text=message.text,
                blocks=message.blocks,
            )
        except SlackApiError as error:
            log.info(
                "Reading of %s in %s not delivered: %s",
                request.ts,
                request.channel,
                error.response.get("error"),
            )
            tell(messages.CANNOT_POST)
            return
        log.info(
            "Read %s in %s for %s (%s, private)",
            request.ts,
            request.channel,
            request.user_id,
            reading.backend,
        )

    def share(self, request: ReadingRequest, client: WebClient, tell: Tell) -> None:
        """Post a message's reading in its thread for everyone, once per message; never raises."""
        if self._may_read(request, client, tell):
            self._share(request, client, tell, shared_by=request.user_id)

    def open_details(
        self, client: WebClient, trigger_id: str, request: ReadingRequest
    ) -> str | None:
        """Open the Details modal at once (its trigger lives three seconds); its view id."""
        try:
            opened = client.views_open(trigger_id=trigger_id, view=details_placeholder())
        except SlackApiError as error:
            log.warning("Details of %s not opened: %s", request.ts, error.response.get("error"))
            return None
        return opened["view"]["id"]

    def fill_details(
        self, request: ReadingRequest, client: WebClient, view_id: str, tell: Tell
    ) -> None:
        """Fill the Details modal with the reading and its numbers; never raises."""
        if not self._may_read(request, client, tell):
            view = details_notice(messages.NOT_A_MEMBER)
        else:
            reading = self._reading(request, client, tell=None)
            if reading is None:
                view = details_notice(messages.FAILED)
            else:
                view = details_view(reading, self._permalinks(request, client))
        try:
            client.views_update(view_id=view_id, view=view)
        except SlackApiError as error:
            log.warning("Details of %s not shown: %s", request.ts, error.response.get("error"))

    def _share(
        self, request: ReadingRequest, client: WebClient, tell: Tell, shared_by: str | None
    ) -> None:
        """One shared reading per message: a second share links to the first. A shared reading
        holds only what everyone in the channel may see, and goes on the record of posts."""
        link = self._shared_link(request, client)
        if link is not None:
            tell(messages.ALREADY_SHARED.format(link=link))
            return
        claim = f"slack:share:{request.channel}:{request.ts}"
        if not self.runtime.claim(claim, self.settings.duplicate_window_seconds):
            tell(messages.ALREADY_SHARING)
            return
        reading = self._reading(request, client, tell)
        if reading is None:
            return
        message = reading_message(reading, self._permalinks(request, client), shared_by=shared_by)
        try:
            posted = client.chat_postMessage(
                channel=request.channel_id,
                thread_ts=request.thread_ts or request.ts,
                text=message.text,
                blocks=message.blocks,
            )
        except SlackApiError as error:
            if error.response.get("error") in CANNOT_POST_ERRORS:
                tell(messages.CANNOT_POST)
                return
            log.exception("Sharing the reading of %s failed", request.ts)
            tell(messages.FAILED)
            return
        record_reading(self.runtime, reading, request.channel_id, posted["ts"], subject=request.ts)
        log.info(
            "Shared the reading of %s in %s (%s)", request.ts, request.channel, reading.backend
        )

    def _may_read(self, request: ReadingRequest, client: WebClient, tell: Tell) -> bool:
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
            return False
        return True

    def _reading(
        self, request: ReadingRequest, client: WebClient, tell: Tell | None
    ) -> Reading | None:
        """The reading, or None when it cannot be had (the person was told why, privately)."""
        try:
            return self._read(request, client)
        except UnreadableError as reason:
            # The reason too: the operator has only this line to tell "not found" from a bot's.
            log.info(
                "Reading of %s in %s: unreadable, told %r", request.ts, request.channel, str(reason)
            )
            if tell is not None:
                tell(str(reason))
        except Exception:
            log.exception("Reading %s in %s failed", request.ts, request.channel)
            if tell is not None:
                tell(messages.FAILED)
        return None

    def _shared_link(self, request: ReadingRequest, client: WebClient) -> str | None:
        """The permalink of the message's one shared reading, None while nobody shared it."""
        existing = self.runtime.posts.shared_reading(request.channel, request.ts)
        if existing is None:
            return None
        return self.directory.permalink(
            client,
            request.team_id,
            existing.place,
            existing.post_id,
            request.thread_ts or request.ts,
        )

    def _permalinks(self, request: ReadingRequest, client: WebClient) -> PermalinkOf:
        def permalink_of(message_id: str, thread_root: str | None) -> str:
            return self.directory.permalink(
                client, request.team_id, request.channel_id, message_id, thread_root
            )

        return permalink_of

    def _read(self, request: ReadingRequest, client: WebClient) -> Reading:
        """The reading; a message AWAI has not stored yet is fetched and stored first, and then
        the reading notes when the channel's history before AWAI joined is not read yet."""

        def fetch() -> Utterance:
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
            return utterance

        try:
            found = self.runtime.read_storing_first(
                request.channel, request.ts, MEMBER_SCOPES, fetch
            )
        except StillStoringError:
            raise UnreadableError(messages.STILL_STORING) from None
        except UnknownMessageError:
            raise UnreadableError(messages.NOT_FOUND) from None
        if not found.stored_now:
            return found.reading
        cursor = self.runtime.cursor(request.channel)
        if cursor is not None and cursor.done:
            return found.reading
        return found.reading.noted(ReadingNote(kind="history-missing"))
