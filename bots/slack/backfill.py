"""Reading a channel's history into AWAI, resumable after a restart.

Live events are the main way messages arrive; backfill fills in what was said before AWAI joined
(or while it was away). History comes newest page first; each page, with the replies of its
threads, is stored before its cursor is saved, so a restart resumes at the first page not yet
stored: nothing lost, and since storing is idempotent, nothing twice. A finished backfill run
again starts over from the newest page, catching anything missed since.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from awai_engine.values import Utterance
from bots.runtime import Runtime
from bots.slack import messages
from bots.slack.blocks import notice
from bots.slack.directory import SlackDirectory
from bots.slack.history import HistoryPage, history_page, thread_replies
from bots.slack.ingest import Message, channel_key, is_spoken, to_utterance

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BackfillRequest:
    team_id: str
    channel_id: str
    bot_user_id: str | None

    @property
    def channel(self) -> str:
        return channel_key(self.team_id, self.channel_id)


class _Progress:
    """One message in the channel, updated as pages are read."""

    def __init__(self, client: WebClient, channel_id: str) -> None:
        self.client, self.channel_id = client, channel_id
        response = client.chat_postMessage(channel=channel_id, text=messages.BACKFILL_STARTED)
        self.ts = response["ts"]

    def show(self, text: str) -> None:
        message = notice(text)
        self.client.chat_update(
            channel=self.channel_id, ts=self.ts, text=message.text, blocks=message.blocks
        )


class Backfills:
    def __init__(self, runtime: Runtime, directory: SlackDirectory) -> None:
        self.runtime = runtime
        self.directory = directory
        self.page_size = runtime.settings.slack.backfill_page_size
        self._running: set[str] = set()
        self._lock = threading.Lock()

    def is_running(self, request: BackfillRequest) -> bool:
        with self._lock:
            return request.channel in self._running

    def run(self, request: BackfillRequest, client: WebClient) -> str | None:
        """Backfill one channel; the polite reason when it could not start, else ``None``."""
        with self._lock:
            if request.channel in self._running:
                return messages.BACKFILL_RUNNING
            self._running.add(request.channel)
        try:
            return self._run(request, client)
        finally:
            with self._lock:
                self._running.discard(request.channel)

    def _run(self, request: BackfillRequest, client: WebClient) -> str | None:
        state = self.runtime.cursor(request.channel)
        if state is None or state.done:
            cursor, stored = None, 0
            self.runtime.save_cursor(request.channel, None, 0, done=False)
        else:
            cursor, stored = state.cursor, state.fetched
        try:
            progress = _Progress(client, request.channel_id)
        except SlackApiError as error:
            log.warning("Cannot backfill %s: %s", request.channel, error.response.get("error"))
            return messages.CANNOT_POST
        try:
            while True:
                page = history_page(client, request.channel_id, cursor, self.page_size)
                stored += self._store_page(request, client, page)
                cursor = page.next_cursor
                self.runtime.save_cursor(request.channel, cursor, stored, done=cursor is None)
                if cursor is None:
                    break
                log.info("Backfill of %s: %d message(s) so far", request.channel, stored)
                progress.show(messages.BACKFILL_PROGRESS.format(count=stored))
        except SlackApiError as error:
            reason = error.response.get("error") or "Slack did not answer"
            log.warning("Backfill of %s paused: %s", request.channel, reason)
            progress.show(messages.BACKFILL_PAUSED.format(count=stored, reason=reason))
            return None
        log.info("Backfill of %s done: %d message(s)", request.channel, stored)
        progress.show(messages.BACKFILL_DONE.format(count=stored))
        return None

    def _store_page(self, request: BackfillRequest, client: WebClient, page: HistoryPage) -> int:
        """Store a page's messages and their threads' replies; the number of messages stored."""
        said: list[Message] = []
        for message in page.messages:
            said.append(message)
            if message.get("reply_count") and message.get("thread_ts") == message.get("ts"):
                said.extend(
                    thread_replies(client, request.channel_id, message["ts"], self.page_size)
                )
        utterances = [
            utterance
            for message in said
            if is_spoken(message, request.bot_user_id)
            and (utterance := self._utterance(request, client, message)) is not None
        ]
        self.runtime.engine.ingest(utterances)
        return len(utterances)

    def _utterance(
        self, request: BackfillRequest, client: WebClient, message: Message
    ) -> Utterance | None:
        return to_utterance(
            message,
            request.team_id,
            request.channel_id,
            lambda user_id: self.directory.display_name(client, request.team_id, user_id),
        )
