"""Removing a workspace's data when it uninstalls AWAI or revokes its token, or a channel's when
AWAI is removed from it; redacting AWAI's own posts that quote a deleted or forgotten message.

Why everything: a workspace that removes the app has withdrawn its consent; its messages,
thoughts, vectors, schemas and backfill cursors all go, in every channel, and nothing of another
workspace is touched.
"""

from __future__ import annotations

import logging

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from awai_engine.posts import Post
from awai_engine.schemas.digest import Digest
from awai_engine.values import Reading
from bots.runtime import Runtime
from bots.slack.blocks import notice
from bots.slack.ingest import channel_key, workspace_prefix

log = logging.getLogger(__name__)


def purge_workspace(runtime: Runtime, team_id: str) -> list[str]:
    """Drop every stored channel of one workspace; returns the channel keys removed."""
    prefix = workspace_prefix(team_id)
    removed = runtime.purge_prefix(prefix)
    log.info("Purged %d channel(s) of workspace %s", len(removed), team_id)
    return removed


REMOVED_NOTICE = (
    "This AWAI post quoted a message that has since been deleted, or whose author asked AWAI to"
    " forget them, so its text was removed. Ask AWAI again for a new one."
)
PICTURE = "picture"
"""The part name of a digest's picture (a Slack file) in the record of posts."""
GONE_ERRORS = frozenset(
    {"message_not_found", "channel_not_found", "file_not_found", "file_deleted", "not_in_channel"}
)
"""Slack's answers for a post that is no longer there to redact (nothing of it can be seen)."""


def record_reading(
    runtime: Runtime, reading: Reading, channel_id: str, ts: str, subject: str
) -> None:
    """A reading of message ``subject`` posted in a channel for everyone, on the record with
    what it quotes (and as that message's one shared reading)."""
    runtime.posts.reading(
        reading,
        Post(channel=reading.context.channel, place=channel_id, post_id=ts, subject=subject),
    )


def record_digest(
    runtime: Runtime, digest: Digest, channel_id: str, ts: str, file_id: str | None
) -> None:
    """A digest posted in a channel (its message, and its picture's file), on the record."""
    parts = [Post(channel=digest.channel, place=channel_id, post_id=ts)]
    if file_id:
        parts.append(Post(channel=digest.channel, place=channel_id, post_id=file_id, part=PICTURE))
    runtime.posts.digest(digest, parts)


def redact_posts(runtime: Runtime, client: WebClient, channel: str) -> int:
    """Edit every post of AWAI's in ``channel`` that quotes a deleted or forgotten message so its
    text is gone (a picture is deleted); returns how many. A post Slack would not change stays on
    the record, and the next delete or forget in the channel tries it again."""
    done = 0
    for post in runtime.posts.to_redact(channel):
        try:
            if post.part == PICTURE:
                client.files_delete(file=post.post_id)
            else:
                client.chat_update(
                    channel=post.place,
                    ts=post.post_id,
                    text=REMOVED_NOTICE,
                    blocks=notice(REMOVED_NOTICE).blocks,
                )
        except SlackApiError as error:
            if error.response.get("error") not in GONE_ERRORS:
                log.warning("AWAI post %s in %s not redacted: %s", post.post_id, post.place, error)
                continue
        runtime.posts.redacted(post)
        done += 1
    return done


def purge_channel(runtime: Runtime, team_id: str, channel_id: str) -> None:
    """AWAI was removed from a channel: its messages, vectors, schemas and cursors go, and what
    the stores keep of them on disk, as when the workspace uninstalls AWAI."""
    key = channel_key(team_id, channel_id)
    runtime.purge_channel(key)
    log.info("Purged channel %s: AWAI was removed from it", key)
