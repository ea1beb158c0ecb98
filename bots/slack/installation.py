"""Multi-workspace installs: Bolt's OAuth flow with installations kept in AWAI's database.

Why slack_sdk's SQLAlchemy stores: they are the SDK's own, tested schema; pointing them at AWAI's
database URL means installations survive restarts and are shared by every AWAI process, with no
second database to run.
"""

from __future__ import annotations

import sqlalchemy
from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore

from awai_engine.settings import Settings

# The bot scopes of manifest/slack.yaml: what installing AWAI asks a workspace for.
BOT_SCOPES = (
    "app_mentions:read",
    "channels:history",
    "channels:read",
    "chat:write",
    "commands",
    "files:write",
    "groups:history",
    "groups:read",
    "users:read",
)
OAUTH_STATE_SECONDS = 600


def oauth_settings(settings: Settings) -> OAuthSettings:
    """Bolt OAuth settings whose installation and state stores live in AWAI's database."""
    slack = settings.slack
    assert slack.client_id and slack.client_secret, "checked by SlackSettings"
    engine = sqlalchemy.create_engine(settings.resolved_database_url())
    installations = SQLAlchemyInstallationStore(client_id=slack.client_id, engine=engine)
    states = SQLAlchemyOAuthStateStore(expiration_seconds=OAUTH_STATE_SECONDS, engine=engine)
    installations.create_tables()
    states.create_tables()
    return OAuthSettings(
        client_id=slack.client_id,
        client_secret=slack.client_secret.get_secret_value(),
        scopes=list(BOT_SCOPES),
        installation_store=installations,
        installation_store_bot_only=True,
        state_store=states,
    )
