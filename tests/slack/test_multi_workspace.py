"""Multi-workspace: installations in AWAI's database, each workspace served with its own token."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest
from slack_sdk.oauth.installation_store import Installation

from awai_engine.visibility import EVERYTHING
from bots.slack.ingest import channel_key
from bots.slack.schedule import digest_poster
from tests.slack.conftest import ANN, BEN, GENERAL, GENERAL_KEY, SlackHarness
from tests.slack.mock_slack_api import BOT_ID, BOT_USER_ID, TEAM_ID

INSTALLED_TOKEN = "xoxb-installed-by-oauth"
ORG_ID = "E0AWAIORG"
MULTI = {"workspaces": "multi", "client_id": "111.222", "client_secret": "oauth-secret"}


def _install(slack: SlackHarness, **fields) -> None:  # type: ignore[no-untyped-def]
    store = slack.bot.services.installation_store
    assert store is not None
    defaults = {
        "app_id": "AAWAI",
        "team_id": TEAM_ID,
        "bot_token": INSTALLED_TOKEN,
        "bot_id": BOT_ID,
        "bot_user_id": BOT_USER_ID,
        "bot_scopes": ["chat:write"],
        "user_id": ANN,
    }
    store.save(Installation(**{**defaults, **fields}))


def _org_event(slack: SlackHarness, message: dict, org_wide: bool):  # type: ignore[no-untyped-def]
    """A message event as Slack sends it from a workspace of an Enterprise Grid."""
    body = json.dumps(
        {
            "token": "legacy",
            "team_id": TEAM_ID,
            "enterprise_id": ORG_ID,
            "api_app_id": "AAWAI",
            "type": "event_callback",
            "event_id": f"Ev-org-{message['ts']}",
            "event_time": int(time.time()),
            "is_ext_shared_channel": False,
            "authorizations": [
                {
                    "enterprise_id": ORG_ID,
                    "team_id": None if org_wide else TEAM_ID,
                    "user_id": BOT_USER_ID,
                    "is_bot": True,
                    "is_enterprise_install": org_wide,
                }
            ],
            "event": {**message, "channel": GENERAL, "channel_type": "channel"},
        }
    )
    return slack.requests.request(body, "application/json")


@pytest.mark.slow
def test_an_installed_workspace_is_served_with_its_token_and_purged_on_uninstall(
    make_slack: Callable[..., SlackHarness],
):
    slack = make_slack(**MULTI)
    _install(slack)
    assert slack.bot.clients.for_workspace(TEAM_ID).token == INSTALLED_TOKEN

    slack.say(ANN, "Hello from an OAuth-installed workspace.")
    slack.settle()
    assert list(slack.stored_texts().values()) == ["Hello from an OAuth-installed workspace."]
    assert {call.token for call in slack.api.calls_to("users.info")} == {INSTALLED_TOKEN}

    slack.send(slack.requests.event({"type": "app_uninstalled"}))
    slack.settle()

    store = slack.bot.services.installation_store
    assert store.find_bot(enterprise_id=None, team_id=TEAM_ID) is None
    assert slack.bot.clients.for_workspace(TEAM_ID) is None
    assert GENERAL_KEY not in slack.runtime.store.channels()


@pytest.mark.slow
def test_events_cost_one_auth_test_per_token_not_one_each(make_slack: Callable[..., SlackHarness]):
    slack = make_slack(**MULTI)
    _install(slack)
    before = len([c for c in slack.api.calls_to("auth.test") if c.token == INSTALLED_TOKEN])

    for i in range(5):
        slack.say(ANN if i % 2 else BEN, f"Message {i} of a busy channel.")
    slack.settle()

    after = len([c for c in slack.api.calls_to("auth.test") if c.token == INSTALLED_TOKEN])
    assert len(slack.stored_texts()) == 5
    assert after - before <= 1


@pytest.mark.parametrize("org_wide", [False, True], ids=["grid-workspace", "org-wide"])
@pytest.mark.slow
def test_a_grid_install_gets_its_scheduled_digest_after_a_restart(
    make_slack: Callable[..., SlackHarness], org_wide: bool
):
    slack = make_slack(**MULTI)
    if org_wide:
        _install(slack, team_id=None, enterprise_id=ORG_ID, is_enterprise_install=True)
    else:
        _install(slack, enterprise_id=ORG_ID)
    for i in range(6):
        message = slack.api.add_message(GENERAL, ANN if i % 2 else BEN, f"Budget item {i} again.")
        assert slack.send(_org_event(slack, message, org_wide=org_wide)).status == 200
    slack.settle()
    # An org-wide install's channels are the organisation's (Bolt names no team for them).
    key = channel_key(ORG_ID if org_wide else TEAM_ID, GENERAL)
    assert slack.runtime.store.message_count(key) == 6, "the Grid install's events are served"

    restarted = make_slack(**MULTI)  # same database: what was learnt from requests survives
    digest = restarted.runtime.schemas.digest(key, EVERYTHING, record=False)
    digest_poster(restarted.bot)(key, digest)

    posted = [c for c in slack.api.calls_to("chat.postMessage") if c.params["channel"] == GENERAL]
    assert [call.token for call in posted] == [INSTALLED_TOKEN]


@pytest.mark.slow
def test_a_scheduled_digest_rotates_an_expiring_token_as_requests_do(
    make_slack: Callable[..., SlackHarness],
):
    slack = make_slack(**MULTI)
    _install(
        slack,
        bot_token="xoxe.xoxb-expiring",
        bot_refresh_token="xoxe-1-refresh-0",
        bot_token_expires_at=int(time.time()) + 60,  # within Bolt's rotation margin
    )
    slack.seed([(ANN, "One thing."), (BEN, "Another thing.")])
    digest = slack.runtime.schemas.digest(GENERAL_KEY, EVERYTHING, record=False)

    digest_poster(slack.bot)(GENERAL_KEY, digest)

    posted = [c for c in slack.api.calls_to("chat.postMessage") if c.params["channel"] == GENERAL]
    assert [call.token for call in posted] == ["xoxe.xoxb-rotated-1"]
    stored = slack.bot.services.installation_store.find_bot(enterprise_id=None, team_id=TEAM_ID)
    assert stored.bot_token == "xoxe.xoxb-rotated-1", "the rotated token is saved"
