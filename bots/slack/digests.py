"""Posting a channel's digest to Slack: the Block Kit summary, then its picture as a file.

Used by ``/awai digest`` and by the scheduled digests (:mod:`bots.slack.schedule`). The picture
goes up with ``files_upload_v2`` (Slack's current upload flow: get an upload URL, send the bytes,
complete the upload into the channel).
"""

from __future__ import annotations

from slack_sdk import WebClient

from awai_engine.posts import Post
from awai_engine.schemas.digest import Digest
from bots.labels import labels_for
from bots.runtime import Runtime
from bots.slack.blocks import digest_message
from bots.slack.directory import SlackDirectory
from bots.slack.ingest import channel_id_of
from bots.slack.platform import PICTURE

PICTURE_NAME = "awai-digest.png"


class DigestPoster:
    def __init__(self, runtime: Runtime, directory: SlackDirectory) -> None:
        self.runtime = runtime
        self.directory = directory

    def post(self, client: WebClient, team_id: str, digest: Digest) -> None:
        """Post ``digest`` in its own channel: the summary message, then the picture."""
        channel_id = channel_id_of(digest.channel)
        examples = {
            example.message_id
            for speaker in digest.speakers
            for schema in speaker.schemas
            for example in schema.examples
        }
        refs = self.runtime.message_refs(digest.channel, examples)

        def permalink_of(message_id: str, thread_root: str | None) -> str:
            if thread_root is None and message_id in refs:
                thread_root = refs[message_id].thread_root
            return self.directory.permalink(client, team_id, channel_id, message_id, thread_root)

        message = digest_message(digest, permalink_of)
        posted = client.chat_postMessage(
            channel=channel_id, text=message.text, blocks=message.blocks
        )
        _record(self.runtime, digest, channel_id, posted["ts"], None)
        uploaded = client.files_upload_v2(
            channel=channel_id,
            file=digest.png,
            filename=PICTURE_NAME,
            title=labels_for(digest.language)["digest:picture"],
        )
        files = uploaded.get("files") or [uploaded.get("file") or {}]
        _record(self.runtime, digest, channel_id, posted["ts"], files[0].get("id"))


def _record(
    runtime: Runtime, digest: Digest, channel_id: str, ts: str, file_id: str | None
) -> None:
    """A digest posted in a channel (its message, and its picture's file), on the record of
    posts, so a later deletion of a message it quotes redacts it."""
    parts = [Post(channel=digest.channel, place=channel_id, post_id=ts)]
    if file_id:
        parts.append(Post(channel=digest.channel, place=channel_id, post_id=file_id, part=PICTURE))
    runtime.posts.digest(digest, parts)
