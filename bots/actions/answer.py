"""How a request for a reading ends, on every platform: one value the platform puts in its words.

Every route a person can ask by (Slack's shortcut, ``/awai read``, ``@AWAI read`` and buttons;
Discord's menu, ``/awai read``, ``@AWAI read`` and buttons) runs one of the reading actions —
:mod:`~bots.actions.read`, :mod:`~bots.actions.share`, :mod:`~bots.actions.details` — and must
then tell the asker what happened: the reading was sent or is already on its way; it was shared
now, earlier, or is being shared; or it was refused, is still being stored, was not found, or
failed. Those errors were caught and sorted by hand in each route; here they are caught once and
become an :class:`Answer`, so a route only says it (each platform's sentences are a table from
:class:`Outcome` to its words). A failure is logged here, with its traceback, and reaches the
asker as ``FAILED``: never a traceback, never anything posted for everyone.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from awai_engine.engine import StillStoringError, UnknownMessageError
from awai_engine.posts import Post
from awai_engine.values import Reading, Utterance
from bots.actions.details import details
from bots.actions.platform import Platform, Refused
from bots.actions.read import Delivery, read_privately
from bots.actions.share import share
from bots.runtime import Runtime

log = logging.getLogger(__name__)


class Asked(Enum):
    """What the person asked for."""

    READING = "reading"
    """The reading, for them only."""
    SHARE = "share"
    """The message's one reading, for everyone (a Share button, or readings made public)."""
    DETAILS = "details"
    """The numbers behind the reading, for them only."""


class Outcome(Enum):
    """How it ended."""

    SENT = "sent"
    ALREADY_READING = "already reading"
    SHARED = "shared"
    SHARED_EARLIER = "shared earlier"
    SHARING_NOW = "sharing now"
    DETAILS = "details"
    REFUSED = "refused"
    STILL_STORING = "still storing"
    NOT_FOUND = "not found"
    FAILED = "failed"


@dataclass(frozen=True)
class Answer:
    """What to tell the asker: the outcome, with the platform's refusal sentence (``REFUSED``),
    the shared post to link to (``SHARED``, ``SHARED_EARLIER``) or the reading whose numbers to
    show (``DETAILS``)."""

    outcome: Outcome
    refusal: str = ""
    post: Post | None = None
    reading: Reading | None = None


def answer(
    runtime: Runtime,
    platform: Platform,
    asked: Asked,
    by_asker: bool = True,
    said_before: Sequence[Utterance] = (),
) -> Answer:
    """Do what was asked of the platform's message for its asker; how it ended. Never raises
    (an interrupt aside). ``by_asker``: whether a share names who shared it. ``said_before``:
    what the platform showed just before the message, when the asker named it by its place
    (``@AWAI read`` of the message before theirs): stored first, since it may still be on its
    way here, so the reading's context holds every message up to its own (storing twice
    changes nothing)."""
    try:
        if said_before:
            runtime.engine.ingest(said_before)
        if asked is Asked.DETAILS:
            return Answer(Outcome.DETAILS, reading=details(runtime, platform))
        if asked is Asked.SHARE:
            shared = share(runtime, platform, by_asker)
            if shared.busy:
                return Answer(Outcome.SHARING_NOW)
            outcome = Outcome.SHARED_EARLIER if shared.earlier else Outcome.SHARED
            return Answer(outcome, post=shared.post)
        delivery = read_privately(runtime, platform)
        sent = delivery is Delivery.SENT
        return Answer(Outcome.SENT if sent else Outcome.ALREADY_READING)
    except Refused as refusal:
        return Answer(Outcome.REFUSED, refusal=str(refusal))
    except StillStoringError:  # an UnknownMessageError too: caught first
        return Answer(Outcome.STILL_STORING)
    except UnknownMessageError:
        return Answer(Outcome.NOT_FOUND)
    except Exception:
        log.exception("%s of %s in %s failed", asked.value, platform.message_id, platform.channel)
        return Answer(Outcome.FAILED)
