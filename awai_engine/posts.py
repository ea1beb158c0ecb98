"""AWAI's own posts, and which stored messages each one quotes: what to redact when one goes.

Why a record: a shared reading or a digest quotes people's messages (the message read, its flow,
recalled thoughts, preconceptions made from their words). When one of those messages is deleted,
or its author asks AWAI to forget them, the post must lose those words too, on the platform. So
every poster (a shared reading, a digest, whatever comes next) records what it posted through
:class:`PostRecord`, and after a removal the adapter asks :meth:`PostRecord.to_redact` which of
its posts quote a removed message, edits or deletes each, and confirms it.

The record is resumable by construction: a post is due for redaction while any message it quotes
has a tombstone, so a crash between a removal and the edit is finished by the next sweep.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from pydantic import Field

from awai_engine.schemas.digest import Digest
from awai_engine.values import Reading, Value


class Post(Value):
    """One message AWAI posted: the AWAI channel it quotes, and where the adapter finds it.

    ``place`` and ``post_id`` are the adapter's own (a Slack channel id and ``ts``, a Discord
    channel id and message id); ``part`` names which part of a post it is when one post is
    several platform objects (a digest's text and its picture).
    """

    channel: str = Field(min_length=1)
    place: str = Field(min_length=1)
    post_id: str = Field(min_length=1)
    part: str = Field("message", min_length=1)
    subject: str | None = Field(
        None,
        description=(
            "The stored message a shared reading reads (None for a digest): one shared reading"
            " per message, so a second share links to the first."
        ),
    )


class PostStore(Protocol):
    """Durable record of posts and the stored message ids each quotes (``storage/`` has it)."""

    def record(self, post: Post, sources: Sequence[str]) -> None:
        """Remember a post and the ids of the stored messages it quotes (again: replaces them)."""
        ...

    def quoting_removed(self, channel: str | None = None) -> list[Post]:
        """Posts quoting a message that has a tombstone (all channels, or one)."""
        ...

    def forget(self, post: Post) -> None:
        """Drop a post's record (it was redacted, or it is gone from the platform)."""
        ...

    def shared_reading(self, channel: str, subject: str) -> Post | None:
        """The post of the shared reading of message ``subject``, if one is on record."""
        ...


class PostRecord:
    """The one way a poster records what it posted, and the adapter learns what to redact."""

    def __init__(self, store: PostStore) -> None:
        self.store = store

    def reading(self, reading: Reading, post: Post) -> None:
        """Record a posted reading with every message it shows or was written from."""
        self.store.record(post, sorted(reading_sources(reading)))

    def digest(self, digest: Digest, posts: Iterable[Post]) -> None:
        """Record a posted digest (each of its parts) with the messages it was made from."""
        sources = sorted(digest_sources(digest))
        for post in posts:
            self.store.record(post, sources)

    def shared_reading(self, channel: str, message_id: str) -> Post | None:
        """The reading of ``message_id`` already shared in ``channel`` (and not redacted)."""
        return self.store.shared_reading(channel, message_id)

    def to_redact(self, channel: str | None = None) -> list[Post]:
        """Posts that quote a deleted or forgotten message, oldest first."""
        return self.store.quoting_removed(channel)

    def redacted(self, post: Post) -> None:
        """The adapter edited or deleted the post: nothing of it remains to redact."""
        self.store.forget(post)


def reading_sources(reading: Reading) -> frozenset[str]:
    """Ids of every stored message a reading shows or was made from: the message, its flow, the
    recalled thoughts, and the members of the recalled preconceptions."""
    context = reading.context
    members = {message_id for schema in context.schemas for message_id in schema.members}
    return context.cited_message_ids() | members


def digest_sources(digest: Digest) -> frozenset[str]:
    """Ids of the stored messages a digest was made from (each shown speaker's schemas' members,
    and each shown speaker's latest message, so forgetting any shown speaker reaches it)."""
    return frozenset(message_id for speaker in digest.speakers for message_id in speaker.sources)
