"""Digests: each speaker's recurring ideas in a channel, with a map, on every platform — asked for
(Slack's and Discord's ``/awai digest``) or on a schedule (``AWAI_SLACK__DIGEST_SCHEDULE``,
``AWAI_DISCORD__DIGEST_SCHEDULE``).

A digest posted for everyone is recorded as the channel's last shared one (the next reports what
changed since) and goes on the record of AWAI's posts with the messages it quotes, part by part
as each is posted, so a later delete or forget redacts it even if a later part failed. A digest
shown to one asker only is one person's look: it is not recorded. Each firing of a schedule is
claimed once across processes by the scheduler (:mod:`bots.scheduler`), never again here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from awai_engine.posts import Post
from awai_engine.schemas.digest import Digest
from awai_engine.schemas.service import UnknownChannelError
from awai_engine.values import MessageRef
from awai_engine.visibility import Scopes
from bots.runtime import Runtime
from bots.scheduler import DigestPoster, DigestTitle, SchedulerService

log = logging.getLogger(__name__)


class Board(Protocol):
    """A channel where AWAI posts digests for everyone."""

    @property
    def channel(self) -> str:
        """The stored channel key whose digest is posted there."""

    @property
    def title(self) -> str:
        """The name people know the channel by (``#launch``): the digest's title."""

    def post(self, digest: Digest, refs: Mapping[str, MessageRef]) -> Iterator[Post]:
        """Post ``digest`` for everyone, yielding each part (the message, a picture posted
        apart) as soon as it is posted; ``refs``: where each example was said, for its link.
        The platform's errors are raised."""


@dataclass(frozen=True)
class ForOne:
    """A digest for one asker only, and where its examples were said (for their links)."""

    digest: Digest
    refs: dict[str, MessageRef]


@dataclass(frozen=True)
class DigestAnswer:
    """How a digest someone asked for ended: the parts posted for everyone, the digest shown
    to them alone, or neither (``nothing_read``: AWAI has read nothing there; else it failed,
    which is logged)."""

    posted: list[Post] = field(default_factory=list)
    mine: ForOne | None = None
    nothing_read: bool = False


def answer_digest(
    runtime: Runtime, board: Board, scopes: Scopes, for_everyone: bool
) -> DigestAnswer:
    """The digest of the board's channel someone asked for (``/awai digest``), as ``scopes``
    may see it: posted and recorded when it is ``for_everyone``, else made for them alone.
    Never raises (an interrupt aside)."""
    try:
        if for_everyone:
            return DigestAnswer(posted=share_digest(runtime, board, scopes))
        return DigestAnswer(mine=digest_for_one(runtime, board.channel, scopes, board.title))
    except UnknownChannelError:
        return DigestAnswer(nothing_read=True)
    except Exception:
        log.exception("The digest of %s failed", board.channel)
        return DigestAnswer()


def share_digest(runtime: Runtime, board: Board, scopes: Scopes) -> list[Post]:
    """Make the board's channel's digest as ``scopes`` may see it (everyone who sees the
    channel), post it and put it on record; the parts posted. Raises
    :class:`~awai_engine.schemas.service.UnknownChannelError` when nothing of it is read."""
    digest = runtime.schemas.digest(board.channel, scopes, record=True, title=board.title)
    return post_digest(runtime, board, digest)


def digest_for_one(
    runtime: Runtime, channel: str, scopes: Scopes, title: str | None = None
) -> ForOne:
    """The channel's digest as one asker who may read ``scopes`` sees it, not recorded
    (``title``: the name people know the channel by)."""
    digest = runtime.schemas.digest(channel, scopes, record=False, title=title)
    return ForOne(digest, example_refs(runtime, digest))


def post_digest(runtime: Runtime, board: Board, digest: Digest) -> list[Post]:
    """Post a digest already made for everyone on ``board``, each part on record once posted."""
    parts: list[Post] = []
    for part in board.post(digest, example_refs(runtime, digest)):
        parts.append(part)
        runtime.posts.digest(digest, parts)
    log.info("Posted the digest of %s", digest.channel)
    return parts


def example_refs(runtime: Runtime, digest: Digest) -> dict[str, MessageRef]:
    """Where each example quoted by ``digest`` was said (its thread), for its link."""
    examples = {
        example.message_id
        for speaker in digest.speakers
        for schema in speaker.schemas
        for example in schema.examples
    }
    return runtime.message_refs(digest.channel, examples)


def scheduled_poster(runtime: Runtime, board_of: Callable[[str], Board | None]) -> DigestPoster:
    """What the scheduler calls when a platform's digest job fires (in its thread, the firing
    already claimed): post the digest on the channel's board, if the platform still has one."""

    def post(channel: str, digest: Digest) -> None:
        board = board_of(channel)
        if board is None:
            log.warning("Digest of %s not posted: AWAI can no longer post there", channel)
            return
        post_digest(runtime, board, digest)

    return post


def scheduled_title(board_of: Callable[[str], Board | None]) -> DigestTitle:
    """The title of a scheduled digest of a channel: its board's, while the platform has one."""

    def title_of(channel: str) -> str | None:
        board = board_of(channel)
        return None if board is None else board.title

    return title_of


def keep_schedules(scheduler: SchedulerService, poster: str, wanted: Mapping[str, str]) -> None:
    """Make ``poster``'s scheduled digests what the settings say: channel key → crontab (UTC)
    added or replaced, and the channels no longer configured unscheduled."""
    for scheduled, channel, _ in scheduler.digest_schedules():
        if scheduled == poster and channel not in wanted:
            scheduler.unschedule_digest(channel, poster)
    for channel, crontab in wanted.items():
        try:
            scheduler.schedule_digest(channel, poster, cron=crontab)
        except ValueError as error:
            log.error(
                "Digest of %s not scheduled: %r is not a crontab: %s", channel, crontab, error
            )
