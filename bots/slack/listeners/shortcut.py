"""The message shortcut "Read with AWAI": the main way to read a message, threads included.

Slack does not allow slash commands in threads; a message shortcut works on any message, and its
payload carries the channel, the message (with its ``thread_ts``) and a ``response_url``.
"""

from __future__ import annotations

from typing import Any

from slack_bolt import Ack, App, BoltContext
from slack_bolt.context.respond import Respond

from bots.slack.listeners.common import team_of, tell_by_response_url, tell_ephemeral
from bots.slack.platform import ReadingRequest
from bots.slack.services import SlackServices

READ_CALLBACK_ID = "read_with_awai"


def register(app: App, services: SlackServices) -> None:
    @app.shortcut({"type": "message_action", "callback_id": READ_CALLBACK_ID})
    def on_read(ack: Ack, body: dict[str, Any], context: BoltContext, respond: Respond) -> None:
        ack()
        message = body["message"]
        request = ReadingRequest(
            team_id=team_of(context),
            channel_id=body["channel"]["id"],
            ts=message.get("ts") or body["message_ts"],
            user_id=body["user"]["id"],
            bot_user_id=context.bot_user_id,
            thread_ts=message.get("thread_ts"),
            message=message,
        )
        client = context.client
        if body.get("response_url"):
            tell = tell_by_response_url(respond)
        else:
            tell = tell_ephemeral(client, request.channel_id, request.user_id, request.thread_ts)
        services.workers.soon(
            lambda: services.readings.deliver(request, client, tell), "read_with_awai"
        )
