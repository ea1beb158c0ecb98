"""Who may have a reading: only members of the channel the message lives in; and who may have a
channel's history read in: the people who manage it (:class:`ChannelAsker`).

Why ``conversations.members`` rather than trusting where the request came from: ``/awai read``
takes a link to any channel, and a link to a private channel must not let an outsider read it.
The answer comes from Slack with the bot's token, so a channel the bot cannot see is refused too.
"""

from __future__ import annotations

from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from awai_engine.errors import AwaiError
from awai_engine.visibility import Scopes
from bots.slack import messages

MEMBERS_PAGE = 1000

MEMBER_SCOPES = Scopes.channel()
"""What a member of a Slack channel may read of it through AWAI: all of it. Every Slack
conversation, a private channel included, is an AWAI channel of its own, and a thread is seen
by everyone in its channel; so the check is membership (:func:`check_member`), and a member's
scopes, and a post's audience in the channel, are the channel's one scope."""


class AccessRefusedError(AwaiError):
    """The user may not have this reading; ``str(error)`` is the polite answer to show them."""


def check_member(client: WebClient, channel_id: str, user_id: str) -> None:
    """Return if ``user_id`` is a member of ``channel_id``; raise :class:`AccessRefusedError` if not."""
    try:
        for page in client.conversations_members(channel=channel_id, limit=MEMBERS_PAGE):
            if user_id in page.get("members", []):
                return
    except SlackApiError as error:
        code = error.response.get("error")
        if code in ("channel_not_found", "not_in_channel", "missing_scope"):
            raise AccessRefusedError(messages.CANNOT_SEE_CHANNEL) from None
        raise
    raise AccessRefusedError(messages.NOT_A_MEMBER)


@dataclass(frozen=True)
class ChannelAsker:
    """Someone asking in a channel, as the backfill action asks whether they manage it: a
    workspace admin or owner (``users.info``), or the person who created the channel
    (``conversations.info``). Slack's channel-manager role is not in the Web API a bot token
    reads, so the channel's creator stands for it. Slack's errors are raised."""

    client: WebClient
    channel_id: str
    user_id: str
    managers: str = messages.BACKFILL_MANAGERS

    def manages_place(self) -> bool:
        user = self.client.users_info(user=self.user_id)["user"]
        if user.get("is_admin") or user.get("is_owner"):
            return True
        channel = self.client.conversations_info(channel=self.channel_id)["channel"]
        return bool(channel.get("creator") == self.user_id)
