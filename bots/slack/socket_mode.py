"""Socket Mode: Bolt's built-in handler, catching up each time Slack (re)connects.

Slack says ``hello`` on every new connection: at start, and after each reconnection (a dropped
network, Slack rotating its servers). Events sent while no connection was open are not all
redelivered, so each ``hello`` queues a catch-up from every channel's last stored message
(:mod:`bots.slack.catchup`); a catch-up already running is not started twice.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.adapter.socket_mode import SocketModeHandler

from bots.slack.app import SlackBot

log = logging.getLogger(__name__)


def socket_mode_handler(
    bot: SlackBot, app_token: str, ping_interval: float = 10
) -> SocketModeHandler:
    """The handler that connects ``bot`` to Slack over Socket Mode (``.start()`` / ``.connect()``)."""
    handler = SocketModeHandler(bot.app, app_token, ping_interval=ping_interval)

    def on_message(client: object, message: dict[str, Any], raw: str | None) -> None:
        if message.get("type") == "hello":
            log.info("Connected to Slack (Socket Mode); catching up")
            bot.catch_up()

    handler.client.message_listeners.append(on_message)
    return handler
