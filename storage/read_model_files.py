"""A channel's read model on disk, so a start loads it instead of rebuilding it from the stores.

Why: rebuilding the timeline of a 100k-message channel (every row from SQL, every vector from
Chroma, the cells and the word index filed again) takes seconds; loading what was built takes a
fraction of that. What is kept, per channel, in ``data_dir/read-models/<hash of the key>/``:
the vectors in channel order (a ``.npy`` memory-mapped at load, never written through), the
rows' positions, the cell tree (:class:`~awai_engine.cells.CellState`), the word index
(:class:`~awai_engine.lexical.LexicalState`) and the messages as columns, from which the speaker
rows and scopes are cut without building every message.

The file is only ever a cache of SQL, never a record:

- *Validated at open*: ``current.json`` names the snapshot with the revision, the last row id and
  the fingerprint of the rows it holds (see :mod:`storage.read_model`); the reader checks the
  fingerprint against SQL, then reads only the rows added since. Any other change (a delete, an
  edit, a rescope, a re-embed) makes it stale: it is shredded and the channel rebuilt.
- *Crash-safe*: a snapshot is written into a fresh folder, each file synced, the folder renamed,
  then ``current.json`` replaced atomically; each array's shape and CRC-32 are in it, so a torn
  or truncated file fails to load (and is rebuilt) instead of being read wrong.
- *Across processes*: writers and shredders take an exclusive ``flock`` on the channel's lock
  file, loaders a shared one. A writer publishes only if the fingerprint still matches SQL, and a
  removal shreds after its SQL commit, so no removed message outlives the removal on disk.
- *No bytes left*: shredding overwrites every file holding text with zeros before unlinking it.
  The vectors file is unlinked without being overwritten: another process may have it mapped,
  and zeroing it would change that process's vectors under it; its blocks are freed when the
  last mapping closes (that process's next reading finds the change and drops it).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from awai_engine.cells import CellIndex, CellState, LevelState
from awai_engine.lexical import LexicalIndex, LexicalState
from awai_engine.settings import RecallIndexSettings
from awai_engine.timeline import MessageColumns, Timeline

log = logging.getLogger(__name__)

FORMAT = (
    4  # 2: lexical terms are Snowball stems; 3: the pointer counts thoughts; 4: names its source
)
POINTER = "current.json"
VECTORS = "vectors.npy"
STRINGS = "strings.json"
_ZEROS = bytes(1 << 20)
_STRING_COLUMNS = (
    "message_ids",
    "speaker_ids",
    "speaker_names",
    "thread_roots",
    "scopes",
    "thought_indexes",
)
# Needed only when a message is built: packed, each message's value decoded on first use.
_PACKED_COLUMNS = ("texts", "summaries", "addressees", "thought_texts")


class Packed(Sequence[Any]):
    """One column as UTF-8 JSON values end to end, with their offsets; decoded per item.

    Why: decoding a hundred thousand texts at a start costs more than every other part of a
    load, and a reading looks at a few dozen messages."""

    def __init__(self, blob: bytes, offsets: np.ndarray) -> None:
        self._blob = blob
        self._offsets = offsets.tolist()

    @classmethod
    def pack(cls, values: Sequence[Any]) -> tuple[bytes, np.ndarray]:
        encoded = [json.dumps(value, ensure_ascii=False).encode("utf-8") for value in values]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(item) for item in encoded], out=offsets[1:])
        return b"".join(encoded), offsets

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, index):  # type: ignore[no-untyped-def,override]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return json.loads(self._blob[self._offsets[index] : self._offsets[index + 1]])


@dataclass(frozen=True)
class Snapshot:
    """A timeline and what its validation needs: the rows it holds, as SQL counted them."""

    timeline: Timeline
    last_id: int
    fingerprint: str
    text_bytes: int
    source: str = ""
    """The channel row and collection it was made from (``ChannelRow.source``)."""


@dataclass(frozen=True)
class WrittenFrom:
    """The state of SQL a file was written from: enough to tell, without loading it, whether a
    row it holds has changed since (see :meth:`storage.read_model.ReadModel.drop_outdated`)."""

    revision: int
    last_id: int
    fingerprint: str


class ReadModelFiles:
    """The persisted read models of one data folder."""

    def __init__(self, folder: Path, writable: bool = True) -> None:
        self.folder = folder
        self.writable = writable

    def load(self, channel: str, index: RecallIndexSettings) -> Snapshot | None:
        """The channel's snapshot if one is there and whole (not yet checked against SQL)."""
        folder = self._channel_folder(channel)
        if not (folder / POINTER).exists():
            return None
        try:
            with self._locked(folder, exclusive=False):
                meta = _pointer(folder)
                if not _written_for(meta, channel) or meta.get("index") != index.model_dump():
                    raise ValueError("made by another version or with other index settings")
                return _read(folder / meta["generation"], meta, index)
        except Exception as error:  # derived: any failure to load it means rebuild it
            # Not a list of exception types: numpy's header parser alone raises tokenize errors,
            # a pointer that is not an object AttributeError; the file is rebuilt from the stores.
            log.warning(
                "read model of %s on disk is unusable (%s: %s): rebuilding it",
                channel,
                type(error).__name__,
                error,
            )
            self.shred(channel)
            return None

    def vouched_thoughts(self, channel: str, revision: int, source: str) -> int | None:
        """How many thoughts' vectors the channel's file holds, if it was written at
        ``revision`` from ``source`` (then the two stores agreed on them when it was
        written, and nothing readers see has changed since); ``None`` otherwise.

        Reads the pointer only, never the arrays: it is what lets the start-up check skip
        counting the channel's vectors in Chroma (:mod:`storage.repair`).
        """
        found = self._written_pointer(channel)
        if found is None:
            return None  # no file, or one a load will find unusable: count instead
        folder, meta = found
        try:
            if (
                meta.get("revision") != revision
                or meta.get("source") != source
                or not (folder / meta["generation"] / VECTORS).is_file()
            ):
                return None
            return int(meta["thoughts"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def channels(self) -> list[str]:
        """The channels with a file in this folder, as their pointers name them."""
        found = []
        for pointer in sorted(self.folder.glob(f"*/{POINTER}")):
            try:
                channel = _pointer(pointer.parent).get("channel")
            except Exception:  # derived: a pointer that cannot be read names none
                continue  # being replaced, or torn: a load finds it unusable and shreds it
            if isinstance(channel, str) and pointer.parent == self._channel_folder(channel):
                found.append(channel)
        return found

    def written_from(self, channel: str) -> WrittenFrom | None:
        """What the channel's file was written from, read from its pointer alone (``None``: no
        file, or one a load would find unusable and shred anyway)."""
        found = self._written_pointer(channel)
        if found is None:
            return None
        _, meta = found
        try:
            return WrittenFrom(
                int(meta["revision"]), int(meta["last_id"]), str(meta["fingerprint"])
            )
        except (ValueError, KeyError, TypeError):
            return None

    def _written_pointer(self, channel: str) -> tuple[Path, dict[str, Any]] | None:
        """The channel's folder and pointer, if there is one of this format for this channel
        (read under the shared lock, so never half replaced)."""
        folder = self._channel_folder(channel)
        if not (folder / POINTER).is_file():
            return None
        try:
            with self._locked(folder, exclusive=False):
                meta = _pointer(folder)
        except (OSError, ValueError):
            return None
        return (folder, meta) if isinstance(meta, dict) and _written_for(meta, channel) else None

    def save(self, channel: str, snapshot: Snapshot, still_current: Callable[[], bool]) -> bool:
        """Write ``snapshot`` as the channel's, if ``still_current()`` (checked under the lock,
        so a removal committed meanwhile is never published); ``False`` if not written."""
        if not self.writable:
            return False
        folder = self._channel_folder(channel)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with self._locked(folder, exclusive=True):
                if not still_current():
                    return False
                generation = f"g-{time.time_ns()}-{os.getpid()}"
                staging = folder / f"{generation}.tmp"
                staging.mkdir()
                meta = _write(staging, snapshot)
                staging.rename(folder / generation)
                _sync_folder(folder)
                meta.update(
                    format=FORMAT,
                    channel=channel,
                    generation=generation,
                    index=snapshot.timeline.index.model_dump(),
                )
                pointer = folder / f"{POINTER}.tmp"
                with pointer.open("w", encoding="utf-8") as handle:
                    json.dump(meta, handle)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(pointer, folder / POINTER)
                _sync_folder(folder)
                for other in folder.glob("g-*"):
                    if other.name != generation:
                        _shred_tree(other)
            return True
        except OSError as error:  # a full or read-only disk costs the cache, never a reading
            log.warning("could not write the read model of %s: %s", channel, error)
            return False

    def shred(self, channel: str) -> None:
        """Remove the channel's snapshot, every file holding text overwritten first."""
        folder = self._channel_folder(channel)
        if not folder.is_dir() or not self.writable:
            return
        with self._locked(folder, exclusive=True):
            pointer = folder / POINTER
            if pointer.exists():
                _overwrite(pointer)
                pointer.unlink()
            for other in [*folder.glob("g-*"), *folder.glob(f"{POINTER}.tmp")]:
                _shred_tree(other)

    def _channel_folder(self, channel: str) -> Path:
        return self.folder / hashlib.sha256(channel.encode()).hexdigest()[:32]

    @contextmanager
    def _locked(self, folder: Path, exclusive: bool) -> Iterator[None]:
        if not self.writable:
            yield
            return
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / "lock").open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _write(folder: Path, snapshot: Snapshot) -> dict[str, Any]:
    """Write every part of the snapshot into ``folder``; returns what ``current.json`` needs."""
    timeline = snapshot.timeline
    columns = timeline.messages.columns()
    cells = timeline.cells.state()
    lexicon = timeline.lexicon.state()
    arrays: dict[str, np.ndarray] = {
        "vectors": timeline.vectors,
        "row_positions": timeline.row_positions,
        "row_thought": timeline.row_thought,
        "ts": columns.ts,
        "first_rows": columns.first_rows,
        "fallbacks": np.array(columns.fallbacks, dtype=bool),
        "row_cells": cells.row_cells,
        "lexicon_sizes": lexicon.sizes,
        "lexicon_positions": lexicon.positions,
        "lexicon_counts": lexicon.counts,
        "lexicon_lengths": lexicon.lengths,
    }
    for depth, level in enumerate(cells.levels):
        arrays[f"level{depth}_centroids"] = level.centroids
        arrays[f"level{depth}_sizes"] = level.cell_sizes
        arrays[f"level{depth}_rows"] = level.rows
        if level.child_start is not None:
            arrays[f"level{depth}_child_start"] = level.child_start
    strings = {name: getattr(columns, name) for name in _STRING_COLUMNS}
    strings["terms"] = lexicon.terms
    packed = {}
    for name in _PACKED_COLUMNS:
        packed[name], arrays[f"{name}_offsets"] = Packed.pack(getattr(columns, name))
    checks: dict[str, list[Any]] = {}
    for name, array in arrays.items():
        contiguous = np.ascontiguousarray(array)
        with (folder / f"{name}.npy").open("wb") as handle:
            np.save(handle, contiguous, allow_pickle=False)
            handle.flush()
            os.fsync(handle.fileno())
        checks[name] = [list(contiguous.shape), str(contiguous.dtype), zlib.crc32(contiguous)]
    for name, blob in packed.items():
        with (folder / f"{name}.bin").open("wb") as handle:
            handle.write(blob)
            handle.flush()
            os.fsync(handle.fileno())
        checks[f"{name}.bin"] = [len(blob), zlib.crc32(blob)]
    encoded = json.dumps(strings, ensure_ascii=False).encode("utf-8")
    with (folder / STRINGS).open("wb") as handle:
        handle.write(encoded)
        handle.flush()
        os.fsync(handle.fileno())
    _sync_folder(folder)
    return {
        "revision": timeline.revision,
        "source": snapshot.source,
        "thoughts": len(timeline.vectors),
        "last_id": snapshot.last_id,
        "fingerprint": snapshot.fingerprint,
        "text_bytes": snapshot.text_bytes,
        "dimension": timeline.dimension,
        "arrays": checks,
        "strings": [len(encoded), zlib.crc32(encoded)],
        "filed": cells.filed,
        "levels": [level.fitted_rows for level in cells.levels],
        "max_share": lexicon.max_share,
    }


def _read(folder: Path, meta: dict[str, Any], index: RecallIndexSettings) -> Snapshot:
    """Load the snapshot ``meta`` describes; ``ValueError`` if any part is not what was written."""

    def array(name: str) -> np.ndarray:
        shape, dtype, crc = meta["arrays"][name]
        loaded = np.load(folder / f"{name}.npy", mmap_mode="r" if name == "vectors" else None)
        if list(loaded.shape) != shape or str(loaded.dtype) != dtype or zlib.crc32(loaded) != crc:
            raise ValueError(f"{name} is not the array that was written")
        return loaded

    encoded = (folder / STRINGS).read_bytes()
    if [len(encoded), zlib.crc32(encoded)] != meta["strings"]:
        raise ValueError("the message columns are not what was written")
    strings = orjson.loads(encoded)  # standard JSON, as written; decoded faster than by json
    fallbacks = array("fallbacks")
    packed = {}
    for name in _PACKED_COLUMNS:
        blob = (folder / f"{name}.bin").read_bytes()
        if [len(blob), zlib.crc32(blob)] != meta["arrays"][f"{name}.bin"]:
            raise ValueError(f"{name} is not what was written")
        packed[name] = Packed(blob, array(f"{name}_offsets"))
        if len(packed[name]) != len(strings["message_ids"]):
            raise ValueError(f"{name} does not hold one value per message")
    columns = MessageColumns(
        **{name: strings[name] for name in _STRING_COLUMNS},
        **packed,
        ts=array("ts"),
        fallbacks=fallbacks.tolist(),
        first_rows=array("first_rows"),
    )
    names = [f"level{depth}" for depth in range(len(meta["levels"]))]
    cells = CellIndex.restored(
        index,
        CellState(
            filed=meta["filed"],
            row_cells=array("row_cells"),
            levels=tuple(
                LevelState(
                    fitted_rows=fitted,
                    centroids=array(f"{name}_centroids"),
                    child_start=array(f"{name}_child_start") if depth else None,
                    cell_sizes=array(f"{name}_sizes"),
                    rows=array(f"{name}_rows"),
                )
                for depth, (name, fitted) in enumerate(zip(names, meta["levels"], strict=True))
            ),
        ),
    )
    lexicon = LexicalIndex.restored(
        LexicalState(
            max_share=meta["max_share"],
            terms=strings["terms"],
            sizes=array("lexicon_sizes"),
            positions=array("lexicon_positions"),
            counts=array("lexicon_counts"),
            lengths=array("lexicon_lengths"),
        )
    )
    vectors = array("vectors")
    if vectors.shape[1:] != (meta["dimension"],) or len(columns.texts) != len(fallbacks):
        raise ValueError("the parts disagree in size")
    timeline = Timeline.restored(
        revision=meta["revision"],
        index=index,
        columns=columns,
        vectors=vectors,
        row_positions=array("row_positions"),
        row_thought=array("row_thought"),
        cells=cells,
        lexicon=lexicon,
    )
    return Snapshot(
        timeline, meta["last_id"], meta["fingerprint"], meta["text_bytes"], meta["source"]
    )


def _overwrite(path: Path) -> None:
    """Zeros over the whole file, synced, before it is unlinked."""
    size = path.stat().st_size
    with path.open("r+b") as handle:
        for _ in range(0, size, len(_ZEROS)):
            handle.write(_ZEROS[: min(len(_ZEROS), size - handle.tell())])
        handle.flush()
        os.fsync(handle.fileno())


def _shred_tree(path: Path) -> None:
    if path.is_dir():
        for child in path.iterdir():
            if child.name != VECTORS:
                _overwrite(child)
        shutil.rmtree(path)
    elif path.exists():
        _overwrite(path)
        path.unlink()


def _sync_folder(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _pointer(folder: Path) -> dict[str, Any]:
    """A channel folder's pointer: which generation is current, and what it was written from."""
    return json.loads((folder / POINTER).read_text(encoding="utf-8"))


def _written_for(meta: dict[str, Any], channel: str) -> bool:
    """Whether a pointer is of this file format and this channel (a hash collision of folder
    names, or a file left by another version, is not)."""
    return meta.get("format") == FORMAT and meta.get("channel") == channel
