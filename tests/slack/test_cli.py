"""``awai slack``: missing settings are named at start; ``--check`` asks Slack about the token."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bots.slack.installation import BOT_SCOPES
from bots.slack.listeners.removal import GONE_EVENTS
from bots.slack.listeners.shortcut import READ_CALLBACK_ID
from bots.terminal.cli import main
from tests.slack.mock_slack_api import MockSlackApi


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no stray .env
    monkeypatch.setenv("AWAI_DATA_DIR", str(tmp_path / "data"))
    return tmp_path


def test_awai_slack_names_every_missing_setting_and_stops(clean_env: Path, capsys):
    assert main(["slack"]) == 2
    error = capsys.readouterr().err
    assert "AWAI_SLACK__BOT_TOKEN" in error and "AWAI_SLACK__APP_TOKEN" in error

    assert main(["slack", "--check"]) == 2


def test_multi_workspace_in_socket_mode_is_a_settings_error(clean_env: Path, monkeypatch, capsys):
    monkeypatch.setenv("AWAI_SLACK__WORKSPACES", "multi")
    assert main(["slack"]) == 2
    assert "AWAI_SLACK__MODE=http" in capsys.readouterr().err


def test_awai_slack_check_asks_slack_who_the_token_belongs_to(
    clean_env: Path, monkeypatch, capsys, slack_api: MockSlackApi
):
    monkeypatch.setenv("AWAI_SLACK__MODE", "http")
    monkeypatch.setenv("AWAI_SLACK__BOT_TOKEN", "xoxb-awai-test")
    monkeypatch.setenv("AWAI_SLACK__SIGNING_SECRET", "secret")
    monkeypatch.setenv("AWAI_SLACK__API_BASE_URL", slack_api.base_url)

    assert main(["slack", "--check"]) == 0

    assert "bot @awai in workspace AWAI Test (T0AWAI)" in capsys.readouterr().err
    assert [call.token for call in slack_api.calls_to("auth.test")] == ["xoxb-awai-test"]


def test_the_manifest_asks_for_exactly_the_scopes_oauth_installs_request():
    manifest = yaml.safe_load((Path(__file__).parents[2] / "manifest" / "slack.yaml").read_text())
    assert sorted(manifest["oauth_config"]["scopes"]["bot"]) == sorted(BOT_SCOPES)
    shortcut = manifest["features"]["shortcuts"][0]
    assert (shortcut["type"], shortcut["callback_id"]) == ("message", READ_CALLBACK_ID)
    assert manifest["features"]["slash_commands"][0]["command"] == "/awai"
    assert manifest["settings"]["socket_mode_enabled"] is True
    # The purges privacy promises arrive only if the manifest subscribes to their events.
    events = manifest["settings"]["event_subscriptions"]["bot_events"]
    assert {"member_left_channel", *GONE_EVENTS} <= set(events)
