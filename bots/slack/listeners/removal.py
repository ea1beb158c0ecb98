"""AWAI removed from a channel (``member_left_channel`` of the bot user, or ``channel_left``), or
the channel deleted (``channel_deleted``, ``group_deleted``): the channel's data is purged, as an
uninstall purges the workspace's (see bots.actions.purge), and what the directory cached of it
(its title, its messages' permalinks) goes with it."""

from __future__ import annotations

from typing import Any

from slack_bolt import App, BoltContext

from bots.actions.purge import purge_channel
from bots.slack.ingest import channel_key
from bots.slack.listeners.common import team_of
from bots.slack.services import SlackServices

Payload = dict[str, Any]
GONE_EVENTS = ("channel_left", "channel_deleted", "group_deleted")
"""Events after which AWAI has no channel to read: it left it, or the channel is no more."""


def register(app: App, services: SlackServices) -> None:
    """AWAI leaving a channel (removed by someone, or the channel left), or the channel deleted,
    purges it."""

    def purge(team: str, channel_id: str) -> None:
        services.directory.forget_channel(team, channel_id)
        services.workers.in_order(
            lambda: purge_channel(services.runtime, channel_key(team, channel_id)),
            "channel purge",
        )

    @app.event("member_left_channel")
    def on_member_left(event: Payload, context: BoltContext) -> None:
        if event.get("user") == context.bot_user_id:
            purge(team_of(context), event["channel"])

    def on_gone(event: Payload, context: BoltContext) -> None:
        purge(team_of(context), event["channel"])

    for name in GONE_EVENTS:
        app.event(name)(on_gone)
