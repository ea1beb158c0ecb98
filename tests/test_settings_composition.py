"""The one settings object: the engine's sections plus each adapter's, from one ``.env``.

The engine's settings name no platform; the composition root (``bots.settings``) adds the Slack
and Discord sections, and a user still writes one ``.env`` and gets one message for every bad
value, whichever section it is in (that the engine imports no adapter: tests/test_layering.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from awai_engine.settings import Settings, SettingsError
from bots.settings import BotSettings, load_settings


def test_one_env_file_configures_the_engine_and_both_adapters(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text(
        "AWAI_FLOW__CAPACITY=5\n"
        "AWAI_SLACK__MODE=http\n"
        "AWAI_SLACK__SIGNING_SECRET=s3cret\n"
        "AWAI_DISCORD__TOKEN=discord-token\n"
        "AWAI_DISCORD__OWNER_IDS=[42]\n",
        encoding="utf-8",
    )
    settings = load_settings(_env_file=env, data_dir=tmp_path)
    assert isinstance(settings, BotSettings)
    assert settings.flow.capacity == 5
    assert settings.slack.mode == "http"
    assert settings.slack.signing_secret is not None
    assert settings.slack.signing_secret.get_secret_value() == "s3cret"
    assert settings.discord.token is not None
    assert settings.discord.token.get_secret_value() == "discord-token"
    assert settings.discord.owner_ids == (42,)


def test_bad_values_of_every_section_are_named_in_one_message(tmp_path: Path) -> None:
    with pytest.raises(SettingsError) as raised:
        load_settings(
            _env_file=None,
            data_dir=tmp_path,
            flow={"capacity": 9},
            slack={"mode": "carrier-pigeon"},
            discord={"digest_schedule": {"1": "every monday"}},
        )
    message = str(raised.value)
    for variable in ("AWAI_FLOW__CAPACITY", "AWAI_SLACK__MODE", "AWAI_DISCORD"):
        assert variable in message
    assert "every monday" in message


def test_the_engine_settings_name_no_platform() -> None:
    assert not {"slack", "discord"} & set(Settings.model_fields)
