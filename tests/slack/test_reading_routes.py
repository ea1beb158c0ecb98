"""Asking for a reading: the shortcut, ``@AWAI read`` and ``/awai read``, and every refusal."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable

import pytest

from awai_engine.visibility import EVERYTHING
from bots.actions.read import LOOK_BACK
from bots.slack import messages
from bots.slack.links import permalink
from tests.slack.conftest import ANN, BEN, CAT, GENERAL, GENERAL_KEY, SECRET, SlackHarness
from tests.slack.mock_slack_api import BOT_USER_ID


def _ack_text(response) -> str:
    """What the person sees right away: Bolt sends a bare text, or JSON when there are blocks."""
    assert response.status == 200
    return json.loads(response.body)["text"] if response.body.startswith("{") else response.body


def _reads_speaker(fallback: str, name: str) -> bool:
    """The reading's notification text names whose message it reads (before its first colon)."""
    return fallback.startswith("Reading") and name in fallback.partition(":")[0]


def _thread(slack: SlackHarness) -> list[dict]:
    root = slack.seed([(ANN, "Should we move the launch to next week? The tests are flaky.")])[0]
    replies = slack.seed(
        [
            (BEN, "The flaky tests are in the payment module, I can fix them by Wednesday."),
            (CAT, "If Ben fixes them by Wednesday we can keep the original launch date."),
        ],
        thread_ts=root["ts"],
    )
    return [root, *replies]


@pytest.mark.slow
def test_shortcut_in_a_thread_gives_the_asker_the_reading_in_that_thread_citing_each_message(
    slack: SlackHarness,
):
    root, ben, cat = _thread(slack)

    response = slack.send(slack.requests.shortcut(GENERAL, ANN, cat))
    slack.settle()

    assert response.status == 200 and response.body == ""
    assert slack.api.calls_to("chat.postMessage") == slack.api.calls_to("chat.update") == []
    (shown_to_ann,) = slack.readings()
    assert (shown_to_ann.params["user"], shown_to_ann.params["thread_ts"]) == (ANN, root["ts"])
    shown = slack.blocks_text(shown_to_ann)
    assert "Ben fixes them by Wednesday" in shown
    reading = slack.runtime.engine.read(GENERAL_KEY, cat["ts"], EVERYTHING)
    cited = {item.message.message_id for item in reading.context.flow.earlier}
    if reading.context.flow.previous:
        cited.add(reading.context.flow.previous.message.message_id)
    cited |= {item.source.message_id for item in reading.context.associations}
    assert {root["ts"], ben["ts"]} <= cited
    for message_id in cited:
        thread = None if message_id == root["ts"] else root["ts"]
        link = permalink(slack.api.workspace_url, GENERAL, message_id, thread)
        assert link in shown, f"no permalink for cited message {message_id}"
    assert _reads_speaker(shown_to_ann.params["text"], "Cat")


@pytest.mark.slow
def test_the_same_person_asking_twice_within_a_minute_gets_one_reading(slack: SlackHarness):
    message = slack.seed([(ANN, "Let us pick the blue design."), (BEN, "Blue works for me.")])[1]

    slack.send(slack.requests.shortcut(GENERAL, ANN, message))
    slack.send(slack.requests.shortcut(GENERAL, ANN, message))
    slack.settle()
    slack.send(slack.requests.shortcut(GENERAL, CAT, message))
    slack.settle()

    assert [call.params["user"] for call in slack.readings()] == [ANN, CAT], "once each"
    assert slack.responses_text() == [messages.ALREADY_READING]


@pytest.mark.slow
def test_mention_in_a_thread_reads_the_message_just_before_it(slack: SlackHarness):
    root, _, cat = _thread(slack)
    mention = slack.api.add_message(GENERAL, BEN, f"<@{BOT_USER_ID}> read", thread_ts=root["ts"])

    slack.send(slack.requests.event({**mention, "type": "app_mention", "channel": GENERAL}))
    slack.settle()

    (reading,) = slack.readings()
    assert _reads_speaker(reading.params["text"], "Cat")
    assert (reading.params["user"], reading.params["thread_ts"]) == (BEN, root["ts"])
    assert mention["ts"] not in slack.stored_texts(), "a command to AWAI is not conversation"
    assert cat["ts"] in slack.stored_texts()


def test_at_awai_read_looks_back_as_far_as_on_discord(slack: SlackHarness):
    slack.api.add_message(GENERAL, ANN, "Not stored yet.")
    mention = slack.api.add_message(GENERAL, BEN, f"<@{BOT_USER_ID}> read")

    slack.send(slack.requests.event({**mention, "type": "app_mention", "channel": GENERAL}))
    slack.settle()

    (history,) = slack.api.calls_to("conversations.history")
    assert int(history.params["limit"]) == LOOK_BACK  # the one value both platforms use
    assert _reads_speaker(slack.readings()[0].params["text"], "Ann")


@pytest.mark.slow
def test_a_redelivered_mention_is_acknowledged_and_goes_no_further(slack: SlackHarness):
    """Slack's retries of an event stop in one Bolt middleware (bots.slack.delivery): no second
    reading, and not even the "already reading" notice a second request would get."""
    root, _, _ = _thread(slack)
    mention = slack.api.add_message(GENERAL, BEN, f"<@{BOT_USER_ID}> read", thread_ts=root["ts"])
    event = {**mention, "type": "app_mention", "channel": GENERAL}

    first = slack.send(slack.requests.event(event, event_id="Ev-mention"))
    slack.settle()
    answered = slack.api.method_order()
    retries = [
        slack.send(slack.requests.event(event, event_id="Ev-mention", retry=n)) for n in (1, 2)
    ]
    slack.settle()

    assert [response.status for response in (first, *retries)] == [200, 200, 200]
    assert any(method.startswith("chat.") for method in answered), "the first is answered"
    assert slack.api.method_order() == answered, "the retries call Slack for nothing"


@pytest.mark.slow
def test_slash_read_with_a_good_link_reads_in_the_linked_messages_thread(slack: SlackHarness):
    first, second = slack.seed(
        [(ANN, "I think we need a second designer."), (BEN, "We cannot afford one this quarter.")]
    )
    link = slack.api.permalink(GENERAL, second["ts"])

    response = slack.send(slack.requests.command(f"read {link}", GENERAL, CAT))
    slack.settle()

    assert _ack_text(response) == messages.READ_QUEUED_EPHEMERAL
    (reading,) = slack.readings()
    assert (reading.params["channel"], reading.params["thread_ts"]) == (GENERAL, second["ts"])
    shown = slack.blocks_text(reading)
    assert "cannot afford one this quarter" in shown
    assert slack.api.permalink(GENERAL, first["ts"]) in shown


def test_slash_read_with_a_malformed_link_is_answered_at_once_and_posts_nothing(
    slack: SlackHarness,
):
    for text in ("read not-a-link", "read https://awai-test.slack.com/archives/C1/p12", "read"):
        response = slack.send(slack.requests.command(text, GENERAL, ANN))
        answer = _ack_text(response)
        assert "link" in answer and ("Copy link" in answer or "does not look" in answer)
    slack.settle()
    assert slack.api.calls_to("chat.postMessage") == []


def test_slash_read_of_a_private_channel_the_person_is_not_in_is_refused_politely(
    slack: SlackHarness,
):
    secret = slack.seed([(BEN, "The acquisition closes on Monday.")], channel=SECRET)[0]

    slack.send(
        slack.requests.command(f"read {slack.api.permalink(SECRET, secret['ts'])}", GENERAL, ANN)
    )
    slack.settle()

    assert slack.responses_text() == [messages.NOT_A_MEMBER]
    assert slack.api.calls_to("chat.postMessage") == []
    assert slack.api.calls_to("chat.update") == []


def test_slash_read_of_another_workspace_or_a_deleted_message_says_so(slack: SlackHarness):
    _, deleted = slack.seed([(ANN, "Keep this one."), (BEN, "This one will be deleted.")])
    slack.runtime.engine.delete(GENERAL_KEY, deleted["ts"])
    slack.api.channels[GENERAL].messages.remove(deleted)
    slack.api.add_channel("C9THEIRS", "theirs", {ANN, BOT_USER_ID}, team="T9OTHER")
    theirs = slack.api.add_message("C9THEIRS", ANN, "Another team's message.")
    foreign = slack.api.permalink("C9THEIRS", theirs["ts"]).replace("awai-test", "other-team")

    slack.send(slack.requests.command(f"read {foreign}", GENERAL, ANN))
    slack.send(
        slack.requests.command(f"read {slack.api.permalink(GENERAL, deleted['ts'])}", GENERAL, ANN)
    )
    slack.settle()

    assert sorted(slack.responses_text()) == sorted([messages.OTHER_WORKSPACE, messages.NOT_FOUND])
    assert slack.readings() == [] and slack.api.calls_to("chat.update") == []


@pytest.mark.slow
def test_a_message_from_before_awai_joined_is_fetched_read_and_flagged(slack: SlackHarness):
    old = slack.api.add_message(GENERAL, ANN, "An old message AWAI never saw.")

    slack.send(
        slack.requests.command(f"read {slack.api.permalink(GENERAL, old['ts'])}", GENERAL, BEN)
    )
    slack.settle()

    assert slack.stored_texts() == {old["ts"]: "An old message AWAI never saw."}
    (reading,) = slack.readings()
    shown = slack.blocks_text(reading)
    assert "An old message AWAI never saw." in shown
    assert "/awai backfill" in shown


def test_help_and_unknown_words_are_answered_in_the_acknowledgement(slack: SlackHarness):
    assert _ack_text(slack.send(slack.requests.command("help", GENERAL, ANN))) == messages.HELP
    assert _ack_text(slack.send(slack.requests.command("", GENERAL, ANN))) == messages.HELP
    unknown = _ack_text(slack.send(slack.requests.command("dance", GENERAL, ANN)))
    assert unknown.startswith("AWAI does not know `dance`")


@pytest.mark.slow
def test_when_slack_refuses_the_private_reading_the_person_is_told_privately(
    slack: SlackHarness,
):
    message = slack.seed([(ANN, "Let us vote on Friday."), (BEN, "Friday is too late.")])[1]
    slack.api.fail("chat.postEphemeral", error="invalid_blocks")

    slack.send(slack.requests.shortcut(GENERAL, ANN, message))
    slack.settle()

    assert slack.responses_text() == [messages.CANNOT_POST]
    assert slack.api.calls_to("chat.postMessage") == slack.api.calls_to("chat.update") == []


@pytest.mark.slow
def test_thread_placement_shares_each_reading_in_the_thread_once_with_no_placeholder(
    make_slack: Callable[..., SlackHarness],
):
    slack = make_slack(reply_placement="thread")
    root = slack.seed([(ANN, "Which vendor should we pick?")])[0]
    reply = slack.seed([(BEN, "The cheaper one, support matters less.")], thread_ts=root["ts"])[0]

    slack.send(slack.requests.shortcut(GENERAL, CAT, reply))
    slack.settle()
    slack.send(slack.requests.shortcut(GENERAL, ANN, reply))
    slack.settle()

    (posted,) = slack.api.calls_to("chat.postMessage")
    assert posted.params["thread_ts"] == root["ts"]
    assert "support matters less" in slack.blocks_text(posted)
    assert slack.api.calls_to("chat.update") == [] and slack.readings() == []
    (told,) = slack.responses_text()
    assert told.startswith(messages.ALREADY_SHARED.split("{link}")[0])


@pytest.mark.slow
def test_mention_right_after_a_reply_reads_that_reply_though_it_is_not_stored_yet(
    slack: SlackHarness,
):
    root, _, _ = _thread(slack)
    gate = threading.Event()
    slack.bot.services.workers.in_order(gate.wait, "a slow ingest ahead of the reply")
    reply = slack.say(ANN, "Then Wednesday it is, and we launch as planned.", thread_ts=root["ts"])
    mention = slack.api.add_message(GENERAL, BEN, f"<@{BOT_USER_ID}> read", thread_ts=root["ts"])
    slack.send(slack.requests.event({**mention, "type": "app_mention", "channel": GENERAL}))

    try:
        _wait_until(slack.readings)
    finally:
        gate.set()
    slack.settle()

    (reading,) = slack.readings()
    assert _reads_speaker(reading.params["text"], "Ann")
    assert "we launch as planned" in slack.blocks_text(reading)
    assert reply["ts"] in slack.stored_texts()


@pytest.mark.slow
def test_mention_at_the_top_level_reads_the_last_message_people_said_there(slack: SlackHarness):
    _thread(slack)  # replies are not the channel's top level
    said = slack.seed([(CAT, "Lunch at noon?")])[0]
    slack.api.add_message(GENERAL, None, "Build passed", bot_id="BCI", subtype="bot_message")
    mention = slack.api.add_message(GENERAL, BEN, f"<@{BOT_USER_ID}> read")

    slack.send(slack.requests.event({**mention, "type": "app_mention", "channel": GENERAL}))
    slack.settle()

    (reading,) = slack.readings()
    assert _reads_speaker(reading.params["text"], "Cat")
    assert reading.params["thread_ts"] == said["ts"]


def _wait_until(condition: Callable[[], object], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the reading never came"
        time.sleep(0.05)


@pytest.mark.slow
def test_a_link_to_our_channel_under_another_host_is_ours_by_team_id(slack: SlackHarness):
    said = slack.seed([(ANN, "We renamed the workspace last spring.")])[0]
    for host in ("old-name.slack.com", "awai-org.enterprise.slack.com"):
        link = slack.api.permalink(GENERAL, said["ts"]).replace("awai-test.slack.com", host)
        slack.send(slack.requests.command(f"read {link}", GENERAL, ANN if "old" in host else BEN))
    slack.settle()

    assert slack.responses_text() == []
    assert len(slack.readings()) == 2


def test_citations_are_slacks_own_permalinks_asked_once_per_message(slack: SlackHarness):
    slack.api.permalink_base = "https://awai-org.enterprise.slack.com/"
    _, ben, cat = _thread(slack)

    for person in (ANN, BEN):
        slack.send(slack.requests.shortcut(GENERAL, person, cat))
        slack.settle()

    shown = [slack.blocks_text(call) for call in slack.readings()]
    assert len(shown) == 2
    org_link = (
        f"https://awai-org.enterprise.slack.com/archives/{GENERAL}/p{ben['ts'].replace('.', '')}"
    )
    assert all(org_link in text for text in shown)
    assert "awai-test.slack.com/archives" not in "".join(shown)
    asked = [call.params["message_ts"] for call in slack.api.calls_to("chat.getPermalink")]
    assert len(asked) == len(set(asked)), "each message's permalink is asked once"
