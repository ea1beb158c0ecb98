"""The one settings object of a running AWAI: the engine's settings plus each adapter's section.

The engine's :class:`~awai_engine.settings.Settings` names no platform; each adapter owns its
section (:mod:`bots.slack.settings`, :mod:`bots.discord.settings`), the actions written once for
both own theirs (:mod:`bots.actions.settings`), and they are composed here, at the composition
root, so there is still one ``.env``, one set of ``AWAI_…`` variables (``AWAI_SLACK__BOT_TOKEN``,
``AWAI_READINGS__DUPLICATE_WINDOW_SECONDS``, …) and one validation message at start-up listing
every bad value, whichever section it is in.
"""

from __future__ import annotations

from awai_engine.settings import Settings, validated
from bots.actions.settings import ReadingSettings
from bots.discord.settings import DiscordSettings
from bots.slack.settings import SlackSettings


class BotSettings(Settings):
    """Engine settings plus the ``readings``, ``slack`` and ``discord`` sections."""

    readings: ReadingSettings = ReadingSettings()
    discord: DiscordSettings = DiscordSettings()
    slack: SlackSettings = SlackSettings()


def load_settings(**overrides: object) -> BotSettings:
    """Read every section from the environment and ``.env``; invalid values raise one
    :class:`~awai_engine.settings.SettingsError` naming each variable."""
    return validated(BotSettings, **overrides)


def composed(settings: Settings) -> BotSettings:
    """``settings`` as the one object the bots read: itself when it already is, else the engine's
    values with every adapter section at its defaults (a bench or test that builds the engine's
    settings alone)."""
    if isinstance(settings, BotSettings):
        return settings
    return BotSettings.model_validate(dict(settings))
