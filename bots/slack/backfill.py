"""Reading a Slack channel's history into AWAI: ``/awai backfill`` and the backfill on joining.

Live events are the main way messages arrive; backfill fills in what was said before AWAI joined
(or while it was away). The reading itself, page by page and resumable, is the backfill action's
(:mod:`bots.actions.backfill`); here is Slack's side of it: one run per channel at a time, the
channel's history newest page first with the replies of its threads, and one message in the
channel showing the progress.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from awai_engine.values import Utterance
from bots.actions.backfill import BackfillProgress, Page, Start, backfill
from bots.actions.backfill_status import Status, read_shown
from bots.records import BackfillCursor
from bots.runtime import Runtime
from bots.slack import messages
from bots.slack.blocks import notice
from bots.slack.directory import SlackDirectory
from bots.slack.history import HistoryPage, history_page, thread_replies
from bots.slack.ingest import Message, channel_key, spoken_utterances
from bots.slack.workers import OnePerKey

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BackfillRequest:
    team_id: str
    channel_id: str
    bot_user_id: str | None

    @property
    def channel(self) -> str:
        return channel_key(self.team_id, self.channel_id)


class StatusMessage:
    """One message in the channel, posted when the backfill starts and edited as it goes."""

    def __init__(self, client: WebClient, channel_id: str) -> None:
        self.client, self.channel_id = client, channel_id
        response = client.chat_postMessage(channel=channel_id, text=messages.BACKFILL_STARTED)
        self.ts = response["ts"]

    def say(self, text: str) -> None:
        message = notice(text)
        self.client.chat_update(
            channel=self.channel_id, ts=self.ts, text=message.text, blocks=message.blocks
        )


class SlackStatusWords:
    """Slack's sentences for a backfill's status (:mod:`bots.actions.backfill_status`)."""

    def progress(self, progress: BackfillProgress) -> str:
        return messages.BACKFILL_PROGRESS.format(count=progress.fetched)

    def done(self, progress: BackfillProgress) -> str:
        return messages.BACKFILL_DONE.format(count=progress.fetched)

    def stopped(self, progress: BackfillProgress, reason: str | None) -> str:
        return messages.BACKFILL_PAUSED.format(
            count=progress.fetched, reason=reason or messages.BACKFILL_FAILED
        )


def refusal_of(error: Exception) -> str | None:
    """Slack's few words when ``error`` is Slack refusing or failing a call."""
    if not isinstance(error, SlackApiError):
        return None
    return error.response.get("error") or "Slack did not answer"


class Backfills:
    def __init__(self, runtime: Runtime, directory: SlackDirectory) -> None:
        self.runtime = runtime
        self.directory = directory
        self.page_size = runtime.settings.slack.backfill_page_size
        self._channels = OnePerKey()

    def is_running(self, request: BackfillRequest) -> bool:
        return self._channels.running(request.channel)

    def run(self, request: BackfillRequest, client: WebClient) -> str | None:
        """Backfill one channel; the polite reason when it could not start, else ``None``."""
        outcome = self.backfill(request, client)
        return outcome if isinstance(outcome, str) else None

    def backfill(self, request: BackfillRequest, client: WebClient) -> int | str:
        """Backfill one channel: the messages it stored (up to a pause), or the polite reason
        it could not start."""
        with self._channels.run(request.channel) as runs:
            return self._run(request, client) if runs else messages.BACKFILL_RUNNING

    def _run(self, request: BackfillRequest, client: WebClient) -> int | str:
        try:
            message = StatusMessage(client, request.channel_id)
        except SlackApiError as error:
            log.warning("Cannot backfill %s: %s", request.channel, error.response.get("error"))
            return messages.CANNOT_POST
        status = Status(request.channel, message, SlackStatusWords(), refusal_of)
        history = SlackHistory(self, request, client, status)
        read_shown(lambda: backfill(self.runtime, history), status)
        return status.latest.added

    def utterances(
        self, request: BackfillRequest, client: WebClient, page: HistoryPage
    ) -> list[Utterance]:
        """What AWAI stores of a page's messages and their threads' replies."""
        said: list[Message] = []
        for message in page.messages:
            said.append(message)
            if message.get("reply_count") and message.get("thread_ts") == message.get("ts"):
                said.extend(
                    thread_replies(client, request.channel_id, message["ts"], self.page_size)
                )
        names = self.directory.names(client, request.team_id)
        return spoken_utterances(
            said, request.team_id, request.channel_id, request.bot_user_id, names
        )


class SlackHistory:
    """A Slack channel's history as the backfill action reads it: newest page first, each with
    its threads' replies; a finished backfill run again starts over, catching anything missed."""

    def __init__(
        self, backfills: Backfills, request: BackfillRequest, client: WebClient, status: Status
    ) -> None:
        self.backfills, self.request, self.client, self.status = backfills, request, client, status

    @property
    def key(self) -> str:
        return self.request.channel

    def start(self, saved: BackfillCursor | None) -> Start:
        if saved is None or saved.done:
            return Start(None)
        return Start(saved.cursor, saved.fetched, resumed=True)

    def page(self, cursor: str | None) -> Page:
        page = history_page(self.client, self.request.channel_id, cursor, self.backfills.page_size)
        utterances = self.backfills.utterances(self.request, self.client, page)
        last = page.next_cursor is None
        return Page(utterances, len(utterances), page.next_cursor, last)

    def show(self, progress: BackfillProgress) -> None:
        self.status.show(progress)
