"""Multi-workspace installs: Bolt's OAuth flow and authorize, installations in AWAI's database.

Why slack_sdk's SQLAlchemy stores: they are the SDK's own, tested schema; pointing them at AWAI's
database URL means installations survive restarts and are shared by every AWAI process, with no
second database to run.

Why one authorize object, built here: requests and scheduled work (digests) must find a
workspace's token the same way, Bolt's way — by enterprise id, team id and whether the install
is org-wide, rotating an expiring token and saving it — and Bolt's ``InstallationStoreAuthorize``
keeps each token's ``auth.test`` answer when its cache is on, so an event costs no extra call.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import sqlalchemy
from slack_bolt.authorization.authorize import InstallationStoreAuthorize
from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_sdk import WebClient
from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.sqlalchemy import SQLAlchemyOAuthStateStore

from bots.settings import BotSettings
from bots.slack.teams import TeamRegistry

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


@dataclass(frozen=True)
class Installs:
    """Everything multi-workspace mode shares: the OAuth flow's settings, authorize, the stores."""

    oauth: OAuthSettings
    authorize: InstallationStoreAuthorize
    store: SQLAlchemyInstallationStore
    teams: TeamRegistry


def installs(settings: BotSettings, client: WebClient) -> Installs:
    """Bolt OAuth settings and authorize whose stores live in AWAI's database.

    ``client`` (no token) is what token rotation calls ``oauth.v2.access`` with.
    """
    slack = settings.slack
    assert slack.client_id and slack.client_secret, "checked by SlackSettings"
    engine = sqlalchemy.create_engine(settings.resolved_database_url())
    store = SQLAlchemyInstallationStore(client_id=slack.client_id, engine=engine)
    states = SQLAlchemyOAuthStateStore(expiration_seconds=OAUTH_STATE_SECONDS, engine=engine)
    teams = TeamRegistry(engine)
    store.create_tables()
    states.create_tables()
    teams.create_tables()
    secret = slack.client_secret.get_secret_value()
    authorize = InstallationStoreAuthorize(
        logger=logging.getLogger("slack_bolt.authorize"),
        installation_store=store,
        client_id=slack.client_id,
        client_secret=secret,
        bot_only=True,
        cache_enabled=True,
        client=client,
    )
    oauth = OAuthSettings(
        client_id=slack.client_id,
        client_secret=secret,
        scopes=list(BOT_SCOPES),
        installation_store=store,
        installation_store_bot_only=True,
        state_store=states,
    )
    return Installs(oauth=oauth, authorize=authorize, store=store, teams=teams)
