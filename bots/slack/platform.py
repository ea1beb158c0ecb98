"""Slack as the actions see it (:class:`bots.actions.platform.Platform`): one person asking, in
one workspace, about one message; and AWAI's posts there, to redact.

Here a Slack request turns into what the actions ask for: membership from
``conversations.members``, the message from ``conversations.history``/``replies``, a private
reading as an ephemeral message in the message's thread, a shared one as a thread reply, links
as permalinks. The words are Slack's own (:mod:`bots.slack.messages`, :mod:`bots.slack.blocks`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from awai_engine.posts import Post
from awai_engine.values import Reading, Utterance
from awai_engine.visibility import Scopes
from bots.actions.platform import Posted, Refused
from bots.language import reader_language
from bots.slack import messages
from bots.slack.access import MEMBER_SCOPES, AccessRefusedError, check_member
from bots.slack.blocks import ReadingTarget, notice, reading_message
from bots.slack.directory import SlackDirectory
from bots.slack.history import fetch_message
from bots.slack.ingest import Message, channel_key, is_spoken, to_utterance

log = logging.getLogger(__name__)

CANNOT_POST_ERRORS = frozenset({"not_in_channel", "channel_not_found", "is_archived"})
"""Slack's answers when AWAI may not post in a channel (the asker is told to invite it)."""
PICTURE = "picture"
"""The part name of a digest's picture (a Slack file) in the record of posts."""
GONE_ERRORS = frozenset(
    {"message_not_found", "channel_not_found", "file_not_found", "file_deleted", "not_in_channel"}
)
"""Slack's answers for a post that is no longer there to redact (nothing of it can be seen)."""


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


_REASONS = {
    messages.NOT_A_MEMBER: "not a member of the channel",
    messages.CANNOT_SEE_CHANNEL: "AWAI cannot see the channel",
}


class SlackAsking:
    """One Slack request for one message's reading, as the actions' platform port."""

    def __init__(
        self, request: ReadingRequest, client: WebClient, directory: SlackDirectory
    ) -> None:
        self.request = request
        self.client = client
        self.directory = directory

    @property
    def channel(self) -> str:
        return self.request.channel

    @property
    def message_id(self) -> str:
        return self.request.ts

    @property
    def asker(self) -> str:
        return self.request.user_id

    @property
    def history_key(self) -> str:
        return self.request.channel  # a Slack channel's backfill reads its threads too

    def check_may_read(self) -> None:
        try:
            check_member(self.client, self.request.channel_id, self.request.user_id)
        except AccessRefusedError as refusal:
            sentence = str(refusal)
            raise Refused(sentence, _REASONS.get(sentence, "refused by the access check")) from None

    def scopes(self) -> Scopes:
        return MEMBER_SCOPES

    def audience(self) -> Scopes:
        return MEMBER_SCOPES

    def fetch(self) -> Utterance:
        request = self.request
        message = request.message or fetch_message(
            self.client, request.channel_id, request.ts, request.thread_ts
        )
        if message is None or message.get("ts") != request.ts:
            raise Refused(messages.NOT_FOUND, "not found")
        if not is_spoken(message, request.bot_user_id):
            raise Refused(messages.NOT_SPOKEN, "not said by a person")
        names = self.directory.names(self.client, request.team_id)
        utterance = to_utterance(message, request.team_id, request.channel_id, names)
        if utterance is None:
            raise Refused(messages.NO_WORDS, "no words")
        return utterance

    def post_privately(self, reading: Reading, shared_url: str | None) -> None:
        request = self.request
        message = reading_message(
            reading,
            self.permalink_of,
            language=self.language(reading),
            target=ReadingTarget(request.channel_id, request.ts, request.thread_ts),
            shared_at=shared_url,
        )
        try:
            self.client.chat_postEphemeral(
                channel=request.channel_id,
                user=request.user_id,
                thread_ts=request.thread_ts or request.ts,
                text=message.text,
                blocks=message.blocks,
            )
        except SlackApiError as error:
            code = error.response.get("error")
            raise Refused(messages.CANNOT_POST, f"not delivered: {code}") from None

    def post_publicly(self, reading: Reading, by_asker: bool) -> Posted:
        request = self.request
        message = reading_message(
            reading, self.permalink_of, shared_by=request.user_id if by_asker else None
        )
        try:
            posted = self.client.chat_postMessage(
                channel=request.channel_id,
                thread_ts=request.thread_ts or request.ts,
                text=message.text,
                blocks=message.blocks,
            )
        except SlackApiError as error:
            code = error.response.get("error")
            if code in CANNOT_POST_ERRORS:
                raise Refused(messages.CANNOT_POST, f"cannot post: {code}") from None
            raise
        return Posted(place=request.channel_id, post_id=posted["ts"])

    def link_to(self, post: Post) -> str:
        request = self.request
        return self.directory.permalink(
            self.client,
            request.team_id,
            post.place,
            post.post_id,
            request.thread_ts or request.ts,
        )

    def language(self, reading: Reading) -> str:
        """The asker's language: the locale they set Slack to, else the channel's."""
        request = self.request
        locale = self.directory.locale(self.client, request.team_id, request.user_id)
        return reader_language(reading, locale)

    def permalink_of(self, message_id: str, thread_root: str | None) -> str:
        """Each earlier message a reading cites, by its permalink (the blocks' ``PermalinkOf``)."""
        return self.directory.permalink(
            self.client, self.request.team_id, self.request.channel_id, message_id, thread_root
        )


class SlackPosts:
    """AWAI's posts in one workspace, as the actions' post editor."""

    def __init__(self, client: WebClient) -> None:
        self.client = client

    def redact(self, post: Post, notice_text: str) -> bool:
        try:
            if post.part == PICTURE:
                self.client.files_delete(file=post.post_id)
            else:
                self.client.chat_update(
                    channel=post.place,
                    ts=post.post_id,
                    text=notice_text,
                    blocks=notice(notice_text).blocks,
                )
        except SlackApiError as error:
            if error.response.get("error") not in GONE_ERRORS:
                log.warning("AWAI post %s in %s not redacted: %s", post.post_id, post.place, error)
                return False
        return True
