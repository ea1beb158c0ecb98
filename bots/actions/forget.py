"""Forget me: everything the asker said in one channel leaves AWAI, for good, on every platform.

The messages, their thoughts and vectors, and the versions of the asker's preconceptions made
from them go (a tombstone keeps a backfill from reading them again), and then AWAI's posts that
quoted them are redacted. What the asker writes afterwards is read as before.
"""

from __future__ import annotations

import logging

from awai_engine.schemas.service import ForgetReport, UnknownChannelError
from bots.actions.platform import PostEditor
from bots.actions.redact import redact_posts
from bots.runtime import Runtime

log = logging.getLogger(__name__)


def forget_me(
    runtime: Runtime, editor: PostEditor, channel: str, speaker: str
) -> ForgetReport | None:
    """Forget what ``speaker`` said in ``channel``; ``None`` when AWAI keeps nothing of the
    channel (so nothing of theirs)."""
    try:
        report = runtime.schemas.forget_speaker(channel, speaker)
    except UnknownChannelError:
        return None
    redact_posts(runtime, editor, channel)
    log.info("Forgot %d message(s) of a speaker in %s", report.messages, channel)
    return report
