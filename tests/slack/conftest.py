"""Fixtures for the Slack app: the mock Web API, the real Bolt app on a real runtime, signed requests.

Every test gets a small workspace: Ann, Ben and Cat in #general, and a private #secret that only
Ben and the bot are in.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import torch
from slack_bolt import BoltRequest, BoltResponse

from bots.runtime import Runtime
from bots.slack.app import SlackBot, build_bot
from bots.slack.blocks import SHARE_ACTION
from bots.slack.ingest import channel_key, to_utterance
from bots.slack.settings import SlackSettings
from tests.slack.mock_slack_api import BOT_USER_ID, TEAM_ID, ApiCall, MockSlackApi
from tests.slack.signed import SIGNING_SECRET, SlackRequests

ANN, BEN, CAT = "U1ANN", "U2BEN", "U3CAT"
GENERAL, SECRET = "C1GENERAL", "G2SECRET"
GENERAL_KEY = channel_key(TEAM_ID, GENERAL)


@dataclass
class SlackHarness:
    api: MockSlackApi
    bot: SlackBot
    runtime: Runtime
    requests: SlackRequests

    def send(self, request: BoltRequest) -> BoltResponse:
        return self.bot.app.dispatch(request)

    def settle(self) -> None:
        """Wait until every queued reading, ingest and backfill has finished."""
        assert self.bot.services.workers.wait_idle(60), "Slack work did not finish"

    def say(
        self, user: str, text: str, channel: str = GENERAL, thread_ts: str | None = None
    ) -> dict[str, Any]:
        """Someone posts a message: it exists in Slack and its event reaches the app."""
        message = self.api.add_message(channel, user, text, thread_ts=thread_ts)
        self.deliver_message_event(message, channel)
        return message

    def deliver_message_event(
        self, message: dict[str, Any], channel: str = GENERAL, **signing: Any
    ) -> str:
        event = {
            **message,
            "channel": channel,
            "channel_type": "channel",
            "event_ts": message["ts"],
        }
        event_id = signing.pop("event_id", None) or f"Ev-{message['ts']}"
        response = self.send(self.requests.event(event, event_id=event_id, **signing))
        assert response.status == 200
        return event_id

    def seed(
        self, lines: list[tuple[str, str]], channel: str = GENERAL, thread_ts: str | None = None
    ) -> list[dict[str, Any]]:
        """Messages said before the test: in Slack, and stored in one batch (faster than events)."""
        added = [
            self.api.add_message(channel, user, text, thread_ts=thread_ts) for user, text in lines
        ]
        names = {user_id: user["real_name"] for user_id, user in self.api.users.items()}
        utterances = [to_utterance(m, TEAM_ID, channel, names.__getitem__) for m in added]
        self.runtime.engine.ingest([u for u in utterances if u is not None])
        return added

    def blocks_text(self, call: ApiCall) -> str:
        """Everything a posted or updated message shows, as one string."""
        return json.dumps(call.params.get("blocks") or [], ensure_ascii=False)

    def readings(self) -> list[ApiCall]:
        """The private readings AWAI sent (ephemeral messages with a reading's buttons)."""
        return [
            call
            for call in self.api.calls_to("chat.postEphemeral")
            if SHARE_ACTION in self.blocks_text(call)
        ]

    def responses_text(self) -> list[str]:
        """What was answered privately through response_url."""
        with self.api.lock:
            return [response.get("text", "") for response in self.api.responses]

    def stored_texts(self, channel: str = GENERAL) -> dict[str, str]:
        timeline = self.runtime.store.timeline(channel_key(TEAM_ID, channel))
        return {message.message_id: message.text for message in timeline.messages}


@pytest.fixture(autouse=True)
def one_torch_thread() -> Iterator[None]:
    """Embeddings run on AWAI's worker threads here; torch's own thread pool on top of them
    oversubscribes a small shared CPU (measured: ingest 0.6-1.5 s a message instead of 0.1 s)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture
def slack_api() -> Iterator[MockSlackApi]:
    api = MockSlackApi().start()
    api.add_user(ANN, "Ann")
    api.add_user(BEN, "Ben")
    api.add_user(CAT, "Cat")
    api.add_channel(GENERAL, "general", {ANN, BEN, CAT, BOT_USER_ID}, creator=ANN)
    api.add_channel(SECRET, "secret", {BEN, BOT_USER_ID}, private=True, creator=BEN)
    yield api
    api.stop()


@pytest.fixture
def make_slack(
    make_runtime: Callable[..., Runtime], slack_api: MockSlackApi
) -> Iterator[Callable[..., SlackHarness]]:
    """Build the Slack app on a runtime (``name`` picks its data folder; same name = restart)."""
    bots: list[SlackBot] = []

    def make(name: str = "data", **overrides: Any) -> SlackHarness:
        settings = SlackSettings(
            mode="http",
            bot_token="xoxb-awai-test",  # type: ignore[arg-type]
            signing_secret=SIGNING_SECRET,  # type: ignore[arg-type]
            api_base_url=slack_api.base_url,
            **overrides,
        )
        runtime = make_runtime(name, slack=settings)
        bot = build_bot(runtime)
        bots.append(bot)
        return SlackHarness(slack_api, bot, runtime, SlackRequests(slack_api.url))

    yield make
    for bot in bots:
        bot.close()


@pytest.fixture
def slack(make_slack: Callable[..., SlackHarness]) -> SlackHarness:
    return make_slack()
