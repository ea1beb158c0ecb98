"""After a message is removed (deleted, withdrawn by an edit, forgotten), AWAI's own posts that
quote it lose their text, on every platform; the removals the platforms report are here too, so
none of them can forget the redaction.

The promise: a deleted message leaves AWAI's posts too. The record of posts
(:mod:`awai_engine.posts`) knows which post quotes which stored message; each post to redact is
handed to the platform's :class:`~bots.actions.platform.PostEditor`. A post the platform would
not change stays on the record, and the next delete or forget in the channel tries it again.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from bots.actions.platform import PostEditor
from bots.runtime import Runtime

log = logging.getLogger(__name__)

REMOVED_NOTICE = (
    "This AWAI post quoted a message that has since been deleted, or whose author asked AWAI to"
    " forget them, so its text was removed. Ask AWAI again for a new one."
)


def redact_posts(runtime: Runtime, editor: PostEditor, channel: str) -> int:
    """Redact every post of AWAI's quoting a removed message of ``channel``; how many were."""
    done = 0
    for post in runtime.posts.to_redact(channel):
        if not editor.redact(post, REMOVED_NOTICE):
            continue
        runtime.posts.redacted(post)
        done += 1
    if done:
        log.info("Redacted %d AWAI post(s) quoting removed messages of %s", done, channel)
    return done


def delete_messages(
    runtime: Runtime, editor: PostEditor, channel: str, message_ids: Iterable[str]
) -> None:
    """Messages deleted on the platform leave AWAI everywhere, then its posts quoting them are
    redacted."""
    for message_id in message_ids:
        runtime.engine.delete(channel, message_id)
    redact_posts(runtime, editor, channel)


def withdraw_words(
    runtime: Runtime, editor: PostEditor, channel: str, message_id: str, edited_ts: float | None
) -> bool:
    """A message edited into no words, or into a command to AWAI, took its author's words off
    the platform: they are forgotten as a deletion is and the posts quoting them redacted. An
    edit made after this one that puts words back stores the message again. Whether anything
    stored was withdrawn."""
    if not runtime.engine.withdraw(channel, message_id, edited_ts):
        return False
    redact_posts(runtime, editor, channel)
    return True
