"""Multi-workspace: installations in AWAI's database, each workspace served with its own token."""

from __future__ import annotations

from collections.abc import Callable

from slack_sdk.oauth.installation_store import Installation

from tests.slack.conftest import ANN, GENERAL_KEY, SlackHarness
from tests.slack.mock_slack_api import BOT_ID, BOT_USER_ID, TEAM_ID

INSTALLED_TOKEN = "xoxb-installed-by-oauth"


def test_an_installed_workspace_is_served_with_its_token_and_purged_on_uninstall(
    make_slack: Callable[..., SlackHarness],
):
    slack = make_slack(workspaces="multi", client_id="111.222", client_secret="oauth-secret")
    store = slack.bot.services.installation_store
    assert store is not None
    store.save(
        Installation(
            app_id="AAWAI",
            team_id=TEAM_ID,
            bot_token=INSTALLED_TOKEN,
            bot_id=BOT_ID,
            bot_user_id=BOT_USER_ID,
            bot_scopes=["chat:write"],
            user_id=ANN,
        )
    )
    assert slack.bot.clients.for_workspace(TEAM_ID).token == INSTALLED_TOKEN

    slack.say(ANN, "Hello from an OAuth-installed workspace.")
    slack.settle()
    assert list(slack.stored_texts().values()) == ["Hello from an OAuth-installed workspace."]
    assert {call.token for call in slack.api.calls_to("users.info")} == {INSTALLED_TOKEN}

    slack.send(slack.requests.event({"type": "app_uninstalled"}))
    slack.settle()

    assert store.find_bot(enterprise_id=None, team_id=TEAM_ID) is None
    assert slack.bot.clients.for_workspace(TEAM_ID) is None
    assert GENERAL_KEY not in slack.runtime.store.channels()
