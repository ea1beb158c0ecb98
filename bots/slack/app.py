"""The Slack app's composition root: settings and a runtime → a Bolt ``App`` with its listeners.

Single-workspace runs on one bot token; multi-workspace installs through OAuth with installations
in AWAI's database. Either way acknowledgements run on Bolt's listener threads (many, each
quick) and the slow work on :class:`~bots.slack.workers.Workers`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from slack_bolt import App, BoltContext, BoltResponse
from slack_sdk import WebClient

from awai_engine.settings import SettingsError
from bots.runtime import Runtime
from bots.slack.backfill import Backfills
from bots.slack.catchup import CatchUp
from bots.slack.clients import WorkspaceClients, web_client
from bots.slack.delivery import FirstDeliveryOnly
from bots.slack.directory import SlackDirectory
from bots.slack.ingest import parse_channel_key
from bots.slack.installation import installs as make_installs
from bots.slack.listeners import register
from bots.slack.reading import Readings
from bots.slack.services import SlackServices
from bots.slack.settings import SlackSettings
from bots.slack.teams import TeamKey, TeamRegistry
from bots.slack.workers import Workers

log = logging.getLogger(__name__)

ACK_THREADS = 32
"""Bolt runs each listener's acknowledging part on these; they only parse and queue."""


@dataclass
class SlackBot:
    app: App
    services: SlackServices
    clients: WorkspaceClients

    def catch_up(self) -> None:
        """Queue a catch-up of every workspace AWAI serves (start, Socket Mode reconnect)."""
        for workspace in self._workspaces():
            client = self.clients.for_workspace(workspace)
            if client is None:
                continue
            self.services.workers.soon(partial(self._catch_up, client, workspace), "catch-up")

    def _catch_up(self, client: WebClient, workspace: str) -> None:
        identity = client.auth_test()
        team = workspace or identity["team_id"]
        if self.services.catchup.run(client, team, identity.get("user_id")) is None:
            log.info("A catch-up of %s is already running", team)

    def _workspaces(self) -> list[str]:
        """Channel keys' workspace ids ("" for the bot token's one workspace)."""
        if self.services.installation_store is None:
            return [""]
        keys = self.services.runtime.channels()
        return sorted({parsed[0] for key in keys if (parsed := parse_channel_key(key))})

    def close(self) -> None:
        """Finish queued work (readings in flight get their answer), then stop the workers."""
        self.services.workers.shutdown()


def check_startup(settings: SlackSettings) -> None:
    """Stop with one clear message naming every setting the chosen mode still needs."""
    missing = []
    if settings.workspaces == "single" and settings.bot_token is None:
        missing.append("AWAI_SLACK__BOT_TOKEN (xoxb-…, OAuth & Permissions)")
    if settings.mode == "socket" and settings.app_token is None:
        missing.append("AWAI_SLACK__APP_TOKEN (xapp-… with connections:write, Basic Information)")
    if settings.mode == "http" and settings.signing_secret is None:
        missing.append("AWAI_SLACK__SIGNING_SECRET (Basic Information → App Credentials)")
    if missing:
        raise SettingsError(
            f"The Slack app in {settings.mode} mode needs:\n  " + "\n  ".join(missing)
        )


def build_bot(runtime: Runtime) -> SlackBot:
    settings = runtime.settings.slack
    check_startup(settings)
    installs = (
        make_installs(runtime.settings, web_client(settings))
        if settings.workspaces == "multi"
        else None
    )
    token = (
        settings.bot_token.get_secret_value() if installs is None and settings.bot_token else None
    )
    secret = settings.signing_secret.get_secret_value() if settings.signing_secret else ""
    workers = Workers(settings.reading_workers, ACK_THREADS)
    app = App(
        name="awai",
        client=web_client(settings, token),
        signing_secret=secret,
        oauth_settings=installs.oauth if installs else None,
        # Bolt takes an Authorize object as it is (App.__init__), though its hint names a function.
        authorize=installs.authorize if installs else None,  # type: ignore[arg-type]
        listener_executor=workers.listener_executor,
        process_before_response=False,
    )
    app.use(FirstDeliveryOnly(runtime))  # after Bolt's own: signature, authorize, self events
    directory = SlackDirectory()
    installation_store = installs.store if installs else None
    backfills = Backfills(runtime, directory)
    services = SlackServices(
        runtime=runtime,
        directory=directory,
        workers=workers,
        readings=Readings(runtime, directory),
        backfills=backfills,
        catchup=CatchUp(runtime, directory, backfills),
        installation_store=installation_store,
    )
    if installs is not None:
        app.use(_remembering_teams(installs.teams))
    register(app, services)
    app.error(_log_error)
    return SlackBot(app, services, WorkspaceClients(settings, installs))


def _remembering_teams(teams: TeamRegistry) -> Callable[..., Any]:
    """Middleware: keep each workspace's (enterprise, team, org-wide) as its requests name them."""

    def remember(context: BoltContext, next: Callable[[], Any]) -> Any:
        workspace = context.team_id or context.enterprise_id
        if workspace:
            key = TeamKey(
                context.enterprise_id, context.team_id, bool(context.is_enterprise_install)
            )
            teams.remember(workspace, key)
        return next()

    return remember


def _log_error(error: Exception, body: dict[str, Any]) -> BoltResponse:
    """A listener failed before acknowledging: log it; Slack gets a plain 500, the app lives on."""
    log.error("Slack request %s failed: %s", body.get("type"), error, exc_info=error)
    return BoltResponse(status=500, body="")
