"""The Slack adapter's settings: the ``slack`` section (``AWAI_SLACK__…``) of the one settings object,
composed in :mod:`bots.settings`; the engine knows nothing of them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr, model_validator

from bots.crontab import Crontab


class SlackSettings(BaseModel):
    """The Slack app (``awai slack``); ``docs/slack.md`` says where each value comes from.

    Single-workspace (the default) runs on one bot token. ``workspaces = "multi"`` installs the app
    through Slack's OAuth flow instead, keeping each workspace's installation in AWAI's database.
    Which values ``awai slack`` needs depends on the mode; it checks them at start.
    """

    mode: Literal["socket", "http"] = Field(
        "socket",
        description=(
            "socket: Socket Mode over a websocket (needs app_token, no public URL). http: Slack"
            " posts events to this process (needs signing_secret and a public URL)."
        ),
    )
    bot_token: SecretStr | None = Field(
        None, description="xoxb- token (OAuth & Permissions); single-workspace only."
    )
    app_token: SecretStr | None = Field(
        None, description="xapp- token with connections:write (Basic Information); Socket Mode."
    )
    signing_secret: SecretStr | None = Field(
        None, description="Signing secret (Basic Information); every HTTP request is verified."
    )
    host: str = Field(
        "127.0.0.1",
        description=(
            "HTTP mode: the address to listen on; loopback behind the TLS proxy of"
            " deploy/README.md (0.0.0.0 only where the proxy runs on another machine)."
        ),
    )
    port: int = Field(3000, ge=1, le=65535, description="HTTP mode: the port to listen on.")
    reply_placement: Literal["thread", "ephemeral"] = Field(
        "ephemeral",
        description=(
            "ephemeral (the default): a reading reaches only the person who asked, with a Share"
            " button that posts it in the thread, once per message. thread: every reading is"
            " shared in the message's thread at once (still once per message)."
        ),
    )
    workspaces: Literal["single", "multi"] = Field(
        "single",
        description="multi: install through OAuth into many workspaces (HTTP mode only).",
    )
    client_id: str | None = Field(None, description="OAuth client id (multi-workspace).")
    client_secret: SecretStr | None = Field(
        None, description="OAuth client secret (multi-workspace)."
    )
    api_base_url: str = Field(
        "https://slack.com/api/", description="Slack Web API root (a proxy or a test server)."
    )
    digest_schedule: dict[str, Crontab] = Field(
        {},
        description=(
            "Channel id → crontab in UTC (five fields), as JSON: that channel's digest is posted"
            ' there on that schedule, e.g. {"C0123456789": "0 9 * * mon"}.'
        ),
    )
    backfill_on_join: bool = Field(
        True, description="Read a channel's history when the bot is added to it."
    )
    backfill_page_size: int = Field(
        200, ge=1, le=999, description="Messages per conversations.history page."
    )
    rate_limit_retries: int = Field(
        5, ge=0, le=50, description="Retries of a rate-limited (429) call, honouring Retry-After."
    )
    reading_workers: int = Field(
        4, ge=1, le=64, description="Readings, digests and backfills worked on at once."
    )

    @model_validator(mode="before")
    @classmethod
    def _moved(cls, values: object) -> object:
        """A setting that moved to the section every platform shares is named, not ignored."""
        if isinstance(values, dict) and "duplicate_window_seconds" in values:
            raise ValueError(
                "slack.duplicate_window_seconds is now AWAI_READINGS__DUPLICATE_WINDOW_SECONDS,"
                " one window for Slack and Discord; rename the variable"
            )
        return values

    @model_validator(mode="after")
    def _consistent(self) -> SlackSettings:
        if self.workspaces == "multi":
            if self.mode != "http":
                raise ValueError(
                    "slack.workspaces=multi installs through OAuth pages served over HTTP;"
                    " set AWAI_SLACK__MODE=http"
                )
            if not self.client_id or self.client_secret is None:
                raise ValueError(
                    "slack.workspaces=multi needs AWAI_SLACK__CLIENT_ID and"
                    " AWAI_SLACK__CLIENT_SECRET"
                )
        return self
