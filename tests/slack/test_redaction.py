"""AWAI's own posts lose a deleted or forgotten message's words, and leaving a channel purges it.

Driven as Slack would: signed events and commands through the Bolt app, answered by the mock Web
API, which records every ``chat.update`` and ``files.delete``.
"""

from __future__ import annotations

import json

import pytest

from bots.actions.redact import REMOVED_NOTICE
from bots.slack.blocks import SHARE_ACTION, ReadingTarget
from tests.slack.conftest import ANN, BEN, CAT, GENERAL, GENERAL_KEY, SECRET, SlackHarness
from tests.slack.mock_slack_api import BOT_USER_ID, TEAM_ID

WORDS = "flakyzebra"


def _reading_posted(slack: SlackHarness) -> tuple[dict, dict]:
    """Ben's message, then Cat's answer read with the shortcut and shared with its Share button:
    a reading posted in the thread for everyone."""
    ben, cat = slack.seed(
        [
            (BEN, f"The {WORDS} integration tests broke the build again."),
            (CAT, f"Then let's quarantine the {WORDS} tests until they are fixed."),
        ]
    )
    slack.send(slack.requests.shortcut(GENERAL, ANN, cat))
    slack.settle()
    (private,) = slack.readings()
    share = ReadingTarget(GENERAL, cat["ts"]).value()
    assert share in slack.blocks_text(private).replace('\\"', '"')
    slack.send(slack.requests.action(GENERAL, ANN, SHARE_ACTION, share))
    slack.settle()
    (posted,) = [
        m
        for m in slack.api.channels[GENERAL].messages
        if m.get("bot_id") and WORDS in json.dumps(m.get("blocks"))
    ]
    return ben, posted


def test_deleting_a_quoted_message_redacts_the_shared_reading_that_quotes_it(
    slack: SlackHarness,
) -> None:
    ben, reading = _reading_posted(slack)
    assert slack.runtime.store.posts.count(GENERAL_KEY) == 1

    slack.send(
        slack.requests.event(
            {
                "type": "message",
                "subtype": "message_deleted",
                "channel": GENERAL,
                "deleted_ts": ben["ts"],
                "previous_message": ben,
                "event_ts": ben["ts"],
            }
        )
    )
    slack.settle()

    (redacted,) = [
        c
        for c in slack.api.calls_to("chat.update")
        if c.params["ts"] == reading["ts"] and c.params["text"] == REMOVED_NOTICE
    ]
    assert WORDS not in json.dumps(redacted.params)
    shown = slack.api.find(GENERAL, reading["ts"])
    assert shown is not None and WORDS not in json.dumps(shown)
    assert slack.runtime.store.posts.count(GENERAL_KEY) == 0


@pytest.mark.slow
def test_forget_me_redacts_the_digest_message_and_deletes_its_picture(slack: SlackHarness) -> None:
    slack.seed([(BEN, f"The {WORDS} budget must stay under control, item {i}.") for i in range(6)])
    slack.send(slack.requests.command("digest", GENERAL, ANN))
    slack.settle()
    (digest,) = slack.api.calls_to("chat.postMessage")
    assert "Ben" in json.dumps(digest.params)
    assert len(slack.api.uploads) == 1

    slack.send(slack.requests.command("forget-me", GENERAL, BEN))
    slack.settle()

    updated = [c for c in slack.api.calls_to("chat.update") if c.params["text"] == REMOVED_NOTICE]
    assert len(updated) == 1 and WORDS not in json.dumps(updated[0].params)
    shown = slack.api.find(GENERAL, updated[0].params["ts"])
    assert shown is not None and shown["text"] == REMOVED_NOTICE
    assert "Ben" not in json.dumps(shown)
    assert slack.api.uploads == {}  # the picture, a map of Ben's thoughts, is deleted


@pytest.mark.slow
def test_removing_awai_from_a_channel_purges_that_channel_only(slack: SlackHarness) -> None:
    slack.seed([(ANN, "Our plan for the launch.")])
    slack.seed([(BEN, "Private planning.")], channel=SECRET)

    slack.send(
        slack.requests.event(
            {
                "type": "member_left_channel",
                "user": BOT_USER_ID,
                "channel": SECRET,
                "channel_type": "G",
            }
        )
    )
    slack.settle()
    assert slack.runtime.store.message_count(f"{GENERAL_KEY.rsplit(':', 1)[0]}:{SECRET}") == 0
    assert slack.runtime.store.message_count(GENERAL_KEY) == 1

    slack.send(
        slack.requests.event({"type": "member_left_channel", "user": ANN, "channel": GENERAL})
    )
    slack.settle()
    assert slack.runtime.store.message_count(GENERAL_KEY) == 1  # a person leaving changes nothing

    slack.send(slack.requests.event({"type": "channel_left", "channel": GENERAL}))
    slack.settle()
    assert slack.runtime.store.channels() == []


@pytest.mark.parametrize("event", ["channel_deleted", "group_deleted"])
def test_a_deleted_channel_is_purged_and_nothing_cached_of_it_is_kept(
    slack: SlackHarness, event: str
) -> None:
    slack.seed([(ANN, "Our plan for the launch.")])
    directory, client = slack.bot.services.directory, slack.bot.clients.for_workspace(TEAM_ID)
    assert client is not None
    ts = slack.api.channels[GENERAL].messages[0]["ts"]

    def asked() -> tuple[str, str, int, int]:
        title = directory.channel_title(client, TEAM_ID, GENERAL)
        link = directory.permalink(client, TEAM_ID, GENERAL, ts)
        calls = slack.api.calls_to
        return title, link, len(calls("conversations.info")), len(calls("chat.getPermalink"))

    title, _, infos, links = asked()
    assert title == "#general" and asked()[2:] == (infos, links)  # cached: not asked again

    slack.send(slack.requests.event({"type": event, "channel": GENERAL}))
    slack.settle()
    assert slack.runtime.store.channels() == []
    slack.api.channels[GENERAL].name = "renamed-after"  # whatever Slack says of the id now
    title, _, infos_after, links_after = asked()
    assert title == "#renamed-after"
    assert (infos_after, links_after) == (infos + 1, links + 1)  # asked again, not kept
