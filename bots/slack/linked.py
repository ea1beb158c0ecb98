"""Whether a pasted message link belongs to this workspace: decided by team id, not by hostname.

Why not the hostname: a workspace that renames its domain keeps its old links working, and in an
Enterprise Grid the same channel is linked under the organisation's host and the workspace's. The
channel itself says whose it is: ``conversations.info`` with this installation's token names the
team it lives in (and, for a shared channel, every team it is shared with). A channel this token
cannot see at all is another workspace's when its link's host is not ours either; otherwise it is
ours and simply hidden from AWAI, which the access check then says politely.
"""

from __future__ import annotations

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bots.slack import messages
from bots.slack.directory import SlackDirectory
from bots.slack.links import Permalink, host_of

UNSEEN = frozenset({"channel_not_found", "not_in_channel"})


def other_workspace_refusal(
    client: WebClient, directory: SlackDirectory, team_id: str, link: Permalink
) -> str | None:
    """The polite refusal when ``link`` is of another workspace; ``None`` when it is ours."""
    try:
        channel = client.conversations_info(channel=link.channel_id)["channel"]
    except SlackApiError as error:
        if error.response.get("error") not in UNSEEN:
            raise
        ours = link.host == host_of(directory.workspace_url(client, team_id))
        return None if ours else messages.OTHER_WORKSPACE
    teams = {
        channel.get("context_team_id"),
        channel.get("conversation_host_id"),
        *(channel.get("shared_team_ids") or ()),
        *(channel.get("internal_team_ids") or ()),
    } - {None}
    return None if not teams or team_id in teams else messages.OTHER_WORKSPACE
