"""Read privately: one person asks for a message's reading and gets it, seen by nobody else.

Every route ends here — Slack's "Read with AWAI" shortcut, ``@AWAI read`` and ``/awai read``,
Discord's "Read with AWAI" menu, ``/awai read`` and ``@AWAI read`` — once the platform has turned
the request into a :class:`~bots.actions.platform.Platform` for that asker and message. The asker
must be able to read the message's channel; the same asker asking again for the same message
within the window (:mod:`bots.actions.settings`) gets one reading, whichever process gets the
request; a reading that cannot be had or delivered gives that claim back, so asking again right
away tries again. Nothing is posted for everyone here: a refusal or a failure reaches only the
asker, and sharing is its own action (:mod:`bots.actions.share`).
"""

from __future__ import annotations

import logging
from enum import Enum

from bots.actions.platform import Platform, Refused
from bots.actions.reading import reading_of, shared_post, window_seconds
from bots.runtime import Runtime

log = logging.getLogger(__name__)

LOOK_BACK = 50
"""How many messages before an ``@AWAI read`` that names no message each platform fetches: the
one just before it (which it reads, bots' posts skipped) and those that may not be stored yet.
One value, so the same request reaches as far back on Slack as on Discord."""


class Delivery(Enum):
    """How a private reading went (a refusal or a failure is raised instead)."""

    SENT = "sent"
    ALREADY_ON_ITS_WAY = "already on its way"


def read_privately(runtime: Runtime, platform: Platform) -> Delivery:
    """Read the platform's message for its asker and show it to them only.

    Raises :class:`~bots.actions.platform.Refused` (the platform's sentence for the asker),
    :class:`~awai_engine.engine.UnknownMessageError` when the message cannot be read,
    :class:`~awai_engine.engine.StillStoringError` when another writer's store of it does not
    finish, and whatever else failed; the claim is given back in every such case.
    """
    check_may_read(platform)
    claim = f"reading:{platform.channel}:{platform.message_id}:{platform.asker}"
    if not runtime.claim(claim, window_seconds(runtime)):
        log.info(
            "Reading of %s in %s for %s: already on its way",
            platform.message_id,
            platform.channel,
            platform.asker,
        )
        return Delivery.ALREADY_ON_ITS_WAY
    try:
        reading = reading_of(runtime, platform)
        shared = shared_post(runtime, platform)
        platform.post_privately(reading, None if shared is None else platform.link_to(shared))
    except Refused as refusal:
        runtime.release(claim)
        _log_refusal(platform, refusal)
        raise
    except BaseException:
        runtime.release(claim)
        raise
    log.info(
        "Read %s in %s for %s (%s, private)",
        platform.message_id,
        platform.channel,
        platform.asker,
        reading.backend,
    )
    return Delivery.SENT


def check_may_read(platform: Platform) -> None:
    """The platform's access check, with its refusal on the log (its reason, never words)."""
    try:
        platform.check_may_read()
    except Refused as refusal:
        _log_refusal(platform, refusal)
        raise


def _log_refusal(platform: Platform, refusal: Refused) -> None:
    log.info(
        "Refused %s the reading of %s in %s: %s",
        platform.asker,
        platform.message_id,
        platform.channel,
        refusal.reason,
    )
