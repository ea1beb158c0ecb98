"""What people see of a backfill, on every platform: one status message in the channel, edited
as pages are stored, that ends by saying the history is read, or why reading it stopped.

Why one place: Slack's status was edited after every page, and when AWAI itself failed (a full
disk, say) it kept promising progress that had stopped; Discord's was edited at most every few
seconds and said that it stopped. Both platforms rate-limit message edits, and both owe the
people in the channel the truth. When to edit and how a run ends are decided here; the sentences
are each platform's (:class:`StatusWords`), and so is posting the status message at the start
(where a refusal to post goes differs).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from bots.actions.backfill import BackfillProgress

log = logging.getLogger(__name__)

EDIT_INTERVAL_SECONDS = 2.0
"""Progress edits at most this often; the end is always shown."""


class StatusWords(Protocol):
    """A platform's sentences for a backfill's status."""

    def progress(self, progress: BackfillProgress) -> str:
        """How far it got so far."""

    def done(self, progress: BackfillProgress) -> str:
        """That the whole history is read."""

    def stopped(self, progress: BackfillProgress, reason: str | None) -> str:
        """That it stopped and how to go on; ``reason``: the platform's few words when it
        refused or failed a call, ``None`` when AWAI failed (its details are for the log)."""


class StatusMessage(Protocol):
    """The status message AWAI posted in the channel when the backfill started."""

    def say(self, text: str) -> None:
        """Make ``text`` the message's content (blocking); the platform's errors are raised."""


@dataclass
class Status:
    """One backfill's status message, for the histories it reads (a channel, then its threads)."""

    key: str
    """The place, as the log names it."""
    message: StatusMessage
    words: StatusWords
    refusal: Callable[[Exception], str | None]
    """The platform's few words when an error is the platform refusing or failing a call;
    ``None`` for anything else (AWAI's own failure)."""
    latest: BackfillProgress = field(
        default_factory=lambda: BackfillProgress(0, 0, 0, done=False, resumed=False)
    )
    """The last progress shown: what a stop reports."""
    _edited: float = field(default=float("-inf"), init=False, repr=False)

    def show(self, progress: BackfillProgress) -> None:
        """Progress after a page, shown unless an edit was made less than
        :data:`EDIT_INTERVAL_SECONDS` ago; the end is :func:`read_shown`'s to say."""
        self.latest = progress
        now = time.monotonic()
        if progress.done or now - self._edited < EDIT_INTERVAL_SECONDS:
            return
        self._edited = now
        self.say(self.words.progress(progress))

    def say(self, text: str) -> None:
        """Edit the status; an edit the platform refuses is logged and the backfill goes on
        (the history matters more than its status)."""
        try:
            self.message.say(text)
        except Exception as error:
            if self.refusal(error) is None:
                raise
            log.warning("Backfill status of %s not updated: %s", self.key, self.refusal(error))


def read_shown(read: Callable[[], BackfillProgress], status: Status) -> BackfillProgress | None:
    """Run ``read`` (a backfill whose histories show their pages on ``status``) and say in the
    status how it ended: done, or stopped, with the platform's reason when the error is the
    platform's (else AWAI failed: logged in full, and the status says only that). The progress
    at the end, or ``None`` when it stopped."""
    try:
        total = read()
    except Exception as error:
        reason = status.refusal(error)
        if reason is None:
            log.exception("Backfill of %s failed", status.key)
        else:
            log.warning("Backfill of %s stopped: %s", status.key, reason)
        status.say(status.words.stopped(status.latest, reason))
        return None
    log.info("Backfill of %s done: %d message(s)", status.key, total.fetched)
    status.say(status.words.done(total))
    return total
