"""A channel's read model on disk, so a start loads it instead of rebuilding it from the stores.

Why: rebuilding the timeline of a 100k-message channel (every row from SQL, every vector from
Chroma, the cells and the word index filed again) takes seconds; loading what was built takes a
fraction of that. What is kept, per channel, in ``data_dir/read-models/<hash of the key>/``:
the vectors in channel order (memory-mapped at load, never written through), the rows'
positions, the cell tree (:class:`~awai_engine.cells.CellState`), the word index
(:class:`~awai_engine.lexical.LexicalState`) and the messages as columns, from which the speaker
rows and scopes are cut without building every message.

*Grown by appending*: every part is kept so that a longer channel only adds to its end: arrays
by row or by message, a cell level's cell of each row, the word index's postings by message,
texts as UTF-8 JSON values. So a write appends the messages the file lacks, and its cost is
that of those messages, never of the channel (a rewrite of the whole file every few hundred
messages made an ingest's writing grow with the square of the channel). A whole file is written
only for a channel without one, or when the one there cannot be extended (see :meth:`save`).

The file is only ever a cache of SQL, never a record:

- *Validated at open*: ``current.json`` names the generation (a folder of files) with the
  revision, the last row id and the fingerprint of the rows it holds (see
  :mod:`storage.read_model`); the reader checks the fingerprint against SQL, then reads only the
  rows added since. Any other change (a delete, an edit, a rescope) cuts it before the first
  row that changed (:meth:`ReadModelFiles.cut`: the messages before it copied into a new
  generation), and the rows from there on are read again; a file of which nothing is kept (the
  first row changed, a re-embed) is shredded and the channel rebuilt.
- *Crash-safe*: ``current.json`` holds, for every file of the generation, the length and
  running CRC-32 of what is committed. A write truncates each file to that length (dropping what
  a killed writer appended), appends, syncs the files, then replaces ``current.json``
  atomically. Until that replace the old pointer still describes the old bytes, which are never
  touched, so a write killed anywhere leaves the file as it was or as it was meant to be; a torn
  or truncated file fails its length or CRC check at load (and is rebuilt) instead of being read
  wrong.
- *Across processes*: writers and shredders take an exclusive ``flock`` on the channel's lock
  file, loaders a shared one. A writer publishes only if the fingerprint still matches SQL, and a
  removal cuts (or shreds) after its SQL commit, so no removed message outlives the removal on
  disk.
- *No bytes left*: shredding overwrites every file with zeros before unlinking it (a cut
  shreds the generation it copied from so, once the new one is published), except one
  another process (or this one) still maps (the vectors, and the large parts a load maps, see
  :data:`MAPPED_FROM`): zeroing it would turn that process's rows and texts into zeros under
  it, which it would read and write into its next file. Such a file is unlinked alone, and the
  last process to let go of it zeros it then
  (:func:`awai_engine.mapped_rows.shred`); a process lets go of a file once it finds it
  unlinked, at its next reading of the channel or the scheduler's check, whichever is first.
  An append never changes a byte another process may have mapped: it writes past the
  committed length.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import mmap
import os
import shutil
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from awai_engine import mapped_rows
from awai_engine.cells import CellIndex, CellState, LevelState
from awai_engine.lexical import LexicalIndex, LexicalState
from awai_engine.settings import RecallIndexSettings
from awai_engine.timeline import MessageColumns, RowSlices, Spans, Timeline
from storage import read_model_layout as layout
from storage.file_lock import locked
from storage.read_model_cut import cut_generation, held_rows
from storage.read_model_keys import HeldRows, Kept, RowKeys

log = logging.getLogger(__name__)

POINTER = "current.json"
# A part of at least this many bytes that is used as it is (an array, the packed texts) is mapped
# from its file, not read into the process: at 100,000 messages those are 40 MB besides the
# vectors, most of a loaded channel's own memory, of which an ingest or a reading touches little.
# A part decoded whole at load (the id and name columns) is read as before. Each mapped part
# holds two descriptors while the channel is held: only the large ones are worth it (8 of a
# 100,000-message channel's parts).
MAPPED_FROM = 1024 * 1024


class Packed(Spans[Any]):
    """One column as UTF-8 JSON values end to end, with their offsets; decoded per item.

    Why: decoding a hundred thousand texts at a start costs more than every other part of a
    load, and a reading looks at a few dozen messages."""

    def __init__(self, blob: bytes | mmap.mmap, offsets: np.ndarray) -> None:
        super().__init__(offsets)
        self._blob = blob

    def _item(self, start: int, end: int) -> Any:
        return orjson.loads(self._blob[start:end])

    def gather(self, indexes: np.ndarray) -> list[Any]:
        """The items at ``indexes`` decoded as one JSON list (a speaker's thoughts first met
        are a few thousand messages spread over the channel)."""
        blob, bounds = self._blob, self._bounds
        spans = zip(bounds[indexes].tolist(), bounds[indexes + 1].tolist(), strict=True)
        return orjson.loads(b"[" + b",".join([blob[start:end] for start, end in spans]) + b"]")

    def _items(self, first: int, end: int) -> list[Any]:
        """A run of items decoded as one JSON list (a comma put after each but the last):
        the names of every line back to a far recalled one are read so, tens of thousands at
        once, at a fraction of decoding each."""
        bounds = self._bounds[first : end + 1]
        if len(bounds) < 2:
            return []
        values = np.frombuffer(self._blob, dtype=np.uint8, count=int(bounds[-1]))
        run = np.insert(values[int(bounds[0]) :], bounds[1:-1] - bounds[0], ord(","))
        return orjson.loads(b"[" + run.tobytes() + b"]")


@dataclass(frozen=True)
class Snapshot:
    """A timeline and what its validation needs: the rows it holds, as SQL counted them."""

    timeline: Timeline
    last_id: int
    fingerprint: str
    text_bytes: int
    source: str = ""
    """The channel row and collection it was made from (``ChannelRow.source``)."""
    written: Written | None = None
    """Set on a loaded snapshot: the file it was read from."""
    keys: RowKeys | None = None
    """Which SQL row each message is (:mod:`storage.read_model_keys`): what lets a change cut
    the file where it starts. ``None`` for a timeline made without SQL (a bench's): written as
    ids no row has, so that any change but an append rebuilds it whole."""


@dataclass(frozen=True)
class Written:
    """Which file a process's timeline was read from or written to, and how many of its
    messages that file held then: while the file on disk is still exactly that, the process
    appends to it without checking it further (it is the process's own prefix)."""

    generation: str
    messages: int


@dataclass(frozen=True)
class WrittenFrom:
    """The state of SQL a file was written from: enough to tell, without loading it, whether a
    row it holds has changed since (see :meth:`storage.read_model.ReadModel.drop_outdated`)."""

    revision: int
    last_id: int
    fingerprint: str


CurrentAt = Callable[[int, str], bool]
"""Whether SQL's rows up to a last id still have the given fingerprint (see :meth:`save`)."""
KeptOf = Callable[[HeldRows, str], Kept | None]
"""How many of a file's first messages SQL still holds as they are (see :meth:`cut`), given
what the file holds of their rows and the source it was made from; ``None``: none."""


class _Outdated(ValueError):
    """A whole file made by another version of AWAI or with other index rules."""


def _same_index(meta: dict[str, Any], index: RecallIndexSettings) -> bool:
    """Whether the file was written with ``index``'s rules. A file written before the rules
    were split from the operator's settings recorded ``blas_threads`` beside them, which
    decides only how many threads compute, never what is stored: it is not compared, so an
    upgrade does not rebuild every channel."""
    written = meta.get("index")
    if isinstance(written, dict):
        written = {key: value for key, value in written.items() if key != "blas_threads"}
    return bool(written == index.rules.model_dump())


class ReadModelFiles:
    """The persisted read models of one data folder."""

    def __init__(self, folder: Path, writable: bool = True) -> None:
        self.folder = folder
        self.writable = writable

    def load(self, channel: str, index: RecallIndexSettings) -> Snapshot | None:
        """The channel's snapshot if one is there and whole (not yet checked against SQL).

        Any failure to load it (a torn, truncated or foreign file, whatever the error) means
        the same: it is shredded, one line logged, and the channel rebuilt from the stores."""
        folder = self._channel_folder(channel)
        if not (folder / POINTER).exists():
            return None
        try:
            with self._locked(folder, exclusive=False):
                meta = _pointer(folder)
                if not _written_for(meta, channel) or not _same_index(meta, index):
                    raise _Outdated("made by another version or with other index rules")
                return _read(folder / meta["generation"], meta, index, self.writable)
        except Exception as error:  # a derived file: whatever is wrong with it, rebuild
            # An upgrade's rebuild is routine (said once, quietly); damage is worth a warning.
            level = logging.INFO if isinstance(error, _Outdated) else logging.WARNING
            log.log(
                level, "read model of %s on disk is unusable (%s): rebuilding it", channel, error
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
                or not (folder / meta["generation"] / layout.VECTORS).is_file()
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
            except (OSError, ValueError):
                continue  # being replaced, or torn: a load finds it unusable and shreds it
            if isinstance(channel, str) and pointer.parent == self._channel_folder(channel):
                found.append(channel)
        return found

    def damaged(self) -> list[str]:
        """The channels whose file is not what was written: every part read whole and checked
        against the length and CRC its pointer records, no stamp believed. What ``awai doctor``
        reports: a load reads the vectors whole only when they changed since a load last did
        (:func:`_check_vectors`), so a byte that rots in place is found here. A file of another
        format is no damage (a load rebuilds it anyway)."""
        found = []
        for channel in self.channels():
            folder = self._channel_folder(channel)
            # The pointer and the parts it names read under one shared lock: a writer
            # publishing between the two would shred the generation read, which is no damage.
            with self._locked(folder, exclusive=False):
                try:
                    meta = _pointer(folder)
                except (OSError, ValueError):
                    continue  # gone, or torn: a load finds it unusable and rebuilds it anyway
                if not isinstance(meta, dict) or not _written_for(meta, channel):
                    continue
                if not _whole(folder / str(meta.get("generation")), meta.get("files")):
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

    def save(
        self, channel: str, snapshot: Snapshot, current_at: CurrentAt, written: Written | None
    ) -> Written | None:
        """Bring the channel's file up to ``snapshot``, if it is still current in SQL
        (``current_at(snapshot.last_id, snapshot.fingerprint)``, checked under the lock, so a
        removal committed meanwhile is never published); ``None`` if nothing was written.

        The messages the file lacks are appended when the file holds a prefix of the snapshot:
        it is ``written`` (what this process last read or wrote there, unchanged since), or
        another process's file whose rows are still current in SQL and whose message ids are
        the snapshot's first ones. Otherwise a new generation is written whole.
        """
        if not self.writable:
            return None
        folder = self._channel_folder(channel)
        timeline = snapshot.timeline
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with self._locked(folder, exclusive=True):
                if not current_at(snapshot.last_id, snapshot.fingerprint):
                    return None
                base = self._base(folder, channel, snapshot, current_at, written)
                if base is None:
                    base = {"generation": f"g-{time.time_ns()}-{os.getpid()}", "files": {}}
                    (folder / base["generation"]).mkdir()
                parts = folder / base["generation"]
                chunks, terms = _tail(timeline, snapshot.keys, base)
                files = _append(parts, base["files"], chunks)
                meta = {
                    "format": layout.FORMAT,
                    "channel": channel,
                    "generation": base["generation"],
                    "index": timeline.index.rules.model_dump(),
                    "revision": timeline.revision,
                    "source": snapshot.source,
                    "messages": len(timeline.messages),
                    "thoughts": timeline.rows,
                    "terms": terms,
                    "last_id": snapshot.last_id,
                    "fingerprint": snapshot.fingerprint,
                    "text_bytes": snapshot.text_bytes,
                    "dimension": timeline.dimension,
                    "levels": [level.fitted_rows for level in timeline.cells.state().levels],
                    "max_share": timeline.lexicon.max_share,
                    "files": files,
                }
                _publish(folder, meta)
                for other in folder.glob("g-*"):
                    if other.name != base["generation"]:
                        _shred_tree(other)  # replaced, or left by a writer killed midway
            return Written(base["generation"], len(timeline.messages))
        except (OSError, ValueError, TypeError) as error:  # a full disk costs the cache only
            log.warning("could not write the read model of %s: %s", channel, error)
            return None

    def _base(
        self,
        folder: Path,
        channel: str,
        snapshot: Snapshot,
        current_at: CurrentAt,
        written: Written | None,
    ) -> dict[str, Any] | None:
        """The pointer of the channel's file if the snapshot extends it (see :meth:`save`)."""
        try:
            meta = _pointer(folder)
        except (OSError, ValueError):
            return None
        timeline = snapshot.timeline
        held = meta.get("messages")
        if (
            not _written_for(meta, channel)
            or not _same_index(meta, timeline.index)
            or meta.get("source") != snapshot.source
            or meta.get("dimension") != timeline.dimension
            or not isinstance(held, int)
            or not 0 < held <= len(timeline.messages)
            or not (folder / str(meta.get("generation"))).is_dir()
        ):
            return None
        if written == Written(meta["generation"], held):
            return meta
        count = len(timeline.messages)
        first_row = timeline.messages[held].first_row if held < count else timeline.rows
        ids = layout.values(list(itertools.islice(timeline.position_of, held)))
        if (
            meta.get("thoughts") != first_row
            or meta["files"].get("message_ids") != [len(ids), zlib.crc32(ids)]
            or not current_at(int(meta["last_id"]), str(meta["fingerprint"]))
        ):
            return None
        return meta

    def cut(self, channel: str, index: RecallIndexSettings, kept: KeptOf) -> Written | None:
        """Cut the channel's file to its first messages that SQL still holds as they are: what
        the file holds of each message's row is handed to ``kept`` (with the source the file
        was made from), which says how many, under the exclusive lock (no writer appends
        meanwhile); returns the file as it is then (``None``: there is none).

        Why: a change other than an append (an edit, a delete, a forget) made the whole file
        stale, and the channel was rebuilt whole (:mod:`storage.read_model_keys`). Now the
        messages before the first changed row are copied into a new generation
        (:mod:`storage.read_model_cut`), which is published, and then every other generation is
        shredded as :meth:`shred` shreds: the new one holds no byte of a row from the cut on.
        Nothing kept, or a file that cannot be read (torn, damaged, another version's): the
        file is shredded. A kill before the publish leaves the file as it was, stale, for the
        next reading (or the scheduler's check) to cut again."""
        folder = self._channel_folder(channel)
        if not self.writable or not (folder / POINTER).exists():
            return None
        try:
            with self._locked(folder, exclusive=True):
                meta = _pointer(folder)
                if not _written_for(meta, channel) or not _same_index(meta, index):
                    raise _Outdated("made by another version or with other index rules")
                parts, generation = folder / meta["generation"], meta["generation"]
                decided = kept(held_rows(parts, meta), meta["source"])
                if decided is None or decided.messages == 0:
                    _shred_folder(folder)
                    return None
                if decided.messages < meta["messages"]:
                    generation = f"g-{time.time_ns()}-{os.getpid()}"
                    (folder / generation).mkdir()
                    meta = cut_generation(parts, meta, folder / generation, decided.messages)
                    _sync_folder(folder / generation)
                    meta = {
                        **meta,
                        "generation": generation,
                        "revision": decided.revision,
                        "last_id": decided.last_id,
                        "fingerprint": decided.fingerprint,
                    }
                    _publish(folder, meta)
                # The one cut from, or one a cut or a write killed midway left (what a finished
                # removal's discard calls this for, at the latest).
                for other in folder.glob("g-*"):
                    if other.name != generation:
                        _shred_tree(other)
                return Written(generation, int(meta["messages"]))
        except Exception as error:  # a derived file: whatever is wrong, it goes
            log.warning("read model of %s could not be cut (%s): shredding it", channel, error)
            self.shred(channel)
            return None

    def shred(self, channel: str) -> None:
        """Remove the channel's snapshot, every file holding text overwritten first."""
        folder = self._channel_folder(channel)
        if not folder.is_dir() or not self.writable:
            return
        with self._locked(folder, exclusive=True):
            _shred_folder(folder)

    def _channel_folder(self, channel: str) -> Path:
        return self.folder / hashlib.sha256(channel.encode()).hexdigest()[:32]

    @contextmanager
    def _locked(self, folder: Path, exclusive: bool) -> Iterator[None]:
        if not self.writable:
            yield
            return
        with locked(folder / "lock", exclusive):
            yield


def _tail(
    timeline: Timeline, keys: RowKeys | None, base: dict[str, Any]
) -> tuple[Iterator[tuple[str, layout.Chunk]], int]:
    """What the timeline (and its rows' ``keys``) holds past ``base`` (a pointer, or nothing),
    file by file, and how many terms its word index holds.

    Built from the new messages only: the columns, postings and rows of messages the file holds
    are neither rebuilt nor encoded again. Produced one file at a time, arrays as views (no
    copy), so a whole write holds no second copy of the channel."""
    if keys is not None and len(keys) != len(timeline.messages):
        raise ValueError("the rows' keys are not as many as the messages")
    messages = int(base.get("messages", 0))
    rows = int(base.get("thoughts", 0))
    known_terms = int(base.get("terms", 0))
    known_levels = len(base.get("levels", ()))
    columns = timeline.messages.columns(messages)
    lexicon = timeline.lexicon.state(messages)
    cells = timeline.cells.state()

    def parts() -> Iterator[tuple[str, layout.Chunk]]:
        arrays: dict[str, np.ndarray] = {
            "vectors": timeline.vectors[rows:],
            "row_positions": timeline.row_positions[rows:],
            "row_thought": timeline.row_thought[rows:],
            "ts": columns.ts,
            "first_rows": columns.first_rows,
            "fallbacks": np.array(columns.fallbacks, dtype=np.bool_),
            "lexicon_lengths": lexicon.lengths,
            "term_ids": lexicon.term_ids,
            "term_positions": lexicon.positions,
            "term_counts": lexicon.counts,
            "row_ids": keys.ids[messages:] if keys is not None else np.full(len(columns), -1),
            "edited_at": keys.edited[messages:]
            if keys is not None
            else np.full(len(columns), np.nan),
        }
        for name, array in arrays.items():
            yield name, layout.raw(array, layout.ARRAYS[name])
        for depth, level in enumerate(cells.levels):
            name = f"level{depth}"
            if depth < known_levels:
                yield f"{name}_cells", layout.raw(cells.row_cells[rows:, depth], np.int32)
                continue
            yield f"{name}_cells", layout.raw(cells.row_cells[:, depth], np.int32)
            yield f"{name}_centroids", layout.raw(level.centroids, np.float32)
            if level.child_start is not None:
                yield f"{name}_child_start", layout.raw(level.child_start, np.int64)
        for name in layout.LIST_COLUMNS:
            yield name, layout.values(getattr(columns, name))
        yield "terms", layout.values(lexicon.terms[known_terms:])
        for name in layout.PACKED_COLUMNS:
            encoded = [orjson.dumps(value) for value in getattr(columns, name)]
            start = base["files"].get(f"{name}.bin", [0, 0])[0] if base.get("files") else 0
            ends = start + np.cumsum([len(item) for item in encoded], dtype=np.int64)
            yield f"{name}.bin", b"".join(encoded)
            yield f"{name}_ends", layout.raw(ends, np.int64)

    return parts(), len(lexicon.terms)


def _append(
    parts: Path, committed: dict[str, list[int]], chunks: Iterator[tuple[str, layout.Chunk]]
) -> dict:
    """Append each chunk to its file past what ``committed`` says it holds (whatever a killed
    writer left after that is cut first), synced; the files' new lengths and running CRCs."""
    files = {name: list(entry) for name, entry in committed.items()}
    for name, chunk in chunks:
        size = memoryview(chunk).nbytes
        length, crc = files.get(name, [0, 0])
        if not size and name in files:
            continue
        descriptor = os.open(parts / name, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            if os.fstat(descriptor).st_size != length:
                os.ftruncate(descriptor, length)
            os.lseek(descriptor, length, os.SEEK_SET)
            view = memoryview(chunk)
            while view:
                view = view[os.write(descriptor, view) :]
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        files[name] = [length + size, zlib.crc32(chunk, crc)]
    _sync_folder(parts)
    return files


def _publish(folder: Path, meta: dict[str, Any]) -> None:
    """Replace the pointer atomically: the moment the appended bytes become the file."""
    pointer = folder / f"{POINTER}.tmp"
    with pointer.open("w", encoding="utf-8") as handle:
        json.dump(meta, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(pointer, folder / POINTER)
    _sync_folder(folder)


def _read(folder: Path, meta: dict[str, Any], index: RecallIndexSettings, stamp: bool) -> Snapshot:
    """Load the snapshot ``meta`` describes; ``ValueError`` if any part is not what was written.
    ``stamp``: the vectors' check may be recorded beside them (see :func:`_check_vectors`)."""
    files: dict[str, list[int]] = meta["files"]
    messages, rows, dimension = int(meta["messages"]), int(meta["thoughts"]), meta["dimension"]

    def data(name: str) -> bytes:
        length, crc = files[name]
        with (folder / name).open("rb") as handle:
            read = handle.read(length)
        if len(read) != length or zlib.crc32(read) != crc:
            raise ValueError(f"{name} is not what was written")
        return read

    def held(name: str) -> bytes | mmap.mmap:
        """A part that is used as it is (an array, a packed column): a large one is mapped
        from the file, checked first through the page cache, not read into this process."""
        length, crc = files[name]
        if length < MAPPED_FROM:
            return data(name)
        if _crc_of(folder / name, length) != crc:
            raise ValueError(f"{name} is not what was written")
        return mapped_rows.mapped_bytes(folder / name, length)

    def array(name: str, dtype: type, size: int | None = None) -> np.ndarray:
        loaded: np.ndarray = np.frombuffer(held(name), dtype=dtype)
        if size is not None and len(loaded) != size:
            raise ValueError(f"{name} holds {len(loaded)} values, not {size}")
        return loaded

    def values(name: str, size: int | None = messages) -> list[Any]:
        read = data(name)
        loaded = orjson.loads(b"[" + read[:-1] + b"]") if read else []
        if size is not None and len(loaded) != size:
            raise ValueError(f"{name} holds {len(loaded)} values, not {size}")
        return loaded

    length, crc = files["vectors"]
    if length != rows * dimension * 4:
        raise ValueError("the vectors are not as many as the rows")
    _check_vectors(folder / layout.VECTORS, length, crc, stamp)
    vectors = (
        mapped_rows.mapped(folder / layout.VECTORS, np.float32, (rows, dimension))
        if rows
        else np.empty((0, dimension), dtype=np.float32)
    )
    packed: dict[str, Any] = {}
    for name in layout.PACKED_COLUMNS:
        ends = array(f"{name}_ends", np.int64, messages)
        packed[name] = Packed(held(f"{name}.bin"), np.concatenate([[0], ends]))
    shared: dict[Any, Any] = {}
    first_rows = array("first_rows", np.int64, messages)
    row_thought = array("row_thought", np.int64, rows)
    fallbacks = array("fallbacks", np.bool_, messages)
    columns = MessageColumns(
        **{
            name: _shared(values(name), shared) if name in layout.REPEATED_COLUMNS else values(name)
            for name in layout.LIST_COLUMNS
        },
        **packed,
        ts=array("ts", np.float64, messages),
        fallbacks=fallbacks.tolist(),
        first_rows=first_rows,
        thought_indexes=RowSlices(row_thought, first_rows),
    )
    levels, cell_columns = [], []
    for depth, fitted in enumerate(meta["levels"]):
        name = f"level{depth}"
        levels.append(
            LevelState(
                fitted_rows=fitted,
                centroids=array(f"{name}_centroids", np.float32).reshape(-1, dimension),
                child_start=array(f"{name}_child_start", np.int64) if depth else None,
            )
        )
        cell_columns.append(array(f"{name}_cells", np.int32, rows))
    row_cells = np.column_stack(cell_columns) if cell_columns else np.empty((0, 0), dtype=np.int32)
    cells = CellIndex.restored(index, CellState(rows, row_cells, tuple(levels)))
    terms = values("terms", int(meta["terms"]))
    lexicon = LexicalIndex.restored(
        LexicalState(
            max_share=meta["max_share"],
            terms=terms,
            term_ids=array("term_ids", np.int32),
            positions=array("term_positions", np.int64),
            counts=array("term_counts", np.float32),
            lengths=array("lexicon_lengths", np.float64, messages),
        )
    )
    timeline = Timeline.restored(
        revision=meta["revision"],
        index=index,
        columns=columns,
        vectors=vectors,
        row_positions=array("row_positions", np.int64, rows),
        row_thought=row_thought,
        cells=cells,
        lexicon=lexicon,
    )
    return Snapshot(
        timeline,
        meta["last_id"],
        meta["fingerprint"],
        meta["text_bytes"],
        meta["source"],
        Written(meta["generation"], messages),
        RowKeys(
            array("row_ids", np.int64, messages),
            array("edited_at", np.float64, messages),
            fallbacks,
        ),
    )


def _check_vectors(path: Path, length: int, crc: int, stamp: bool) -> None:
    """``ValueError`` unless the vectors file's first ``length`` bytes have the CRC written.

    Why a stamp: the file takes 1.5 KB a thought (177 MiB at 100k messages), and reading all of
    it for its CRC was a fifth of opening a large channel, paid by every command. A load that
    checked it leaves beside it what it checked (that length and CRC) and what the file was then
    (device, inode, size, modification and change times). A later load that finds the file so,
    and is asked for the same length and CRC, does not read it again: a write only ever appends
    past the committed length, and any tool's edit changes the change time at least, bringing
    the whole check back. A byte that rots under the file system changes none of these: ``awai
    doctor`` reads every part whole (:meth:`ReadModelFiles.damaged`). A stamp that cannot be
    written (a read-only folder) only costs the check next time."""
    status = path.stat()
    # The change time too: a tool can put a modification time back (``touch -r``, ``cp -p``),
    # never the change time its own write set.
    checked = [
        length,
        crc,
        status.st_dev,
        status.st_ino,
        status.st_size,
        status.st_mtime_ns,
        status.st_ctime_ns,
    ]
    stamp_path = path.with_name(f"{layout.VECTORS}.checked")
    try:
        if json.loads(stamp_path.read_bytes()) == checked:
            return
    except (OSError, ValueError):
        pass  # none yet, or unreadable: check
    if _crc_of(path, length) != crc:
        raise ValueError("vectors is not what was written")
    if stamp:
        written = stamp_path.with_name(f"{stamp_path.name}.{os.getpid()}.tmp")
        try:
            written.write_text(json.dumps(checked), encoding="utf-8")
            os.replace(written, stamp_path)
        except OSError:
            written.unlink(missing_ok=True)


def _whole(generation: Path, files: Any) -> bool:
    """Whether every part of a generation has the length and CRC its pointer records."""
    try:
        return isinstance(files, dict) and all(
            _crc_of(generation / name, int(length)) == crc for name, (length, crc) in files.items()
        )
    except (OSError, ValueError, TypeError):  # missing, cut short, or a pointer not ours
        return False


def _crc_of(path: Path, length: int) -> int:
    """The CRC-32 of the file's first ``length`` bytes, read a chunk at a time.

    Why not through the memory map the vectors are used from: that faults every page of the
    file into this process (186 MB at 100k messages), where a reading touches only the rows it
    scores; read through the page cache, the pages stay shared and out of this process's RSS."""
    crc = 0
    with path.open("rb", buffering=0) as handle:
        while length:
            chunk = handle.read(min(length, 1 << 20))
            if not chunk:
                raise ValueError(f"{path.name} is shorter than was written")
            crc = zlib.crc32(chunk, crc)
            length -= len(chunk)
    return crc


def _shared(values: list[Any], seen: dict[Any, Any]) -> list[Any]:
    """The column with each repeated string one object: a channel's hundred thousand speaker
    ids, names, scopes and thread roots are a few thousand distinct strings, and a decoded
    string apiece costs about 5 MB a column at 100k messages."""
    return list(map(seen.setdefault, values, values))  # C's loop: 5.7 → 3.7 ms a column


def _shred_folder(folder: Path) -> None:
    """Shred a channel's pointer and every generation (under its exclusive lock)."""
    pointer = folder / POINTER
    if pointer.exists():
        mapped_rows.shred(pointer)
    for other in [*folder.glob("g-*"), *folder.glob(f"{POINTER}.tmp")]:
        _shred_tree(other)


def _shred_tree(path: Path) -> None:
    """Zeros over every file of a generation, then its removal.

    The vectors too: an embedding of a removed message says much of its text. While another
    process maps them they are unlinked alone, and that process zeros them as it lets go
    (:func:`awai_engine.mapped_rows.shred`): zeroed under it, it read zeros as its vectors."""
    if path.is_dir():
        for child in path.iterdir():
            mapped_rows.shred(child)
        shutil.rmtree(path)
    elif path.exists():
        mapped_rows.shred(path)


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
    return meta.get("format") == layout.FORMAT and meta.get("channel") == channel
