"""Catch-up: what was said while AWAI was away is read when it comes back, on every platform
(Slack's start and every Socket Mode reconnect; Discord's server becoming available and the
gateway resuming).

For each channel of a workspace or server, a backfill that a stop interrupted is finished first,
from its cursor (the channel's past before what came after). A channel AWAI has read before is
then read from its newest stored message on, each of its lines (what the platform reads as one
history: Slack's channel with its threads' new replies, Discord's channel and each thread) by the
backfill action (:mod:`bots.actions.backfill`), so a page is stored before its cursor moves and an
interrupted catch-up resumes where it stopped; storing twice changes nothing. A channel never read
is left to its backfill. One channel's failure is logged and the others are still caught up.
Progress goes to the log: one line per channel with anything new, one per workspace or server,
never what anyone wrote.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from bots.actions.backfill import History, backfill
from bots.runtime import Runtime

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CaughtUp:
    """What one catch-up of a workspace or server read: channels looked at, messages stored."""

    channels: int
    added: int


class Place(Protocol):
    """One channel of a workspace or server, as a catch-up reads it."""

    @property
    def key(self) -> str:
        """The stored channel key, which is also its backfill cursor's key."""

    def resume_backfill(self) -> int:
        """Finish the channel's backfill a stop interrupted, from its cursor; messages stored."""

    def lines(self) -> Iterable[History]:
        """Its histories after what AWAI stored of them, each with a catch-up cursor of its own
        (none when AWAI may not read the channel's history now)."""


class Workspace(Protocol):
    """A Slack workspace or a Discord server AWAI catches up."""

    @property
    def name(self) -> str:
        """How the log names it ("workspace T0…", "server 1…")."""

    def places(self) -> Iterable[Place]:
        """Its channels AWAI may be behind on."""

    def refusal(self, error: Exception) -> str | None:
        """The platform's few words when ``error`` is the platform refusing or failing a call
        (the channel is skipped with a warning); ``None`` for anything else (logged in full)."""


def catch_up(runtime: Runtime, workspace: Workspace) -> CaughtUp:
    """Read what was said in ``workspace`` since AWAI last stored anything of each channel."""
    channels = added = 0
    for place in workspace.places():
        try:
            added += _resume(runtime, place)
            if place.key not in runtime.channels():
                continue  # never read: left to its backfill
            new = sum(backfill(runtime, line).added for line in place.lines())
        except Exception as error:  # one channel's failure must not stop the others' catch-up
            reason = workspace.refusal(error)
            if reason is None:
                log.exception("Catch-up of %s failed", place.key)
            else:
                log.warning("Catch-up of %s stopped: %s", place.key, reason)
            continue
        channels += 1
        added += new
        if new:
            log.info("Caught up %s: %d new message(s)", place.key, new)
    log.info("Caught up %s: %d new message(s) in %d channel(s)", workspace.name, added, channels)
    return CaughtUp(channels, added)


def _resume(runtime: Runtime, place: Place) -> int:
    saved = runtime.cursor(place.key)
    if saved is None or saved.done:
        return 0
    log.info("Resuming the interrupted backfill of %s", place.key)
    added = place.resume_backfill()
    log.info("Resumed backfill of %s stored %d new message(s)", place.key, added)
    return added
