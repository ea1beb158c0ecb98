"""A Slack private channel linked from a public one: its words reach only its members, by every
route (slash command and mention with its link, the shortcut, recall, the digest).

A Slack conversation is an AWAI channel of its own, so the checks are Slack's membership
(``conversations.members``, answered by the mock API from each channel's members) and where the
reading is posted (in the linked message's own thread, which only its members see).
"""

from __future__ import annotations

import json

import pytest

from bots.slack import messages
from tests.slack.conftest import ANN, BEN, GENERAL, SECRET, SlackHarness
from tests.slack.mock_slack_api import BOT_USER_ID

WORD = "marmalith"


def _channels(slack: SlackHarness) -> tuple[dict, dict]:
    """The same topic in #general and in the private channel Ann is not in."""
    secret = slack.seed(
        [(BEN, f"The {WORD} acquisition closes on Monday; the release waits for it.")],
        channel=SECRET,
    )[0]
    public = slack.seed(
        [
            (ANN, "When does the release go out?"),
            (BEN, "The release waits for the acquisition to close."),
        ]
    )[-1]
    return secret, public


def _in_general(slack: SlackHarness) -> str:
    """Everything AWAI posted, updated or showed privately in #general, and every private
    answer, as text."""
    calls = [
        *slack.api.calls_to("chat.postMessage"),
        *slack.api.calls_to("chat.update"),
        *slack.api.calls_to("chat.postEphemeral"),
    ]
    in_general = [call.params for call in calls if call.params.get("channel") == GENERAL]
    return json.dumps([in_general, slack.responses_text()], ensure_ascii=False)


def test_a_non_member_gets_nothing_of_the_private_channel_by_mention_or_command(
    slack: SlackHarness,
) -> None:
    secret, _ = _channels(slack)
    link = slack.api.permalink(SECRET, secret["ts"])
    mention = slack.api.add_message(GENERAL, ANN, f"<@{BOT_USER_ID}> read {link}")
    slack.send(slack.requests.event({**mention, "type": "app_mention", "channel": GENERAL}))
    slack.send(slack.requests.command(f"read {link}", GENERAL, ANN))
    slack.settle()

    assert WORD not in _in_general(slack)
    assert slack.api.calls_to("chat.update") == []  # no reading was made at all
    (told,) = slack.api.calls_to("chat.postEphemeral")  # the mention's answer, to Ann only
    assert told.params["user"] == ANN and told.params["text"] == messages.NOT_A_MEMBER
    assert slack.responses_text() == [messages.NOT_A_MEMBER]  # the command's


@pytest.mark.slow
def test_a_member_linking_it_from_general_gets_the_reading_in_the_private_channel_only(
    slack: SlackHarness,
) -> None:
    secret, public = _channels(slack)
    link = slack.api.permalink(SECRET, secret["ts"])
    slack.send(slack.requests.command(f"read {link}", GENERAL, BEN))
    slack.send(slack.requests.shortcut(GENERAL, BEN, public))  # a #general message, read by Ben
    slack.send(slack.requests.command("digest", GENERAL, BEN))
    slack.settle()

    private = [call.params for call in slack.readings() if call.params["channel"] == SECRET]
    assert WORD in json.dumps(private)  # the member's own reading, in the private channel
    assert WORD not in _in_general(slack)  # neither recalled nor digested into #general
