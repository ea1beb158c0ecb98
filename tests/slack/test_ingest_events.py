"""Live ingest from signed Events API requests: messages, replies, edits, deletes, redelivery."""

from __future__ import annotations

import pytest

from tests.slack.conftest import ANN, BEN, CAT, GENERAL, GENERAL_KEY, SlackHarness
from tests.slack.mock_slack_api import BOT_ID, BOT_USER_ID


def test_a_channel_message_is_stored_as_plain_text_with_mentions_resolved(slack: SlackHarness):
    message = slack.say(
        ANN,
        f"<@{BEN}> can you check *the* <https://example.com/plan|plan> &amp; <#{GENERAL}|general>?",
    )
    slack.say(CAT, f"Thanks <@{BEN}>, and `keep *this* code` as it is")
    slack.settle()

    timeline = slack.runtime.store.timeline(GENERAL_KEY)
    first = timeline.messages[timeline.position_of[message["ts"]]]
    assert first.text == "@Ben can you check the plan (https://example.com/plan) & #general?"
    assert first.ref.speaker_name == "Ann"
    assert first.addressees == ("Ben",)
    assert timeline.messages[1].text == "Thanks @Ben, and `keep *this* code` as it is"
    asked = [call.params["user"] for call in slack.api.calls_to("users.info")]
    assert sorted(asked) == sorted({ANN, BEN, CAT}), "each name is asked once, then cached"


def test_a_thread_reply_keeps_its_thread_root(slack: SlackHarness):
    root = slack.say(ANN, "Shall we ship on Friday?")
    reply = slack.say(BEN, "Friday is fine by me.", thread_ts=root["ts"])
    slack.settle()

    timeline = slack.runtime.store.timeline(GENERAL_KEY)
    assert timeline.messages[timeline.position_of[reply["ts"]]].ref.thread_root == root["ts"]
    assert timeline.messages[timeline.position_of[root["ts"]]].ref.thread_root is None


@pytest.mark.slow
def test_an_edit_replaces_the_text_and_a_delete_removes_the_message(slack: SlackHarness):
    kept = slack.say(ANN, "We should ship on Friday.")
    gone = slack.say(BEN, "I will write the release notes.")
    slack.settle()

    edited = {**kept, "text": "We should ship on Monday.", "edited": {"user": ANN, "ts": "1"}}
    slack.send(
        slack.requests.event(
            {
                "type": "message",
                "subtype": "message_changed",
                "channel": GENERAL,
                "message": edited,
                "previous_message": kept,
                "ts": slack.api.next_ts(),
            }
        )
    )
    slack.send(
        slack.requests.event(
            {
                "type": "message",
                "subtype": "message_deleted",
                "channel": GENERAL,
                "deleted_ts": gone["ts"],
                "previous_message": gone,
                "ts": slack.api.next_ts(),
            }
        )
    )
    slack.settle()

    assert slack.stored_texts() == {kept["ts"]: "We should ship on Monday."}
    slack.deliver_message_event(gone, event_id="Ev-late-copy")  # e.g. a backfill page, later
    slack.settle()
    assert gone["ts"] not in slack.stored_texts(), "a deleted message is never stored again"


def test_a_message_edited_into_a_command_to_awai_or_into_no_words_is_forgotten(
    slack: SlackHarness,
):
    commanded = slack.say(ANN, "The vendor contract renews on the 9th.")
    emptied = slack.say(BEN, "Budget is 40k for the vendor.")
    kept = slack.say(CAT, "Let's ask legal first.")
    slack.settle()

    _changed(slack, commanded, f"<@{BOT_USER_ID}> read", slack.api.next_ts())
    _changed(slack, emptied, "", slack.api.next_ts())  # only a file is left, say
    slack.settle()

    assert slack.stored_texts() == {kept["ts"]: "Let's ask legal first."}


def test_words_edited_back_after_a_command_edit_are_read_again_and_late_copies_change_nothing(
    slack: SlackHarness,
):
    before = slack.say(ANN, "Who owns the vendor contract?")
    commanded = slack.say(BEN, "The vendor contract renews on the 9th.")
    after = slack.say(CAT, "Let's ask legal first.")
    slack.settle()
    withdrawing = slack.api.next_ts()
    _changed(slack, commanded, f"<@{BOT_USER_ID}> read", withdrawing)
    slack.settle()
    assert commanded["ts"] not in slack.stored_texts()

    _changed(slack, commanded, "The vendor contract renews on the 12th.", slack.api.next_ts())
    slack.settle()
    _changed(slack, commanded, f"<@{BOT_USER_ID}> read", withdrawing)  # a late copy of it
    slack.deliver_message_event(commanded, event_id="Ev-original-again")  # and of the original
    slack.settle()

    assert slack.stored_texts()[commanded["ts"]] == "The vendor contract renews on the 12th."
    timeline = slack.runtime.store.timeline(GENERAL_KEY)
    assert [m.message_id for m in timeline.messages] == [before["ts"], commanded["ts"], after["ts"]]


def test_a_redelivered_event_is_stored_once_and_cannot_undo_a_later_edit(slack: SlackHarness):
    original = slack.say(ANN, "The budget is ten thousand.")
    first_delivery = f"Ev-{original['ts']}"
    slack.settle()
    edited = {**original, "text": "The budget is twelve thousand."}
    slack.send(
        slack.requests.event(
            {"type": "message", "subtype": "message_changed", "channel": GENERAL, "message": edited}
        )
    )
    slack.settle()

    for retry in (1, 2, 3):  # Slack retries the first event with X-Slack-Retry-Num
        slack.deliver_message_event(original, event_id=first_delivery, retry=retry)
    slack.settle()

    assert slack.stored_texts() == {original["ts"]: "The budget is twelve thousand."}
    assert slack.runtime.store.message_count(GENERAL_KEY) == 1


def test_bot_posts_joins_and_commands_to_awai_are_not_conversation(slack: SlackHarness):
    slack.say(ANN, "A real message.")
    other_bot = slack.api.add_message(
        GENERAL, None, "Build passed", bot_id="BCI", subtype="bot_message"
    )
    join = slack.api.add_message(
        GENERAL, CAT, f"<@{CAT}> has joined the channel", subtype="channel_join"
    )
    to_awai = slack.api.add_message(GENERAL, BEN, f"<@{BOT_USER_ID}> read")
    own = slack.api.add_message(GENERAL, BOT_USER_ID, "Reading…", bot_id=BOT_ID)
    for message in (other_bot, join, to_awai, own):
        slack.deliver_message_event(message)
    slack.settle()

    assert list(slack.stored_texts().values()) == ["A real message."]


def _changed(slack: SlackHarness, original: dict, text: str, edited_ts: str) -> None:
    edited = {**original, "text": text, "edited": {"user": original["user"], "ts": edited_ts}}
    slack.send(
        slack.requests.event(
            {
                "type": "message",
                "subtype": "message_changed",
                "channel": GENERAL,
                "message": edited,
                "previous_message": original,
                "ts": edited_ts,
            }
        )
    )


def test_a_retry_under_a_new_event_id_cannot_undo_an_edit(slack: SlackHarness):
    original = slack.say(ANN, "The budget is ten thousand.")
    slack.settle()
    _changed(slack, original, "The budget is twelve thousand.", slack.api.next_ts())
    slack.settle()

    slack.deliver_message_event(original, event_id="Ev-retried-elsewhere", retry=1)
    slack.settle()

    assert slack.stored_texts() == {original["ts"]: "The budget is twelve thousand."}


def test_edits_arriving_out_of_order_leave_the_newest_text(slack: SlackHarness):
    original = slack.say(ANN, "We meet at nine.")
    slack.settle()
    first, second = slack.api.next_ts(), slack.api.next_ts()
    _changed(slack, original, "We meet at ten.", second)  # the later edit is delivered first
    slack.settle()
    _changed(slack, original, "We meet at half past nine.", first)
    slack.settle()

    assert slack.stored_texts() == {original["ts"]: "We meet at ten."}


@pytest.mark.slow
def test_a_history_page_fetched_before_an_edit_cannot_undo_it(slack: SlackHarness):
    original = slack.say(ANN, "Ship it on Friday.")
    slack.say(BEN, "Friday works.")
    slack.settle()
    _changed(slack, original, "Ship it on Monday.", slack.api.next_ts())
    slack.settle()

    # Slack still shows the page as it was when it was fetched: the original, unedited.
    slack.send(slack.requests.command("backfill", GENERAL, ANN))
    slack.settle()

    assert slack.stored_texts()[original["ts"]] == "Ship it on Monday."
