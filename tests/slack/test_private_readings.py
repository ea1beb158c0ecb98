"""A reading is private to the asker by default; *Share* posts it once per message; *Details*
opens the numbers. Driven through Bolt with signed requests against the mock Slack Web API."""

from __future__ import annotations

import json

import pytest

from awai_engine.visibility import EVERYTHING
from bots.slack import messages
from bots.slack.blocks import (
    DETAILS_ACTION,
    MAX_BLOCKS,
    SHARE_ACTION,
    SHARED_LINK_ACTION,
    ReadingTarget,
)
from tests.slack.conftest import ANN, BEN, CAT, GENERAL, GENERAL_KEY, SECRET, SlackHarness
from tests.slack.mock_slack_api import BOT_USER_ID


def _thread(slack: SlackHarness) -> list[dict]:
    root = slack.seed([(ANN, "Should we move the launch to next week? The tests are flaky.")])[0]
    replies = slack.seed(
        [
            (BEN, "The flaky tests are in the payment module, I can fix them by Wednesday."),
            (CAT, "Works for me, as long as Ben fixes them by Wednesday."),
        ],
        thread_ts=root["ts"],
    )
    return [root, *replies]


def _public_posts(slack: SlackHarness) -> list:
    """Messages AWAI posted or changed where others can see them."""
    return slack.api.calls_to("chat.postMessage") + slack.api.calls_to("chat.update")


def _buttons(call) -> dict[str, str]:
    blocks = call.params["blocks"]
    blocks = json.loads(blocks) if isinstance(blocks, str) else blocks
    actions = [block for block in blocks if block["type"] == "actions"]
    assert len(actions) == 1
    return {
        element["action_id"]: element.get("value") or element["url"]
        for element in actions[0]["elements"]
    }


@pytest.mark.slow
def test_a_shortcut_reading_reaches_only_the_asker_in_the_thread_with_share_and_details(
    slack: SlackHarness,
):
    root, _, cat = _thread(slack)

    response = slack.send(slack.requests.shortcut(GENERAL, ANN, cat))
    slack.settle()

    assert response.status == 200 and response.body == ""
    assert _public_posts(slack) == [], "nothing is posted for everyone, not even a placeholder"
    (private,) = slack.api.calls_to("chat.postEphemeral")
    assert private.params["user"] == ANN and private.params["thread_ts"] == root["ts"]
    shown = slack.blocks_text(private)
    assert "Agrees with" in shown and "as long as Ben fixes them" in shown
    assert "similarity" not in shown, "numbers only in the details"
    buttons = _buttons(private)
    assert set(buttons) == {SHARE_ACTION, DETAILS_ACTION}
    assert ReadingTarget.from_value(buttons[SHARE_ACTION]) == ReadingTarget(
        GENERAL, cat["ts"], root["ts"]
    )


@pytest.mark.slow
def test_four_people_reading_one_message_put_nothing_in_its_thread(slack: SlackHarness):
    _, _, cat = _thread(slack)
    slack.api.add_user("U4DEE", "Dee")
    slack.api.channels[GENERAL].members.add("U4DEE")

    for user in (ANN, BEN, CAT, "U4DEE"):
        slack.send(slack.requests.shortcut(GENERAL, user, cat))
    slack.settle()

    assert _public_posts(slack) == []
    assert sorted(c.params["user"] for c in slack.api.calls_to("chat.postEphemeral")) == sorted(
        [ANN, BEN, CAT, "U4DEE"]
    )


@pytest.mark.slow
def test_share_posts_the_reading_in_the_thread_once_and_a_second_share_links_to_it(
    slack: SlackHarness,
):
    root, _, cat = _thread(slack)
    slack.send(slack.requests.shortcut(GENERAL, ANN, cat))
    slack.settle()
    value = _buttons(slack.api.calls_to("chat.postEphemeral")[0])[SHARE_ACTION]

    slack.send(slack.requests.action(GENERAL, ANN, SHARE_ACTION, value, root["ts"]))
    slack.settle()
    slack.send(slack.requests.action(GENERAL, BEN, SHARE_ACTION, value, root["ts"]))
    slack.settle()

    (posted,) = slack.api.calls_to("chat.postMessage")
    assert posted.params["thread_ts"] == root["ts"]
    shown = slack.blocks_text(posted)
    assert f"Shared by <@{ANN}>" in shown
    assert SHARE_ACTION not in shown, "a shared reading has no Share button"
    (told,) = slack.responses_text()
    assert told.startswith(messages.ALREADY_SHARED.split("{link}")[0])
    assert slack.api.permalink(GENERAL, posted_ts(slack), root["ts"]) in told
    shared = slack.runtime.posts.shared_reading(GENERAL_KEY, cat["ts"])
    assert shared is not None and shared.post_id == posted_ts(slack)


@pytest.mark.slow
def test_someone_asking_after_a_share_gets_a_private_reading_that_links_to_the_shared_one(
    slack: SlackHarness,
):
    root, _, cat = _thread(slack)
    slack.send(slack.requests.shortcut(GENERAL, ANN, cat))
    slack.settle()
    value = _buttons(slack.api.calls_to("chat.postEphemeral")[0])[SHARE_ACTION]
    slack.send(slack.requests.action(GENERAL, ANN, SHARE_ACTION, value, root["ts"]))
    slack.settle()

    slack.send(slack.requests.shortcut(GENERAL, BEN, cat))
    slack.settle()

    later = slack.api.calls_to("chat.postEphemeral")[-1]
    assert later.params["user"] == BEN
    buttons = _buttons(later)
    assert SHARE_ACTION not in buttons, "a message has one shared reading"
    assert buttons[SHARED_LINK_ACTION] == slack.api.permalink(GENERAL, posted_ts(slack), root["ts"])
    assert DETAILS_ACTION in buttons
    assert len(slack.api.calls_to("chat.postMessage")) == 1, "nothing more is posted"
    pressed = slack.send(slack.requests.action(GENERAL, BEN, SHARED_LINK_ACTION, "", root["ts"]))
    assert pressed.status == 200, "the link's click is acknowledged"


def posted_ts(slack: SlackHarness) -> str:
    (posted,) = slack.api.calls_to("chat.postMessage")
    message = next(
        m
        for m in slack.api.channels[GENERAL].messages
        if m.get("bot_id") and m.get("thread_ts") == posted.params["thread_ts"]
    )
    return message["ts"]


@pytest.mark.slow
def test_details_open_a_modal_with_the_numbers_behind_each_connection(slack: SlackHarness):
    chatter = [(CAT, f"Lunch plan number {i}: the ramen place or the salad bar.") for i in range(8)]
    lines = [(BEN, "The payment module tests time out on the build server."), *chatter]
    lines.append((ANN, "The payment module tests timed out on the build server again today."))
    last = slack.seed(lines)[-1]
    slack.send(slack.requests.shortcut(GENERAL, ANN, last))
    slack.settle()
    value = _buttons(slack.api.calls_to("chat.postEphemeral")[0])[DETAILS_ACTION]

    slack.send(slack.requests.action(GENERAL, ANN, DETAILS_ACTION, value))
    slack.settle()

    (opened,) = slack.api.calls_to("views.open")
    assert "Reading…" in json.dumps(opened.params, ensure_ascii=False), "opened at once"
    (updated,) = slack.api.calls_to("views.update")
    shown = json.dumps(slack.api.views[updated.params["view_id"]], ensure_ascii=False)
    reading = slack.runtime.engine.read(GENERAL_KEY, last["ts"], EVERYTHING)
    assert reading.context.associations, "the payment tests are recalled"
    for item in reading.context.associations:
        assert f"{item.similarity:.2f}" in shown and f"{item.threshold:.2f}" in shown
    assert _public_posts(slack) == []


@pytest.mark.slow
def test_a_button_pressed_by_someone_outside_the_channel_is_refused_privately(
    slack: SlackHarness,
):
    secret = slack.seed([(BEN, "The acquisition closes on Friday.")], channel=SECRET)[0]
    value = ReadingTarget(SECRET, secret["ts"]).value()

    slack.send(slack.requests.action(SECRET, ANN, SHARE_ACTION, value))
    slack.send(slack.requests.action(SECRET, ANN, DETAILS_ACTION, value))
    slack.settle()

    assert _public_posts(slack) == []
    assert messages.NOT_A_MEMBER in slack.responses_text()
    shown = json.dumps(slack.api.views, ensure_ascii=False)
    assert "acquisition" not in shown and "acquisition" not in json.dumps(slack.responses_text())


@pytest.mark.slow
def test_a_refusal_or_a_failure_is_never_posted_for_everyone(slack: SlackHarness):
    slack.seed([(ANN, "Something to read.")])
    missing = "https://awai-test.slack.com/archives/C1GENERAL/p1700000099000100"

    slack.send(slack.requests.command(f"read {missing}", GENERAL, ANN))
    slack.settle()

    assert _public_posts(slack) == []
    assert slack.responses_text() == [messages.NOT_FOUND], "the person was told, privately"


def test_asking_again_after_a_reading_that_could_not_be_had_is_not_refused(slack: SlackHarness):
    """The person was told to try again ("still being stored", "not found"): the second request
    is read again, not told that a reading is already on its way."""
    slack.seed([(ANN, "Something to read.")])
    missing = "https://awai-test.slack.com/archives/C1GENERAL/p1700000099000100"

    for _ in range(2):
        slack.send(slack.requests.command(f"read {missing}", GENERAL, ANN))
        slack.settle()

    assert slack.responses_text() == [messages.NOT_FOUND, messages.NOT_FOUND]


@pytest.mark.slow
def test_a_long_private_reading_keeps_its_buttons_within_slacks_block_limit(
    slack: SlackHarness,
):
    lines = [
        (ANN if i % 2 else BEN, f"Point {i}: the payment retries double-charge people.")
        for i in range(40)
    ]
    last = slack.seed(lines)[-1]

    slack.send(slack.requests.shortcut(GENERAL, CAT, last))
    slack.settle()

    (private,) = slack.api.calls_to("chat.postEphemeral")
    blocks = private.params["blocks"]
    blocks = json.loads(blocks) if isinstance(blocks, str) else blocks
    assert len(blocks) <= MAX_BLOCKS and blocks[-1]["type"] == "actions"
    assert BOT_USER_ID in slack.api.channels[GENERAL].members


@pytest.mark.slow
def test_a_reading_is_in_the_askers_slack_language_whatever_the_message_is_in(
    slack: SlackHarness,
):
    slack.api.add_user("U4DEE", "Dee", locale="ja-JP")
    slack.api.channels[GENERAL].members.add("U4DEE")
    *_, cat = _thread(slack)

    slack.send(slack.requests.shortcut(GENERAL, "U4DEE", cat))
    slack.settle()

    (private,) = slack.api.calls_to("chat.postEphemeral")
    shown = slack.blocks_text(private)
    assert "読み" in shown and "詳細" in shown, "Japanese words for a reader who set Slack to it"
    assert "Reading" not in shown and "Just before" not in shown
    (info,) = [c for c in slack.api.calls_to("users.info") if c.params["user"] == "U4DEE"]
    assert str(info.params["include_locale"]).lower() in ("1", "true")


@pytest.mark.slow
def test_without_a_locale_one_japanese_message_in_an_english_channel_reads_in_english(
    slack: SlackHarness,
):
    _thread(slack)
    (japanese,) = slack.seed([(ANN, "行きます！")])

    slack.send(slack.requests.shortcut(GENERAL, BEN, japanese))
    slack.settle()

    (private,) = slack.api.calls_to("chat.postEphemeral")
    shown = slack.blocks_text(private)
    assert "行きます" in shown, "the message itself is quoted as said"
    assert "Reading: Ann" in shown and "Just before" in shown, "the channel talks in English"
    assert "読み" not in shown and "直前の流れ" not in shown
