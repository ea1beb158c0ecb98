"""Catch-up: what was said while AWAI was down is read on start, from each channel's last message."""

from __future__ import annotations

import logging

import pytest

from tests.slack.conftest import ANN, BEN, CAT, GENERAL, SECRET, SlackHarness


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
