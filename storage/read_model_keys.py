"""Which SQL row a read model holds at each position, and where SQL's rows first differ from it.

Why: any change to a channel other than an append (an edit, a delete, a forget, a row synced late
or one earlier in channel order) made the next reading rebuild the channel's read model whole:
17.9 s and ~610 MiB for a bot's process at 100,000 messages, whatever the change touched. Edits
and deletes mostly touch recent messages, and the messages before the first row that changed
are still what SQL holds: they are kept (:meth:`storage.read_model_files.ReadModelFiles.cut`)
and only the rows from there on are read again, so the cost goes with how far back the change
is, not with the channel's size.

A position holds the same row as SQL's row at that position in channel order when every part
the fingerprint of :mod:`storage.fingerprints` covers is equal: the row's id and message id
(SQLite hands a deleted last row's id to the next insert), its place, its scope, its edit time
and whether its thoughts are an offline fallback. A row rewritten in place changes one of those
(an edit its edit time, a re-extraction its fallback), so nothing a timeline shows of a row
changes while they stay (the same rule the fingerprint applies to a whole channel).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.sql import UtteranceRow


@dataclass(frozen=True)
class RowKeys:
    """Per position of a timeline, what it holds of its SQL row besides the timeline's own
    columns: the row's id, its edit time (NaN: never edited) and whether its thoughts are an
    offline fallback."""

    ids: np.ndarray  # int64
    edited: np.ndarray  # float64
    fallbacks: np.ndarray  # bool

    @classmethod
    def of(cls, rows: Sequence[tuple[int, float | None, bool]]) -> RowKeys:
        """The keys of rows given as (id, edit time or ``None``, fallback), in position order."""
        return cls(
            np.array([row[0] for row in rows], dtype=np.int64),
            np.array([math.nan if row[1] is None else row[1] for row in rows], dtype=np.float64),
            np.array([row[2] for row in rows], dtype=np.bool_),
        )

    def __len__(self) -> int:
        return len(self.ids)

    def __add__(self, more: RowKeys) -> RowKeys:
        """These keys, then ``more``'s (new arrays: a timeline caught up keeps its old keys'
        arrays unchanged for whoever still reads them)."""
        return RowKeys(
            np.concatenate([self.ids, more.ids]),
            np.concatenate([self.edited, more.edited]),
            np.concatenate([self.fallbacks, more.fallbacks]),
        )


NO_KEYS = RowKeys.of([])


@dataclass(frozen=True)
class HeldRows:
    """What a read model holds position by position that SQL's rows are compared with: its
    keys, and the message id, scope and timestamp of each message (the timeline's own columns)."""

    keys: RowKeys
    message_ids: Sequence[str]
    scopes: Sequence[str]
    ts: np.ndarray

    def __len__(self) -> int:
        return len(self.keys)


@dataclass(frozen=True)
class SyncedOrder:
    """SQL's synced rows of a channel in channel order, as keys, message ids, scopes and
    timestamps: what tells which rows a read model holds unchanged."""

    keys: RowKeys
    message_ids: list[str]
    scopes: list[str]
    ts: np.ndarray

    @classmethod
    def read(cls, session: Session, channel_id: int) -> SyncedOrder:
        """One pass over the channel's synced rows, reading none of their texts (0.1–0.3 s at
        100,000 messages: a fraction of copying the kept part of the channel's file)."""
        found = session.execute(
            select(
                UtteranceRow.id,
                UtteranceRow.edited_at,
                UtteranceRow.extraction_fallback,
                UtteranceRow.message_id,
                UtteranceRow.scope,
                UtteranceRow.ts,
            )
            .where(UtteranceRow.channel_id == channel_id, UtteranceRow.synced.is_(True))
            .order_by(UtteranceRow.ts, UtteranceRow.id)
        ).all()
        return cls(
            RowKeys.of([(row[0], row[1], bool(row[2])) for row in found]),
            [row[3] for row in found],
            [row[4] for row in found],
            np.array([row[5] for row in found], dtype=np.float64),
        )

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def last_id(self) -> int:
        """The highest id of the synced rows (0: none)."""
        return int(self.keys.ids.max()) if len(self.keys) else 0

    def at(self, position: int) -> tuple[float, int]:
        """The place (timestamp, id) of the row at ``position``: the rows from it on are those
        at and after it in channel order."""
        return float(self.ts[position]), int(self.keys.ids[position])

    def first_change(self, held: HeldRows) -> int:
        """How many of ``held``'s first positions hold SQL's rows at the same positions,
        unchanged: the first position to read again (``len(held)``: none changed)."""
        count = min(len(self), len(held))
        ours, theirs = self.keys, held.keys
        edited = ours.edited[:count]
        held_edited = theirs.edited[:count]
        differs = (
            (ours.ids[:count] != theirs.ids[:count])
            | (ours.fallbacks[:count] != theirs.fallbacks[:count])
            | (self.ts[:count] != held.ts[:count])
            # NaN (never edited) equals NaN here: both rows are the original.
            | ~((edited == held_edited) | (np.isnan(edited) & np.isnan(held_edited)))
        )
        first = int(differs.argmax()) if differs.any() else count
        for name in ("message_ids", "scopes"):
            mine, other = getattr(self, name)[:first], list(getattr(held, name)[:first])
            if mine != other:  # compared as lists first: equal is the common case, in C
                first = next(i for i, (a, b) in enumerate(zip(mine, other, strict=True)) if a != b)
        return first


@dataclass(frozen=True)
class Kept:
    """How many of a file's first messages SQL still holds as they are, and what the file cut to
    them says it holds: the revision they were checked at, their last id and its fingerprint
    (:func:`storage.fingerprints.held_fingerprint`)."""

    messages: int
    revision: int
    last_id: int
    fingerprint: str
