"""After a message is removed (deleted, withdrawn by an edit, forgotten), AWAI's own posts that
quote it lose their text, on every platform.

The promise: a deleted message leaves AWAI's posts too. The record of posts
(:mod:`awai_engine.posts`) knows which post quotes which stored message; each post to redact is
handed to the platform's :class:`~bots.actions.platform.PostEditor`. A post the platform would
not change stays on the record, and the next delete or forget in the channel tries it again.
"""

from __future__ import annotations

import logging

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
