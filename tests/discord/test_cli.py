"""``awai discord``: command registration is an explicit step, and a missing token is explained."""

from __future__ import annotations

import pytest

from bots.runtime import Runtime
from bots.terminal.cli import main
from tests.discord import payloads
from tests.discord.fake_discord import FakeDiscord


def test_sync_registers_the_commands_and_the_message_menu_in_one_guild(
    fake_discord: FakeDiscord,
    runtime: Runtime,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
):
    monkeypatch.setenv("AWAI_DISCORD__TOKEN", "fake-token")
    monkeypatch.setattr("bots.terminal.commands.discord.open_runtime", lambda settings: runtime)
    assert main(["discord", "--sync", "--guild", str(payloads.GUILD_ID)]) == 0

    (sync,) = fake_discord.calls("PUT", "/commands")
    assert sync.path.endswith(f"/guilds/{payloads.GUILD_ID}/commands")
    by_name = {command["name"]: command for command in sync.body}  # type: ignore[union-attr]
    assert by_name["Read with AWAI"]["type"] == 3
    subcommands = {option["name"] for option in by_name["awai"]["options"]}
    assert subcommands == {"read", "digest", "forget-me", "backfill", "help"}
    assert "Registered awai, Read with AWAI" in capsys.readouterr().out


def test_without_a_token_awai_discord_says_which_setting_to_set(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path
):
    monkeypatch.delenv("AWAI_DISCORD__TOKEN", raising=False)
    assert main(["--data-dir", str(tmp_path), "discord"]) == 2
    assert "AWAI_DISCORD__TOKEN" in capsys.readouterr().err


def test_guild_without_sync_is_refused(monkeypatch: pytest.MonkeyPatch, capsys, tmp_path):
    monkeypatch.setenv("AWAI_DISCORD__TOKEN", "fake-token")
    assert main(["--data-dir", str(tmp_path), "discord", "--guild", "1"]) == 2
    assert "--guild goes with --sync" in capsys.readouterr().err


def test_clear_guild_removes_the_commands_registered_in_that_server_only(
    fake_discord: FakeDiscord,
    runtime: Runtime,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
):
    monkeypatch.setenv("AWAI_DISCORD__TOKEN", "fake-token")
    monkeypatch.setattr("bots.terminal.commands.discord.open_runtime", lambda settings: runtime)
    assert main(["discord", "--clear-guild", str(payloads.GUILD_ID)]) == 0

    (cleared,) = fake_discord.calls("PUT", "/commands")
    assert cleared.path.endswith(f"/guilds/{payloads.GUILD_ID}/commands")
    assert cleared.body == []
    assert f"server {payloads.GUILD_ID} only" in capsys.readouterr().out
