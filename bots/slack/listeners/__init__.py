"""Bolt listeners: each acknowledges at once, translates the payload, and queues the work."""

from __future__ import annotations

from slack_bolt import App

from bots.slack.listeners import actions, commands, events, removal, shortcut
from bots.slack.services import SlackServices


def register(app: App, services: SlackServices) -> None:
    events.register(app, services)
    shortcut.register(app, services)
    actions.register(app, services)
    commands.register(app, services)
    removal.register(app, services)
