"""Backfill: history across pages, a 429 in the middle, a restart midway; nothing lost, nothing twice."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bots.slack import messages
from tests.slack.conftest import ANN, BEN, CAT, GENERAL, GENERAL_KEY, SlackHarness
from tests.slack.mock_slack_api import BOT_USER_ID

PAGE = 10
DEE = "U4DEE"


def _history(slack: SlackHarness) -> set[str]:
    """A channel's past: people talking, threads, a bot, a join. Returns the ids to be stored."""
    people = (ANN, BEN, CAT)
    spoken = set()
    for i in range(24):
        message = slack.api.add_message(GENERAL, people[i % 3], f"Point {i} about the roadmap.")
        spoken.add(message["ts"])
        if i % 8 == 3:
            for j in range(3):
                reply = slack.api.add_message(
                    GENERAL, people[j], f"Reply {j} on point {i}.", thread_ts=message["ts"]
                )
                spoken.add(reply["ts"])
    slack.api.add_message(GENERAL, None, "Deploy finished", bot_id="BCI", subtype="bot_message")
    slack.api.add_message(GENERAL, CAT, "joined", subtype="channel_join")
    return spoken


def _history_cursors(slack: SlackHarness, since: int = 0) -> list[str | None]:
    return [c.params.get("cursor") for c in slack.api.calls_to("conversations.history")[since:]]


@pytest.mark.slow
def test_backfill_survives_a_rate_limit_and_a_restart_without_losing_or_repeating(
    make_slack: Callable[..., SlackHarness],
):
    slack = make_slack(backfill_page_size=PAGE)
    spoken = _history(slack)
    slack.api.rate_limit("conversations.history", after=1, retry_after=1)  # page 2, once
    slack.api.fail("conversations.history", after=2, error="fatal_error")  # page 3: Slack breaks

    joined = {"type": "member_joined_channel", "user": BOT_USER_ID, "channel": GENERAL}
    slack.send(slack.requests.event(joined))
    slack.settle()

    first_run = _history_cursors(slack)
    assert first_run[1] == first_run[2] and first_run[1] is not None, (
        "the 429'd page was asked again"
    )
    progress = slack.api.calls_to("chat.update")[-1].params["text"]
    assert progress.startswith("Paused") and "fatal_error" in progress
    stored_before = set(slack.stored_texts())
    assert stored_before and stored_before < spoken
    saved = slack.runtime.store.cursors.get(GENERAL_KEY)
    assert saved is not None and not saved.done and saved.cursor == first_run[-1]

    slack.bot.close()  # the process stops
    slack.runtime.close()
    restarted = make_slack(backfill_page_size=PAGE)  # same data folder
    restarted.send(restarted.requests.command("backfill", GENERAL, ANN))
    restarted.settle()

    second_run = _history_cursors(restarted, since=len(first_run))
    assert second_run[0] == saved.cursor, "resumed where it stopped, not from the newest page"
    served_before = set(first_run[:-1])
    assert not served_before & set(second_run), "no page read twice"
    assert set(restarted.stored_texts()) == spoken, "nothing lost, no bot or join notice"
    assert restarted.runtime.store.message_count(GENERAL_KEY) == len(spoken)
    done = restarted.runtime.store.cursors.get(GENERAL_KEY)
    assert done is not None and done.done and done.fetched == len(spoken)
    final = restarted.api.calls_to("chat.update")[-1].params["text"]
    assert final == messages.BACKFILL_DONE.format(count=len(spoken))


def test_backfill_in_a_channel_awai_is_not_in_says_so(slack: SlackHarness):
    slack.api.channels[GENERAL].members.discard(BOT_USER_ID)

    slack.send(slack.requests.command("backfill", GENERAL, ANN))
    slack.settle()

    assert slack.responses_text() == [messages.CANNOT_POST]
    assert slack.api.calls_to("conversations.history") == []


def test_a_backfill_awai_fails_says_in_the_channel_that_it_paused_and_how_to_go_on(
    slack: SlackHarness, monkeypatch: pytest.MonkeyPatch
):
    _history(slack)

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(slack.runtime.engine, "ingest", full_disk)
    slack.send(slack.requests.command("backfill", GENERAL, ANN))
    slack.settle()

    status = slack.api.calls_to("chat.update")[-1].params["text"]
    assert status == messages.BACKFILL_PAUSED.format(count=0, reason=messages.BACKFILL_FAILED)
    assert "disk full" not in status


def test_a_thread_longer_than_a_page_is_read_whole_page_after_page(
    make_slack: Callable[..., SlackHarness],
):
    slack = make_slack(backfill_page_size=2)
    root = slack.api.add_message(GENERAL, ANN, "Which vendor do we pick?")
    replies = [
        slack.api.add_message(GENERAL, BEN, f"Vendor {i} has a point.", thread_ts=root["ts"])
        for i in range(5)
    ]

    slack.send(slack.requests.command("backfill", GENERAL, ANN))
    slack.settle()

    stored = set(slack.stored_texts())
    assert {root["ts"], *(reply["ts"] for reply in replies)} <= stored
    assert len(slack.api.calls_to("conversations.replies")) >= 3, "five replies, two a page"


def test_backfill_is_for_workspace_admins_and_the_channels_creator(slack: SlackHarness):
    slack.api.add_message(GENERAL, BEN, "Said before AWAI came.")
    slack.send(slack.requests.command("backfill", GENERAL, CAT))  # a member, not its creator
    slack.settle()

    assert slack.responses_text() == [f"Backfill is for {messages.BACKFILL_MANAGERS}."]
    assert slack.api.calls_to("conversations.history") == [], "nothing was read"
    assert slack.api.calls_to("chat.postMessage") == [], "no progress was promised"


def test_a_workspace_admin_may_backfill_a_channel_someone_else_created(slack: SlackHarness):
    slack.api.add_user(DEE, "Dee", role="admin")
    slack.api.channels[GENERAL].members.add(DEE)
    said = slack.api.add_message(GENERAL, BEN, "Said before AWAI came.")

    slack.send(slack.requests.command("backfill", GENERAL, DEE))
    slack.settle()

    assert said["ts"] in slack.stored_texts()
    assert slack.responses_text() == []


def test_backfill_of_a_private_channel_awai_is_not_in_says_it_cannot_see_it(slack: SlackHarness):
    slack.api.add_channel("G3PLANS", "plans", {CAT}, private=True, creator=CAT)

    slack.send(slack.requests.command("backfill", "G3PLANS", CAT))
    slack.settle()

    assert slack.responses_text() == [messages.CANNOT_SEE_CHANNEL]
    assert slack.api.calls_to("conversations.history") == []
