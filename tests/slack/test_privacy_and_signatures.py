"""Uninstall purges one workspace and nothing else; unsigned, forged or stale requests do nothing."""

from __future__ import annotations

import time

import pytest

from bots.slack.ingest import channel_key
from tests.factories import utterance
from tests.slack.conftest import ANN, BEN, GENERAL, GENERAL_KEY, SECRET, SlackHarness
from tests.slack.mock_slack_api import TEAM_ID

OTHER_WORKSPACE_KEY = "slack:T0OTHER:C9RANDOM"


def _two_workspaces(slack: SlackHarness) -> None:
    slack.seed([(ANN, "Our plan for the launch."), (BEN, "Agreed.")])
    slack.seed([(BEN, "Private planning.")], channel=SECRET)
    slack.runtime.engine.ingest(
        [utterance("1700000001.000100", "Another team's message.", channel=OTHER_WORKSPACE_KEY)]
    )
    slack.runtime.store.cursors.save(GENERAL_KEY, None, 2, done=True)


@pytest.mark.slow
def test_app_uninstalled_purges_that_workspace_and_no_other(slack: SlackHarness):
    _two_workspaces(slack)

    response = slack.send(slack.requests.event({"type": "app_uninstalled"}))
    slack.settle()

    assert response.status == 200
    assert slack.runtime.store.channels() == [OTHER_WORKSPACE_KEY]
    assert slack.runtime.store.cursors.get(GENERAL_KEY) is None
    assert slack.runtime.store.message_count(GENERAL_KEY) == 0
    assert slack.runtime.store.message_count(OTHER_WORKSPACE_KEY) == 1


def test_tokens_revoked_purges_only_when_the_bot_token_goes(slack: SlackHarness):
    _two_workspaces(slack)

    people_only = {"type": "tokens_revoked", "tokens": {"oauth": [ANN], "bot": []}}
    slack.send(slack.requests.event(people_only))
    slack.settle()
    assert channel_key(TEAM_ID, GENERAL) in slack.runtime.store.channels()

    bot = {"type": "tokens_revoked", "tokens": {"oauth": [], "bot": ["UAWAIBOT"]}}
    slack.send(slack.requests.event(bot))
    slack.settle()
    assert slack.runtime.store.channels() == [OTHER_WORKSPACE_KEY]


def test_a_forged_or_stale_signature_is_rejected_and_changes_nothing(slack: SlackHarness):
    message = slack.api.add_message(GENERAL, ANN, "Should never be stored.")
    event = {**message, "channel": GENERAL, "channel_type": "channel"}
    forged = slack.requests.event(event)
    forged.headers["x-slack-signature"] = ["v0=" + "0" * 64]
    stale = slack.requests.event(event, timestamp=int(time.time()) - 6 * 60)
    unsigned = slack.requests.event(event)
    del unsigned.headers["x-slack-signature"]
    shortcut = slack.requests.shortcut(GENERAL, ANN, message, timestamp=int(time.time()) - 600)

    responses = [slack.send(request) for request in (forged, stale, unsigned, shortcut)]
    slack.settle()

    assert [response.status for response in responses] == [401, 401, 401, 401]
    assert slack.stored_texts() == {}
    assert slack.api.calls_to("chat.postMessage") == []
