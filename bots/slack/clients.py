"""Web API clients: one recipe for every client, and a client per workspace outside requests.

Every client retries a rate-limited call (429) after Slack's ``Retry-After`` (slack_sdk's
``RateLimitErrorRetryHandler``), so history pages and posts are delayed, never dropped. Inside a
request Bolt hands listeners a client for the right workspace; scheduled work (digests, catch-up)
asks :class:`WorkspaceClients`, which goes through the same authorize as requests do.
"""

from __future__ import annotations

from slack_bolt import BoltContext
from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

from bots.slack.installation import Installs
from bots.slack.settings import SlackSettings
from bots.slack.teams import TeamKey


def web_client(settings: SlackSettings, token: str | None = None) -> WebClient:
    # slack_sdk appends the method name to base_url as is, so it must end with a slash.
    client = WebClient(token=token, base_url=settings.api_base_url.rstrip("/") + "/")
    client.retry_handlers.append(
        RateLimitErrorRetryHandler(max_retry_count=settings.rate_limit_retries)
    )
    return client


class WorkspaceClients:
    """A client holding the bot token of a given workspace."""

    def __init__(self, settings: SlackSettings, installs: Installs | None) -> None:
        self.settings = settings
        self.installs = installs
        token = settings.bot_token.get_secret_value() if settings.bot_token else None
        self._single = web_client(settings, token) if installs is None else None
        self._tokenless = web_client(settings)

    def for_workspace(self, workspace: str) -> WebClient | None:
        """The workspace's client; ``None`` if AWAI is not installed there (any more).

        ``workspace`` is a channel key's workspace id: a team id, or an organisation's id for an
        org-wide install's own events.
        """
        if self._single is not None:
            return self._single
        assert self.installs is not None
        key = self.installs.teams.lookup(workspace) or TeamKey(None, workspace, False)
        found = self._authorize(key)
        if found is None and key.enterprise_id is None:  # an organisation's own id
            found = self._authorize(TeamKey(workspace, None, True))
        return web_client(self.settings, found) if found else None

    def _authorize(self, key: TeamKey) -> str | None:
        """The bot token Bolt's authorize finds (rotating it if it expires soon), or ``None``."""
        assert self.installs is not None
        context = BoltContext(
            client=self._tokenless,
            enterprise_id=key.enterprise_id,
            team_id=key.team_id,
            is_enterprise_install=key.is_enterprise_install,
        )
        result = self.installs.authorize(
            context=context,
            enterprise_id=key.enterprise_id,
            team_id=key.team_id,
            user_id=None,
        )
        return result.bot_token if result is not None else None
