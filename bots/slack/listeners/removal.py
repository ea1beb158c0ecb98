"""AWAI removed from a channel (``member_left_channel`` of the bot user, or ``channel_left``):
the channel's data is purged, as an uninstall purges the workspace's (see bots.actions.purge)."""

from __future__ import annotations

from typing import Any

from slack_bolt import App, BoltContext

from bots.actions.purge import purge_channel
from bots.slack.ingest import channel_key
from bots.slack.listeners.common import team_of
from bots.slack.services import SlackServices

Payload = dict[str, Any]


def register(app: App, services: SlackServices) -> None:
    """AWAI leaving a channel (removed by someone, or the channel left) purges it."""

    @app.event("member_left_channel")
    def on_member_left(event: Payload, context: BoltContext) -> None:
        if event.get("user") != context.bot_user_id:
            return
        team = team_of(context)
        services.workers.in_order(
            lambda: purge_channel(services.runtime, channel_key(team, event["channel"])),
            "channel purge",
        )

    @app.event("channel_left")
    def on_channel_left(event: Payload, context: BoltContext) -> None:
        team = team_of(context)
        services.workers.in_order(
            lambda: purge_channel(services.runtime, channel_key(team, event["channel"])),
            "channel purge",
        )
