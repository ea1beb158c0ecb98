"""The buttons of a private reading: *Share in thread* and *Details*.

A reading arrives privately (ephemeral). *Share* posts it in the message's thread for everyone,
saying who shared it, once per message: a second share, by anyone, links to the first. *Details*
opens a modal with the numbers behind every connection. Both acknowledge at once; Slack's
``trigger_id`` for a modal lives three seconds, so the modal opens at once with a short line and
is filled when the reading is ready.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App, BoltContext
from slack_bolt.context.respond import Respond

from bots.slack.blocks import DETAILS_ACTION, SHARE_ACTION, SHARED_LINK_ACTION, ReadingTarget
from bots.slack.listeners.common import team_of, tell_by_response_url
from bots.slack.platform import ReadingRequest
from bots.slack.services import SlackServices

log = logging.getLogger(__name__)


def register(app: App, services: SlackServices) -> None:
    @app.action(SHARE_ACTION)
    def on_share(ack: Ack, body: dict[str, Any], context: BoltContext, respond: Respond) -> None:
        ack()
        request = _request(body, context)
        if request is None:
            return
        client = context.client
        tell = tell_by_response_url(respond)
        services.workers.soon(
            lambda: services.readings.share(request, client, tell), "share_reading"
        )

    @app.action(SHARED_LINK_ACTION)
    def on_shared_link(ack: Ack) -> None:
        """A link button opens the shared reading in the person's Slack; Slack still sends the
        click here, and an unacknowledged click shows the person a warning."""
        ack()

    @app.action(DETAILS_ACTION)
    def on_details(ack: Ack, body: dict[str, Any], context: BoltContext, respond: Respond) -> None:
        ack()
        request = _request(body, context)
        if request is None:
            return
        client = context.client
        view_id = services.readings.open_details(client, body["trigger_id"], request)
        if view_id is None:
            return
        tell = tell_by_response_url(respond)
        services.workers.soon(
            lambda: services.readings.fill_details(request, client, view_id, tell),
            "reading_details",
        )


def _request(body: dict[str, Any], context: BoltContext) -> ReadingRequest | None:
    """The reading a button asks about; None (logged) for a button AWAI did not make."""
    try:
        target = ReadingTarget.from_value(body["actions"][0]["value"])
    except (KeyError, IndexError, ValueError) as error:
        log.warning("Ignored a reading button: %s", error)
        return None
    return ReadingRequest(
        team_id=team_of(context),
        channel_id=target.channel_id,
        ts=target.ts,
        user_id=body["user"]["id"],
        bot_user_id=context.bot_user_id,
        thread_ts=target.thread_ts,
    )
