"""The Discord adapter's settings: the ``discord`` section (``AWAI_DISCORD__…``) of the one settings
object, composed in :mod:`bots.settings`; the engine knows nothing of them."""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr

from bots.crontab import Crontab


class DiscordSettings(BaseModel):
    """The Discord bot (``awai discord``); see ``manifest/discord.md`` for where each value comes from."""

    token: SecretStr | None = Field(
        None, description="The bot token (Developer Portal → Bot → Reset Token)."
    )
    ephemeral_readings: bool = Field(
        True,
        description=(
            "Readings and digests are shown only to the person who asked. Off: a reading is posted"
            " in the channel as a reply to its message (once per message) and a digest in the"
            " channel, for everyone who can see it. Refusals and errors are private either way."
        ),
    )
    purge_on_guild_leave: bool = Field(
        True, description="Delete a server's stored messages when the bot leaves or is removed."
    )
    owner_ids: tuple[int, ...] = Field(
        (),
        description=(
            "Discord user ids (JSON list) who may run /awai backfill in any channel, besides"
            " members allowed to manage messages there."
        ),
    )
    backfill_page_size: int = Field(
        100,
        ge=1,
        le=100,
        description=(
            "Messages per history request, each page stored before its cursor is saved (Discord"
            " allows at most 100)."
        ),
    )
    digest_schedule: dict[int, Crontab] = Field(
        {},
        description=(
            "Channel id → crontab in UTC (five fields), as JSON: the digest of that channel is"
            ' posted there on that schedule, e.g. {"123456789012345678": "0 9 * * mon"}.'
        ),
    )
