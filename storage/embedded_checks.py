"""An embedded Chroma folder checked before Chroma reads it, once per process.

Why before: Chroma trusts its files. A damaged ``chroma.sqlite3`` fails or misbehaves on every
call; a damaged HNSW index can crash the process or allocate without bound as it loads
(:mod:`storage.hnsw_files`). Everything in the folder is derived from the SQL record, so damage
found here is never patched: a collection whose index is damaged raises
:class:`~awai_engine.reconcile.DamagedVectorsError`, and reconciliation rebuilds it from SQL
(with one line saying so); a damaged ``chroma.sqlite3`` takes the whole folder with it, so the
folder is set aside and removed (it holds vectors, perhaps of forgotten messages) and an empty
one made, whose every collection the record then rebuilds the same way.

The index is also counted against Chroma's own record of the collection (what it will hold once
loaded, its live elements and Chroma's log not yet applied to them): an index from another time
loads without error, and then fails at every vector it lacks ("Error finding id") or keeps on
disk vectors Chroma no longer records, a forgotten person's perhaps. AWAI's audit compares that
record with SQL's, id by id (:mod:`storage.repair`), so an index that passes is what SQL holds.

Another process may be rewriting an index while it is checked (a bot beside ``awai doctor``), so
damage counts only when a second look, a moment later, finds it too.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import threading
import time
from pathlib import Path

from awai_engine.reconcile import DamagedVectorsError
from storage.hnsw_files import (
    UnknownLayout,
    database_damage,
    index_damage,
    index_out_of_date,
    journal_pending,
    segment_of,
)
from storage.index_probe import probe_index

log = logging.getLogger(__name__)

SECOND_LOOK_SECONDS = 0.3
SET_ASIDE = ".damaged-"


class EmbeddedChecks:
    """The checks of one embedded Chroma folder; ``writable``: a damaged folder may be set
    aside (a command that only looks reports it instead)."""

    def __init__(self, path: Path, writable: bool) -> None:
        self.path = path
        self.writable = writable
        self._lock = threading.Lock()
        self._folder_checked = False
        self._lost: str | None = None
        """Why Chroma's database was unusable when this process opened the folder."""
        self._set_aside = False
        self._checked: set[str] = set()

    def folder(self) -> None:
        """Check ``chroma.sqlite3`` once; if damaged, set the folder aside when writable."""
        with self._lock:
            if self._folder_checked:
                return
            self._folder_checked = True
            if self.writable:
                _remove_set_aside(self.path)  # what an interrupted removal left
            self._lost = database_damage(self.path)
            if self._lost is None or not self.writable:
                return
            aside = self.path.with_name(f"{self.path.name}{SET_ASIDE}{time.time_ns():x}")
            self.path.rename(aside)
            self.path.mkdir()
            self._set_aside = True
            log.warning(
                "Chroma's database in %s was damaged (%s): set aside", self.path, self._lost
            )
            shutil.rmtree(aside, ignore_errors=True)

    def database(self, name: str) -> None:
        """Raise :class:`DamagedVectorsError` (for collection ``name``) if Chroma's own database
        was found damaged and could not be set aside: what any call on the folder checks first,
        such as listing a channel's segments, which reads no index."""
        self.folder()
        if self._lost is not None and not self._set_aside:
            raise DamagedVectorsError(name, self._lost)

    def collection(self, name: str) -> None:
        """Raise :class:`DamagedVectorsError` if the collection's files are damaged; the first
        use in this process checks them, later ones cost nothing."""
        if name in self._checked:
            return
        self.database(name)
        try:
            reason = self._damage(name)
            if reason is not None:
                time.sleep(SECOND_LOOK_SECONDS)  # a writer of another process may be mid-rewrite
                reason = self._damage(name)
        except sqlite3.DatabaseError as error:
            if not journal_pending(error):
                raise
            return  # Chroma's file is mid-write: not damage; checked at the collection's next use
        if reason is not None:
            raise DamagedVectorsError(name, reason)
        self._checked.add(name)

    def forget(self, name: str) -> None:
        """The collection was dropped: a new one of that name is checked again."""
        self._checked.discard(name)

    def _damage(self, name: str) -> str | None:
        try:
            segment = segment_of(self.path, name)
        except sqlite3.DatabaseError as error:
            if journal_pending(error):
                raise
            return f"chroma.sqlite3 cannot be read: {error}"
        if segment is None:
            # Not in Chroma: a new channel's, unless the folder it was in was just set aside.
            return self._lost if self._set_aside else None
        try:
            return index_damage(segment) or index_out_of_date(self.path, name)
        except UnknownLayout as unknown:
            log.info("index of %s: %s; probing it in a child process", name, unknown)
            return probe_index(self.path, name)


def _remove_set_aside(path: Path) -> None:
    for leftover in path.parent.glob(f"{path.name}{SET_ASIDE}*"):
        shutil.rmtree(leftover, ignore_errors=True)
