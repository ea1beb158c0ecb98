"""Backfill: a place's history read into AWAI page by page, resumable after a restart, on every
platform (Slack's ``/awai backfill`` and the backfill on joining; Discord's ``/awai backfill``,
a backfill a stop interrupted, and its catch-up after downtime).

Each page is stored before its cursor is saved, so a crash between the two only means the page
is read again, and storing is idempotent: nothing is lost, nothing is stored twice. The cursor is
kept in the database under the place's key, so a restart, or the next backfill, goes on from
where the last one stopped. Where a run starts (over again, or after the saved cursor), what a
page is and what counts as read are the platform's (:class:`History`); the order is here.

Who may ask for one is one rule on every platform (:func:`check_may_backfill`): a person who
manages the place, as the platform says (:class:`Asker`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Protocol

from awai_engine.values import Utterance
from bots.actions.platform import Refused
from bots.commands import who_may_backfill
from bots.records import BackfillCursor
from bots.runtime import Runtime

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BackfillProgress:
    """Where a backfill of one place stands: messages read (as the platform counts them),
    stored new, refused by the store, whether it is done, and whether it resumed a run."""

    fetched: int
    added: int
    refused: int
    done: bool
    resumed: bool


@dataclass(frozen=True)
class Start:
    """Where a run starts: the platform's cursor (``None``: its first page), the messages the
    saved cursor had counted, and whether this resumes an unfinished run."""

    cursor: str | None
    fetched: int = 0
    resumed: bool = False


@dataclass(frozen=True)
class Page:
    """One page of history: what AWAI stores of it, how many messages it counts as read, the
    cursor just past it, and whether it is the last."""

    utterances: list[Utterance]
    fetched: int
    cursor: str | None
    last: bool


class History(Protocol):
    """One place's history on a platform, read page by page."""

    @property
    def key(self) -> str:
        """The key its cursor is saved under."""

    def start(self, saved: BackfillCursor | None) -> Start:
        """Where to start, given the cursor saved by an earlier run (``None``: never run)."""

    def page(self, cursor: str | None) -> Page:
        """The page at ``cursor``; the platform's errors are raised (the run stops there, its
        cursor saved at the last stored page)."""

    def show(self, progress: BackfillProgress) -> None:
        """Tell people how far it got (after each page, and once when done)."""


class Asker(Protocol):
    """A person asking for a place's history to be read in, as the platform knows them."""

    @property
    def managers(self) -> str:
        """Who manages a place on this platform, in its words: the end of "Backfill is for …"."""

    def manages_place(self) -> bool:
        """Whether the asker manages the place (the platform is asked where it must be)."""


def check_may_backfill(asker: Asker) -> None:
    """Return when ``asker`` may have the place's history read in; else :class:`Refused`.

    Why only those who manage the place: a backfill writes everything said there before AWAI
    came, by everyone, into AWAI's store at once; reading one message stores at most that one.
    Deciding that for a whole channel is for the people who decide about the channel.
    """
    if not asker.manages_place():
        raise Refused(who_may_backfill(asker.managers), "does not manage the place")


def backfill(runtime: Runtime, history: History) -> BackfillProgress:
    """Read ``history`` from where its cursor stands to its end; the progress at the end."""
    start = history.start(runtime.cursor(history.key))
    cursor = start.cursor
    runtime.save_cursor(history.key, cursor, start.fetched, done=False)
    progress = BackfillProgress(start.fetched, 0, 0, done=False, resumed=start.resumed)
    if start.resumed:  # where it resumes is news already, and what a stop before a page reports
        history.show(progress)
    while True:
        page = history.page(cursor)
        report = runtime.engine.ingest(page.utterances)
        cursor = page.cursor
        progress = replace(
            progress,
            fetched=progress.fetched + page.fetched,
            added=progress.added + report.added,
            refused=progress.refused + len(report.problems) + report.refused_deleted,
            done=page.last,
        )
        runtime.save_cursor(history.key, cursor, progress.fetched, done=page.last)
        if report.problems:
            log.info("Backfill of %s: %d message(s) not stored", history.key, len(report.problems))
        history.show(progress)
        if page.last:
            return progress
