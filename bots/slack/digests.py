"""A Slack channel as the digest action posts on it (:mod:`bots.actions.digest`): the Block Kit
summary, then its picture as a file.

The picture goes up with ``files_upload_v2`` (Slack's current upload flow: get an upload URL,
send the bytes, complete the upload into the channel); each example links to its message.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from slack_sdk import WebClient

from awai_engine.posts import Post
from awai_engine.schemas.digest import Digest
from awai_engine.values import MessageRef
from bots.labels import labels_for
from bots.slack.blocks import digest_message
from bots.slack.directory import SlackDirectory
from bots.slack.ingest import channel_key
from bots.slack.platform import PICTURE

PICTURE_NAME = "awai-digest.png"


@dataclass(frozen=True)
class SlackBoard:
    """One channel of a workspace, posted to with that workspace's client."""

    directory: SlackDirectory
    client: WebClient
    team_id: str
    channel_id: str

    @property
    def channel(self) -> str:
        return channel_key(self.team_id, self.channel_id)

    @property
    def title(self) -> str:
        return self.directory.channel_title(self.client, self.team_id, self.channel_id)

    def post(self, digest: Digest, refs: Mapping[str, MessageRef]) -> Iterator[Post]:
        def permalink_of(message_id: str, thread_root: str | None) -> str:
            if thread_root is None and message_id in refs:
                thread_root = refs[message_id].thread_root
            return self.directory.permalink(
                self.client, self.team_id, self.channel_id, message_id, thread_root
            )

        message = digest_message(digest, permalink_of)
        posted = self.client.chat_postMessage(
            channel=self.channel_id, text=message.text, blocks=message.blocks
        )
        yield Post(channel=digest.channel, place=self.channel_id, post_id=posted["ts"])
        uploaded = self.client.files_upload_v2(
            channel=self.channel_id,
            file=digest.png,
            filename=PICTURE_NAME,
            title=labels_for(digest.language)["digest:picture"],
        )
        files = uploaded.get("files") or [uploaded.get("file") or {}]
        if file_id := files[0].get("id"):
            yield Post(channel=digest.channel, place=self.channel_id, post_id=file_id, part=PICTURE)
