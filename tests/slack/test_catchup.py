"""Catch-up: what was said while AWAI was down is read on start, from each channel's last message."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

from tests.slack.conftest import ANN, BEN, CAT, GENERAL, SECRET, SlackHarness
from tests.slack.mock_slack_api import TEAM_ID


def _said_while_down(slack: SlackHarness) -> tuple[dict, set[str]]:
    """Stored before the outage: a channel with a thread. Returns the old root and what is new."""
    root, _ = slack.seed([(ANN, "Shall we move the launch?"), (BEN, "Let us decide on Monday.")])
    slack.seed([(CAT, "I vote to keep the date.")], thread_ts=root["ts"])
    new = set()
    for user, text in ((CAT, "Monday came: any decision?"), (ANN, "We keep the date.")):
        new.add(slack.api.add_message(GENERAL, user, text)["ts"])
    new.add(slack.api.add_message(GENERAL, BEN, "Fine by me.", thread_ts=root["ts"])["ts"])
    fresh = slack.api.add_message(GENERAL, BEN, "New thread: the launch party.")
    new.add(fresh["ts"])
    new.add(slack.api.add_message(GENERAL, ANN, "Friday, 6 pm.", thread_ts=fresh["ts"])["ts"])
    slack.api.add_message(GENERAL, None, "Deploy finished", bot_id="BCI", subtype="bot_message")
    return root, new


@pytest.mark.slow
def test_messages_said_while_awai_was_down_are_read_on_start(
    slack: SlackHarness, caplog: pytest.LogCaptureFixture
):
    _, new = _said_while_down(slack)
    before = set(slack.stored_texts())
    slack.seed([(BEN, "A secret stored before.")], channel=SECRET)
    unseen = slack.api.add_message(SECRET, BEN, "A secret said while AWAI was down.")
    slack.api.rate_limit("conversations.history", retry_after=1)

    with caplog.at_level(logging.INFO, logger="bots.actions.catchup"):
        slack.bot.catch_up()
        slack.settle()

    assert set(slack.stored_texts()) == before | new
    assert unseen["ts"] in slack.stored_texts(SECRET)
    assert "Caught up workspace T0AWAI: 6 new message(s) in 2 channel(s)" in caplog.text
    assert not any(text in caplog.text for text in ("We keep the date", "secret said"))


@pytest.mark.slow
def test_an_interrupted_catch_up_is_finished_by_the_next_one(slack: SlackHarness):
    _, new = _said_while_down(slack)
    before = set(slack.stored_texts())
    slack.api.fail("conversations.replies", error="internal_error")

    slack.bot.catch_up()
    slack.settle()
    assert set(slack.stored_texts()) == before, "nothing stored out of order"

    slack.bot.catch_up()
    slack.bot.catch_up()  # twice: nothing is stored twice
    slack.settle()
    assert set(slack.stored_texts()) == before | new
    assert len(slack.stored_texts()) == len(before | new)


@pytest.mark.slow
def test_workspaces_are_caught_up_side_by_side_and_one_workspace_once(
    slack: SlackHarness, monkeypatch: pytest.MonkeyPatch
):
    """One catch-up per workspace at a time, not one per process: on every reconnect each
    workspace of a multi-workspace install is caught up, side by side on the pool."""
    listing, release = threading.Event(), threading.Event()
    answer = slack.api.answer

    def held(method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any], dict]:
        if method == "users.conversations" and not listing.is_set():
            listing.set()  # the first workspace's catch-up is under way, and waits here
            release.wait(30)
        return answer(method, params)

    monkeypatch.setattr(slack.api, "answer", held)
    catchup, client = slack.bot.services.catchup, slack.bot.app.client
    first: list[object] = []
    running = threading.Thread(target=lambda: first.append(catchup.run(client, TEAM_ID, None)))
    running.start()
    assert listing.wait(30)

    other = catchup.run(client, "T0OTHER", None)
    same = catchup.run(client, TEAM_ID, None)
    release.set()
    running.join(30)

    assert other is not None, "another workspace is caught up while the first one runs"
    assert same is None, "the same workspace is not caught up twice at once"
    assert first and first[0] is not None
