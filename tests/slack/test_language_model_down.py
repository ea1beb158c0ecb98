"""The language model is down: the reading still arrives, offline, saying why; nothing crashes."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from awai_engine.embedding import Embedder
from awai_engine.settings import LanguageModelSettings
from bots.runtime import Runtime, language_backend
from bots.settings import BotSettings
from bots.slack.app import build_bot
from bots.slack.settings import SlackSettings
from storage.store import AwaiStore
from tests.slack.conftest import ANN, BEN, GENERAL, SlackHarness
from tests.slack.mock_slack_api import MockSlackApi
from tests.slack.signed import SIGNING_SECRET, SlackRequests


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.slow
def test_a_reading_while_the_language_model_is_unreachable_is_offline_and_says_so(
    tmp_path: Path, embedder: Embedder, slack_api: MockSlackApi
):
    settings = BotSettings(
        data_dir=tmp_path / "data",
        _env_file=None,  # type: ignore[call-arg]
        llm=LanguageModelSettings(
            api_key="sk-test",  # type: ignore[arg-type]
            base_url=f"http://127.0.0.1:{_closed_port()}",
            max_retries=0,
            timeout_seconds=2,
        ),
        slack=SlackSettings(
            mode="http",
            bot_token="xoxb-awai-test",  # type: ignore[arg-type]
            signing_secret=SIGNING_SECRET,  # type: ignore[arg-type]
            api_base_url=slack_api.base_url,
        ),
    )
    store = AwaiStore.open(settings)
    runtime = Runtime(settings, store, embedder, language_backend(settings))
    bot = build_bot(runtime)
    slack = SlackHarness(slack_api, bot, runtime, SlackRequests(slack_api.url))
    try:
        slack.say(ANN, "Can we ship the beta on Friday?")
        question = slack.say(BEN, "Only if the payment tests pass by Thursday.")
        slack.settle()

        slack.send(slack.requests.shortcut(GENERAL, ANN, question))
        slack.settle()
    finally:
        bot.close()
        runtime.close()

    (updated,) = slack.readings()
    shown = slack.blocks_text(updated)
    assert updated.params["text"].startswith("Reading · Ben")
    assert "could not write this reading" in shown
    assert "HTTP" not in shown and "AWAI_" not in shown  # operators read those in the log
    assert "no language model is configured" not in shown
    assert "payment tests pass by Thursday" in shown
