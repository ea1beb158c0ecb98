"""Reconciliation: making the vector store agree with the SQL record again.

Every message lives in two stores. SQL is the record of what must exist; the vectors are derived
from it. Storage writes in an order that makes every interruption recognisable afterwards (rows
first and marked unsynced, then vectors, then the rows marked synced; a delete removes the rows
and leaves a tombstone before the vectors go), so after a crash, a lost vector write or a bug,
one pass brings the two back together:

- a message whose write or edit was interrupted (its row is unsynced) is re-embedded from the
  thoughts stored in SQL and marked synced;
- a synced message whose vectors are missing is re-embedded the same way;
- a vector no SQL thought accounts for (a delete or a shrinking edit interrupted) is removed;
- a row whose message has a tombstone (a delete raced by a redelivery) is deleted;
- a collection whose index files cannot be read any more (a full disk cut them short) is built
  again, whole, from the thoughts SQL holds (:class:`DamagedVectorsError`);
- a message whose thoughts are missing from the record itself (every message has at least one;
  an upgrade before the migrations' fix deleted them all) is extracted again from its stored
  text, when the caller can extract (``awai doctor --repair``): a thorough check finds these.

It runs at every start, where it costs a few counts per channel when nothing is wrong (the
vectors' count is vouched for by a current read model when there is one, so Chroma is not even
opened), and on demand with ``awai doctor``, which always compares every id.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from awai_engine.errors import AwaiError
from awai_engine.ports import ChannelInfo
from awai_engine.values import Value

log = logging.getLogger(__name__)

EMBED_BATCH = 256
EXAMPLES_SHOWN = 5


class DamagedVectorsError(AwaiError, RuntimeError):
    """A channel's vector index cannot be read: its files were cut short (a full disk while the
    vector store flushed them) or otherwise damaged.

    The vectors are derived data: every thought they came from is in SQL, so the index is rebuilt
    from there (:func:`reconcile` at start and in ``awai doctor --repair``, and the engine when a
    call fails so), never patched.
    """

    def __init__(self, collection: str, detail: str) -> None:
        super().__init__(
            f"The vector index {collection} cannot be read ({detail}); a crash or a full disk cut"
            " it short, or it was changed. `awai doctor --repair` rebuilds it from the stored"
            " messages."
        )
        self.collection = collection


def rebuilt_notice(channel: str, thoughts: int) -> str:
    """The one line a person is told after a damaged index was rebuilt."""
    return (
        f"The vector index of {channel} was damaged (cut short by a crash or a full disk, or"
        f" changed); rebuilt from the stored messages: {thoughts:,} thought(s)."
    )


@dataclass(frozen=True)
class PendingMessage:
    """A stored message whose vectors must be (re)written, with the thoughts SQL holds for it."""

    message_id: str
    thoughts: tuple[str, ...]
    edited: bool = False


@dataclass(frozen=True)
class ChannelAudit:
    """What disagrees between the two stores for one channel.

    ``thorough`` is ``False`` when only counts were compared (they agreed, so nothing is listed);
    a store compares every id as soon as the counts differ.
    """

    channel: str
    thorough: bool
    unsynced: tuple[PendingMessage, ...] = ()
    missing: tuple[PendingMessage, ...] = ()
    orphans: tuple[str, ...] = ()
    deleted_rows: tuple[str, ...] = ()
    thoughtless: tuple[str, ...] = ()
    """Messages with no thought in SQL: their thoughts must be extracted again from the text."""
    damaged: bool = False
    """The vector index cannot be read; nothing else was compared."""
    erasures_pending: int = 0
    """Removals (a forget, a delete, a dropped channel) begun and not finished: until they are,
    the files may still hold what was removed."""

    @property
    def clean(self) -> bool:
        return not (
            self.damaged
            or self.erasures_pending
            or self.unsynced
            or self.missing
            or self.orphans
            or self.deleted_rows
            or self.thoughtless
        )


class ReconcilableStore(Protocol):
    """What a store offers so that its two halves can be checked and brought back together."""

    def channels(self) -> list[str]: ...

    def erasing(self) -> list[str]:
        """Channels with a removal begun and not finished, stored or dropped since."""
        ...

    def channel_info(self, channel: str) -> ChannelInfo | None: ...

    def audit(self, channel: str, thorough: bool) -> ChannelAudit:
        """Compare the stores; with ``thorough=False`` only counts unless they disagree."""
        ...

    def complete(self, channel: str, message: PendingMessage, vectors: np.ndarray) -> bool:
        """Write the message's vectors and mark it synced; ``False`` if it changed meanwhile."""
        ...

    def remove_vectors(self, channel: str, ids: Sequence[str]) -> int:
        """Remove vectors that still have no SQL thought behind them; returns how many went."""
        ...

    def finish_deletes(self, channel: str, message_ids: Sequence[str]) -> int:
        """Delete rows (and vectors) of messages that have a tombstone; returns how many."""
        ...

    def rebuild_vectors(self, channel: str, encode: Callable[[list[str]], np.ndarray]) -> int:
        """Build the channel's vector index anew from the thoughts in SQL; returns how many."""
        ...

    def set_aside(self, channel: str, message_ids: Sequence[str]) -> None:
        """Keep messages that lost their thoughts out of readings and found by every start."""
        ...


Restore = Callable[[str, Sequence[str]], int]
"""Extracts the thoughts of stored messages again from their text: (channel, message ids) ->
how many were restored. The engine's extraction, which the stores do not have."""


class TextEncoder(Protocol):
    model_name: str
    dimension: int

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class ChannelReport(Value):
    """One channel's line in the report: what was found, and whether it was repaired."""

    channel: str
    checked: Literal["counts", "every id"]
    unfinished_writes: int = 0
    unfinished_edits: int = 0
    missing_vectors: int = 0
    orphan_vectors: int = 0
    unfinished_deletes: int = 0
    lost_thoughts: int = 0
    """Messages whose thoughts were missing from SQL (extracted again when repaired)."""
    pending_erasures: int = 0
    """Removals not finished (a forget or delete interrupted): finished by the next start."""
    damaged_index: bool = False
    rebuilt_thoughts: int | None = None
    """Thoughts embedded again into a new index, when a damaged one was rebuilt."""
    repaired: bool = False
    not_repaired_because: str | None = None
    examples: tuple[str, ...] = ()

    @property
    def problems(self) -> int:
        return (
            int(self.damaged_index)
            + self.unfinished_writes
            + self.unfinished_edits
            + self.missing_vectors
            + self.orphan_vectors
            + self.unfinished_deletes
            + self.lost_thoughts
            + self.pending_erasures
        )


class ReconcileReport(Value):
    channels: tuple[ChannelReport, ...] = ()

    @property
    def problems(self) -> int:
        return sum(channel.problems for channel in self.channels)

    @property
    def clean(self) -> bool:
        return self.problems == 0

    def summary(self) -> str:
        """One line for a log: what was found and repaired, channel by channel."""
        if self.clean:
            return f"{len(self.channels)} channel(s) checked, both stores agree"
        parts = [
            f"{item.channel}: {item.problems} problem(s){' repaired' if item.repaired else ''}"
            for item in self.channels
            if item.problems
        ]
        return "; ".join(parts)

    def notices(self) -> list[str]:
        """What a person should be told of this repair: each damaged index, rebuilt or not."""
        told = []
        for item in self.channels:
            if item.rebuilt_thoughts is not None:
                told.append(rebuilt_notice(item.channel, item.rebuilt_thoughts))
            elif item.damaged_index:
                told.append(
                    f"The vector index of {item.channel} is damaged and was not rebuilt"
                    f"{f': {item.not_repaired_because}' if item.not_repaired_because else ''}."
                )
        return told


def audit(
    store: ReconcilableStore, channels: Iterable[str] | None = None, thorough: bool = True
) -> ReconcileReport:
    """Find what disagrees, changing nothing; with no ``channels``, dropped channels whose
    removal is unfinished too."""
    names = list(channels) if channels is not None else _every_channel(store)
    return ReconcileReport(
        channels=tuple(_report(store.audit(channel, thorough), False) for channel in names)
    )


def reconcile(
    store: ReconcilableStore,
    encoder: TextEncoder,
    channels: Iterable[str] | None = None,
    thorough: bool = False,
    restore: Restore | None = None,
) -> ReconcileReport:
    """Find what disagrees and repair it; cheap (counts only) when nothing is wrong. Messages
    whose thoughts are lost are restored only with ``restore``; else the report says how."""
    names = list(channels) if channels is not None else _every_channel(store)
    reports = []
    for channel in names:
        found = store.audit(channel, thorough)
        if found.clean:
            reports.append(_report(found, False))
            continue
        info = store.channel_info(channel)
        made_by = info.embedding_model if info else encoder.model_name
        if info is None or (made_by, info.dimension) == (encoder.model_name, encoder.dimension):
            if found.damaged:
                reports.append(_rebuild(store, encoder, found))
                continue
            _repair(store, encoder, found)
            reports.append(_restored(store, found, restore))
            continue
        # Vectors of another model would make the channel's similarities meaningless: such a
        # channel gets its deletes and orphans repaired, and its re-embedding waits for reembed.
        _repair(store, None, found)
        kept = _report(found, True)
        if found.damaged or found.unsynced or found.missing:
            kept = kept.model_copy(
                update={
                    "repaired": False,
                    "not_repaired_because": (
                        f"the channel was embedded with {made_by!r}, the configured model is"
                        f" {encoder.model_name!r}: run `awai reembed {channel}`"
                    ),
                }
            )
        reports.append(kept)
    report = ReconcileReport(channels=tuple(reports))
    # A rebuilt index is told by the caller, to a person (``notices()``), and an unfinished
    # removal is finished (and told) after this pass; the rest is logged.
    others = ReconcileReport(
        channels=tuple(
            c for c in reports if not c.damaged_index and c.problems > c.pending_erasures
        )
    )
    if not others.clean:
        log.warning("reconciled the stores: %s", others.summary())
    return report


def _every_channel(store: ReconcilableStore) -> list[str]:
    stored = store.channels()
    return stored + sorted(set(store.erasing()) - set(stored))


def _rebuild(store: ReconcilableStore, encoder: TextEncoder, found: ChannelAudit) -> ChannelReport:
    """Rebuild a damaged index from SQL, then repair what else the fresh index shows."""
    thoughts = store.rebuild_vectors(found.channel, encoder.encode)
    again = store.audit(found.channel, thorough=True)
    if not again.clean:
        _repair(store, encoder, again)
    return _report(again, True).model_copy(
        update={"damaged_index": True, "rebuilt_thoughts": thoughts}
    )


def _repair(store: ReconcilableStore, encoder: TextEncoder | None, found: ChannelAudit) -> None:
    """Finish deletes, re-embed pending messages (unless ``encoder`` is None), remove orphans."""
    if found.deleted_rows:  # first: a message that must go is not worth re-embedding
        store.finish_deletes(found.channel, found.deleted_rows)
    gone = set(found.deleted_rows)
    pending = [m for m in (*found.unsynced, *found.missing) if m.message_id not in gone]
    if encoder is not None:
        _embed(store, encoder, found.channel, pending)
    if found.orphans:
        store.remove_vectors(found.channel, found.orphans)


def _restored(
    store: ReconcilableStore, found: ChannelAudit, restore: Restore | None
) -> ChannelReport:
    """The report of a repaired channel, its lost thoughts extracted again if ``restore``; else
    they are set aside, so that the next start finds and tells them again."""
    report = _report(found, True)
    if not found.thoughtless:
        return report
    if restore is None:
        store.set_aside(found.channel, found.thoughtless)
        return report.model_copy(
            update={
                "repaired": False,
                "not_repaired_because": (
                    f"{len(found.thoughtless):,} message(s) lost their thoughts: run"
                    " `awai doctor --repair` to extract them again from their text"
                ),
            }
        )
    restored = restore(found.channel, found.thoughtless)
    if restored < len(found.thoughtless):
        return report.model_copy(
            update={
                "repaired": False,
                "not_repaired_because": (
                    f"only {restored:,} of {len(found.thoughtless):,} message(s) without"
                    " thoughts could be extracted again"
                ),
            }
        )
    return report


def _embed(
    store: ReconcilableStore, encoder: TextEncoder, channel: str, pending: list[PendingMessage]
) -> None:
    for start in range(0, len(pending), EMBED_BATCH):
        batch = pending[start : start + EMBED_BATCH]
        vectors = encoder.encode([text for message in batch for text in message.thoughts])
        row = 0
        for message in batch:
            count = len(message.thoughts)
            if not store.complete(channel, message, vectors[row : row + count]):
                log.info("%s changed while being repaired; its writer finishes it", message)
            row += count


def _report(found: ChannelAudit, repaired: bool) -> ChannelReport:
    examples = [
        *(m.message_id for m in (*found.unsynced, *found.missing)),
        *found.deleted_rows,
        *found.thoughtless,
        *found.orphans,
    ]
    return ChannelReport(
        channel=found.channel,
        checked="every id" if found.thorough else "counts",
        unfinished_writes=sum(1 for m in found.unsynced if not m.edited),
        unfinished_edits=sum(1 for m in found.unsynced if m.edited),
        missing_vectors=len(found.missing),
        orphan_vectors=len(found.orphans),
        unfinished_deletes=len(found.deleted_rows),
        lost_thoughts=len(found.thoughtless),
        pending_erasures=found.erasures_pending,
        damaged_index=found.damaged,
        repaired=repaired,
        examples=tuple(examples[:EXAMPLES_SHOWN]),
    )
