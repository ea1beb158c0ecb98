"""Share: a message's reading posted for everyone by the message, once per message.

Slack's *Share in thread* and Discord's *Share* buttons end here, and so does every reading when
an operator made readings public (Slack's ``reply_placement = "thread"``, Discord's
``ephemeral_readings`` off). A shared reading holds only what everyone who sees it may read; a
second share, by anyone, gets the link to the first; presses while one is being posted are one
share (a claim for the window of :mod:`bots.actions.settings`), and a share that fails gives the
claim back. The post goes on the record of posts with what it quotes, so a later deletion of any
of it redacts the post (:mod:`bots.actions.redact`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from awai_engine.posts import Post
from bots.actions.platform import Platform
from bots.actions.read import check_may_read
from bots.actions.reading import reading_of, shared_post, window_seconds
from bots.runtime import Runtime

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Shared:
    """The message's one shared reading: just posted, posted earlier, or being posted by
    someone else right now (``busy``: no post yet). The platform links to ``post``."""

    post: Post | None
    earlier: bool = False
    busy: bool = False


def share(runtime: Runtime, platform: Platform, by_asker: bool = True) -> Shared:
    """Share the platform's message's reading (``by_asker``: the post says who shared it).

    Raises as :func:`~bots.actions.read.read_privately` does; the claim is given back then.
    """
    check_may_read(platform)
    earlier = shared_post(runtime, platform)
    if earlier is not None:
        return Shared(earlier, earlier=True)
    claim = f"share:{platform.channel}:{platform.message_id}"
    if not runtime.claim(claim, window_seconds(runtime)):
        return Shared(None, busy=True)
    try:
        reading = reading_of(runtime, platform, public=True)
        posted = platform.post_publicly(reading, by_asker)
    except BaseException:  # nothing was shared: asking again must try again
        runtime.release(claim)
        raise
    post = Post(
        channel=platform.channel,
        place=posted.place,
        post_id=posted.post_id,
        subject=platform.message_id,
    )
    runtime.posts.reading(reading, post)
    log.info(
        "Shared the reading of %s in %s (%s)",
        platform.message_id,
        platform.channel,
        reading.backend,
    )
    return Shared(post)
