"""Small translations every listener needs: whose workspace, and how to answer privately."""

from __future__ import annotations

import logging

from slack_bolt import BoltContext
from slack_bolt.context.respond import Respond
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bots.slack.reading import Tell

log = logging.getLogger(__name__)


def team_of(context: BoltContext) -> str:
    """The workspace a request belongs to (the organisation for an org-wide install)."""
    team = context.team_id or context.enterprise_id
    if not team:
        raise ValueError("The Slack request names no workspace.")
    return team


def tell_by_response_url(respond: Respond) -> Tell:
    """Answer through the request's ``response_url``: works even where AWAI is not a member."""

    def tell(text: str) -> None:
        respond(text=text, response_type="ephemeral", replace_original=False)

    return tell


def tell_ephemeral(
    client: WebClient, channel_id: str, user_id: str, thread_ts: str | None = None
) -> Tell:
    """Answer with a message only ``user_id`` sees (requests without a ``response_url``)."""

    def tell(text: str) -> None:
        try:
            client.chat_postEphemeral(
                channel=channel_id, user=user_id, thread_ts=thread_ts, text=text
            )
        except SlackApiError as error:
            log.warning("Could not answer %s: %s", user_id, error.response.get("error"))

    return tell
