"""Web API clients: one recipe for every client, and a client per workspace outside requests.

Every client retries a rate-limited call (429) after Slack's ``Retry-After`` (slack_sdk's
``RateLimitErrorRetryHandler``), so history pages and posts are delayed, never dropped. Inside a
request Bolt hands listeners a client for the right workspace; scheduled work (digests) asks
:class:`WorkspaceClients` instead.
"""

from __future__ import annotations

from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_sdk.oauth.installation_store import InstallationStore

from awai_engine.settings import SlackSettings


def web_client(settings: SlackSettings, token: str | None = None) -> WebClient:
    # slack_sdk appends the method name to base_url as is, so it must end with a slash.
    client = WebClient(token=token, base_url=settings.api_base_url.rstrip("/") + "/")
    client.retry_handlers.append(
        RateLimitErrorRetryHandler(max_retry_count=settings.rate_limit_retries)
    )
    return client


class WorkspaceClients:
    """A client holding the bot token of a given workspace."""

    def __init__(
        self, settings: SlackSettings, installation_store: InstallationStore | None
    ) -> None:
        self.settings = settings
        self.installation_store = installation_store
        token = settings.bot_token.get_secret_value() if settings.bot_token else None
        self._single = web_client(settings, token) if installation_store is None else None

    def for_workspace(self, team_id: str) -> WebClient | None:
        """The workspace's client; ``None`` if AWAI is not installed there (any more)."""
        if self._single is not None:
            return self._single
        assert self.installation_store is not None
        bot = self.installation_store.find_bot(enterprise_id=None, team_id=team_id)
        if bot is None:  # an org-wide install keys its channels by the organisation id
            bot = self.installation_store.find_bot(
                enterprise_id=team_id, team_id=None, is_enterprise_install=True
            )
        return web_client(self.settings, bot.bot_token) if bot and bot.bot_token else None
