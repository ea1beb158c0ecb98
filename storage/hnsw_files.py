"""Checking an embedded Chroma's files before Chroma loads them, since loading damage is fatal.

Chroma 1.x loads a collection's HNSW index (hnswlib, in Rust) from the segment folder named by
the collection's VECTOR segment, trusting every count and offset in it: a kill while it rewrote
the files (``header.bin`` counts the new elements, the other files hold the old write), a flipped
byte in a neighbour id or a link count, a folder deleted — each ends in a segfault, an unbounded
allocation or an error on every call. Chroma offers no check of its own, so this module reads
the files as hnswlib lays them out and answers "damaged, because …" or "whole", with memory
bounded by a chunk of rows (the level-0 file is mapped, never read whole):

- ``header.bin`` (100 bytes): a persistence version (int32), then hnswlib's header — offset of
  level 0, max elements, current count, bytes per element, label offset, data offset (size_t
  each), max level, entry point (int32 each), M, M0 (size_t), level multiplier (double),
  ef_construction (size_t);
- ``data_level0.bin``: per element, a link count (low 16 bits; bit 0 of the third byte marks a
  deleted element), ``M0`` neighbour ids, the vector (float32), the label (uint64);
- ``link_lists.bin``: per element, a byte size (uint32) then that many bytes of upper-level links,
  ``size / (4 + 4·M)`` levels each of a count and ``M`` ids;
- ``length.bin``: per element, the norm of the vector as given (float32); only its size is
  checked: an index Chroma rebuilt from single upserts holds non-finite norms and loads fine;
- ``index_metadata.pickle``: Chroma's map between its ids and hnswlib's labels, plain data only.

What the index will hold once loaded is told apart from what its files hold (:func:`held_count`):
hnswlib keeps a deleted element, only marked, so the header's count is not it; the map of labels
is (it names live elements only), plus Chroma's log of writes not yet applied to the files
(``embeddings_queue`` past the segment's ``max_seq_id``, replayed by Chroma as it loads). An
index that will hold more or fewer vectors than Chroma's own record (kept current with every
write, and compared id by id with SQL's by AWAI's audit) is out of date: a write of its files
lost, or a folder restored from another time (:func:`index_out_of_date`).

A header of another layout (a Chroma that changed its format) is neither damaged nor whole:
:class:`UnknownLayout`, for a caller to probe by loading it where a crash cannot hurt
(:mod:`storage.index_probe`).
"""

from __future__ import annotations

import io
import pickle
import sqlite3
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HEADER = struct.Struct("<iqqqqqqiiqqqdq")
PERSISTENCE_VERSION = 1
CHUNK_ROWS = 8192
DELETED = 0x01
MAX_LEVEL = 64
NORM_TOLERANCE = 1e-3
FILES = ("header.bin", "data_level0.bin", "length.bin", "link_lists.bin", "index_metadata.pickle")


class UnknownLayout(Exception):
    """The files are of a layout this check does not know: it cannot tell."""


@dataclass(frozen=True)
class Header:
    max_elements: int
    count: int
    element_bytes: int
    label_offset: int
    data_offset: int
    max_level: int
    entry_point: int
    max_links: int
    max_links0: int

    @property
    def dimension(self) -> int:
        return (self.label_offset - self.data_offset) // 4

    @property
    def level_bytes(self) -> int:
        """Bytes of one upper level of one element in ``link_lists.bin``."""
        return 4 + 4 * self.max_links


@dataclass(frozen=True)
class Segment:
    """Where a collection's index lives, and whether Chroma says it ever wrote it."""

    folder: Path
    flushed: bool
    unit: bool  # its vectors are of unit length


# SQLITE_READONLY_RECOVERY, SQLITE_READONLY_ROLLBACK: what a read-only connection says when a
# write journal waits to be rolled back (:func:`journal_pending`).
_JOURNAL_PENDING = frozenset({264, 776})


def chroma_database(chroma: Path) -> sqlite3.Connection:
    """A read-only connection to the embedded Chroma's own database, ``chroma.sqlite3``.

    Read-only, so a check never writes Chroma's file: were it to roll back a journal it took
    for a killed writer's, it could be the journal of Chroma's own transaction running in this
    process (POSIX locks do not tell a process about its own, and Chroma's SQLite is another
    copy of the library), and it would undo that. What such a read cannot do is
    :func:`journal_pending`.
    """
    uri = f"{(chroma / 'chroma.sqlite3').absolute().as_uri()}?mode=ro"
    return sqlite3.connect(uri, uri=True, timeout=30)


def journal_pending(error: BaseException) -> bool:
    """Whether reading ``chroma.sqlite3`` failed only because a write journal is there to be
    rolled back: a process killed inside one of Chroma's transactions (Chroma rolls it back
    as it opens the file) or Chroma's own transaction in this process. Neither is damage
    (seen: a kill mid-write, then the start-up check set the whole folder aside as damaged);
    the file is checked again when next used."""
    return getattr(error, "sqlite_errorcode", None) in _JOURNAL_PENDING


def segment_of(chroma: Path, collection: str) -> Segment | None:
    """The VECTOR segment of ``collection`` in an embedded Chroma folder (``None``: no such
    collection). Raises :class:`sqlite3.DatabaseError` when ``chroma.sqlite3`` cannot be read."""
    if not (chroma / "chroma.sqlite3").is_file():
        return None
    connection = chroma_database(chroma)
    try:
        found = connection.execute(
            "SELECT s.id, c.id FROM segments s JOIN collections c ON s.collection = c.id"
            " WHERE c.name = ? AND s.scope = 'VECTOR'",
            (collection,),
        ).fetchone()
        if found is None:
            return None
        segment, collection_id = found
        flushed = connection.execute(
            "SELECT count(*) FROM max_seq_id WHERE segment_id = ?", (segment,)
        ).fetchone()[0]
        space = connection.execute(
            "SELECT str_value FROM collection_metadata WHERE collection_id = ? AND key = ?",
            (collection_id, "hnsw:space"),
        ).fetchone()
    finally:
        connection.close()
    # AWAI writes unit vectors in either space it makes (storage.vectors.SPACE, cosine before).
    return Segment(
        chroma / segment, bool(flushed), space is not None and space[0] in ("cosine", "ip")
    )


# Chroma's log operations (chromadb.types.Operation): ADD, UPDATE, UPSERT, DELETE.
_ADDS = (0, 2)
_DELETE = 3


def index_out_of_date(chroma: Path, collection: str) -> str | None:
    """Why the collection's index, as it will load, is out of date: it holds more or fewer
    vectors than Chroma's own record of the collection (whose ids AWAI's audit compares with
    its SQL record); ``None`` when they agree, or when it cannot be told (the other checks
    speak for unreadable files)."""
    held, recorded = held_count(chroma, collection), recorded_count(chroma, collection)
    if held is None or recorded is None or held == recorded:
        return None
    return (
        f"its index holds {held:,} vectors where Chroma records {recorded:,}: it is out of date"
        " (a write of its files lost, or files of another time)"
    )


def held_count(chroma: Path, collection: str) -> int | None:
    """How many vectors the collection's index will hold once Chroma loads it: the live ids of
    its files, with Chroma's log not yet applied to them replayed; ``None`` when that cannot be
    told from the files (no such collection, an index map missing or unreadable)."""
    try:
        segment = segment_of(chroma, collection)
        if segment is None:
            return None
        ids: set[str] = set()
        pickle_path = segment.folder / "index_metadata.pickle"
        if pickle_path.is_file():  # Chroma loads files it finds, flushed or not
            ids.update(_PlainData(io.BytesIO(pickle_path.read_bytes())).load()["id_to_label"])
        elif segment.flushed:
            return None
        with _reading(chroma) as connection:
            found = _segment(connection, collection, "VECTOR")
            if found is None:
                return None
            collection_id, _, applied = found
            for vector_id, present in _pending(connection, collection_id, applied).items():
                if present:
                    ids.add(vector_id)
                else:
                    ids.discard(vector_id)
    except Exception:  # unreadable in any way: the index checks say how
        return None
    return len(ids)


def recorded_count(chroma: Path, collection: str) -> int | None:
    """How many vectors Chroma's record (its metadata segment) will hold for the collection once
    Chroma loads it: what its ``count()`` answers. A kill can fall between Chroma's log and this
    record; Chroma applies the rest of its log as it loads, and so does this count."""
    try:
        with _reading(chroma) as connection:
            found = _segment(connection, collection, "METADATA")
            if found is None:
                return None
            collection_id, segment_id, applied = found
            count = int(
                connection.execute(
                    "SELECT count(*) FROM embeddings WHERE segment_id = ?", (segment_id,)
                ).fetchone()[0]
            )
            for vector_id, present in _pending(connection, collection_id, applied).items():
                was = connection.execute(
                    "SELECT 1 FROM embeddings WHERE segment_id = ? AND embedding_id = ?",
                    (segment_id, vector_id),
                ).fetchone()
                count += int(present) - int(was is not None)
    except sqlite3.DatabaseError:
        return None
    return count


def _segment(
    connection: sqlite3.Connection, collection: str, scope: str
) -> tuple[str, str, int] | None:
    """The collection's id, its segment of ``scope`` and the last log entry that segment
    applied (-1: none yet)."""
    found = connection.execute(
        "SELECT c.id, s.id, coalesce(m.seq_id, -1) FROM collections c"
        " JOIN segments s ON s.collection = c.id AND s.scope = ?"
        " LEFT JOIN max_seq_id m ON m.segment_id = s.id WHERE c.name = ?",
        (scope, collection),
    ).fetchone()
    return None if found is None else (str(found[0]), str(found[1]), int(found[2]))


def _pending(connection: sqlite3.Connection, collection_id: str, applied: int) -> dict[str, bool]:
    """What Chroma's log past ``applied`` leaves of each id it names: present or deleted (an
    update leaves an id as it was)."""
    final: dict[str, bool] = {}
    for operation, vector_id in connection.execute(
        "SELECT operation, id FROM embeddings_queue WHERE topic LIKE ? AND seq_id > ?"
        " ORDER BY seq_id",
        (f"%/{collection_id}", applied),
    ):
        if operation in _ADDS:
            final[vector_id] = True
        elif operation == _DELETE:
            final[vector_id] = False
    return final


@contextmanager
def _reading(chroma: Path) -> Iterator[sqlite3.Connection]:
    connection = chroma_database(chroma)
    try:
        yield connection
    finally:
        connection.close()


def database_damage(chroma: Path) -> str | None:
    """What is wrong with the embedded Chroma's own database, ``None`` if nothing (or none yet).

    SQLite's ``quick_check`` reads every page's structure (not the values' meaning): a file cut
    short or with flipped bytes in its b-trees fails it."""
    if not (chroma / "chroma.sqlite3").exists():
        return None
    try:
        connection = chroma_database(chroma)
        try:
            said = [row[0] for row in connection.execute("PRAGMA quick_check")]
            connection.execute("SELECT count(*) FROM segments").fetchone()
        finally:
            connection.close()
    except sqlite3.DatabaseError as error:
        if journal_pending(error):
            return None
        return f"chroma.sqlite3 cannot be read: {error}"
    if said != ["ok"]:
        return f"chroma.sqlite3 is damaged: {'; '.join(said[:3])}"
    return None


def index_damage(segment: Segment) -> str | None:
    """What is wrong with a collection's index files, ``None`` when they are whole (or when
    Chroma has not written them yet). Raises :class:`UnknownLayout` when it cannot tell."""
    folder = segment.folder
    if not folder.is_dir():
        return "its index folder is gone" if segment.flushed else None
    present = [name for name in FILES if (folder / name).is_file()]
    if not present:
        return "its index folder is empty" if segment.flushed else None
    if "header.bin" not in present:
        return "header.bin missing"
    try:
        header = _header((folder / "header.bin").read_bytes())
        # An index never flushed is all capacity and no element, and has no map of labels yet.
        needed = FILES if header.count else FILES[:-1]
        missing = [name for name in needed if name not in present]
        if missing:
            return f"{', '.join(missing)} missing"
        return (
            _sizes(folder, header)
            or _level0(folder / "data_level0.bin", header, segment.unit)
            or _upper_levels(folder / "link_lists.bin", header)
            or _labels(folder, header)
        )
    except (OSError, ValueError) as error:
        return f"its files cannot be read: {error}"


def _header(data: bytes) -> Header:
    if len(data) != HEADER.size:
        raise UnknownLayout(f"header.bin holds {len(data)} bytes, not {HEADER.size}")
    (version, offset0, max_elements, count, element_bytes, label_offset, data_offset, max_level,
     entry_point, max_links, max_links0, _m, _mult, _ef) = HEADER.unpack(data)  # fmt: skip
    if version != PERSISTENCE_VERSION or offset0 != 0:
        raise UnknownLayout(f"header.bin is of persistence version {version}")
    return Header(
        max_elements,
        count,
        element_bytes,
        label_offset,
        data_offset,
        max_level,
        entry_point,
        max_links,
        max_links0,
    )


def _sizes(folder: Path, header: Header) -> str | None:
    """The header against itself and against the other files' sizes (a torn rewrite)."""
    if not (0 <= header.count <= header.max_elements) or not (0 < header.max_links <= 1024):
        return f"header.bin is damaged (count {header.count} of {header.max_elements})"
    if (
        header.data_offset != 4 + 4 * header.max_links0
        or header.label_offset <= header.data_offset
        or (header.label_offset - header.data_offset) % 4
        or header.element_bytes != header.label_offset + 8
        or not (-1 <= header.max_level <= MAX_LEVEL)  # -1: no element yet
    ):
        return "header.bin is damaged (its offsets disagree)"
    if header.count and not (0 <= header.entry_point < header.count):
        return f"header.bin names entry point {header.entry_point} of {header.count} elements"
    # Chroma writes the elements there are; an index never flushed, its whole capacity.
    for name, per_element in (("data_level0.bin", header.element_bytes), ("length.bin", 4)):
        actual = (folder / name).stat().st_size
        allowed = {header.count * per_element, header.max_elements * per_element}
        if actual not in allowed:
            return (
                f"header.bin counts {header.count:,} elements but {name} holds {actual:,} bytes"
                f" for {header.count * per_element:,} (a write of the index was cut short)"
            )
    if (folder / "link_lists.bin").stat().st_size < header.count * 4:
        return f"link_lists.bin is too short for the {header.count:,} elements header.bin counts"
    return None


def _level0(path: Path, header: Header, unit: bool) -> str | None:
    """Every element's link count and neighbour ids in range; vectors finite (and of unit
    length when ``unit``); labels unique."""
    if not header.count:
        return None
    rows = np.memmap(path, dtype=np.uint8, mode="r", shape=(header.count, header.element_bytes))
    links_end = header.data_offset
    seen_labels = np.empty(header.count, dtype=np.uint64)
    for start in range(0, header.count, CHUNK_ROWS):
        chunk = np.array(rows[start : start + CHUNK_ROWS])
        words = chunk[:, :links_end].view(np.uint32)
        counts = words[:, 0] & 0xFFFF
        if (counts > header.max_links0).any():
            return f"data_level0.bin is damaged (element {start + _first(counts > header.max_links0)} has too many links)"
        used = np.arange(header.max_links0, dtype=np.uint32)[None, :] < counts[:, None]
        if np.where(used, words[:, 1:], 0).max(initial=0) >= header.count:
            return "data_level0.bin is damaged (a link points past the last element)"
        vectors = chunk[:, header.data_offset : header.label_offset].view(np.float32)
        with np.errstate(over="ignore", invalid="ignore"):
            squares = np.einsum("ij,ij->i", vectors, vectors)  # inf or nan if any is not finite
        if not np.isfinite(squares).all():
            return "data_level0.bin is damaged (a vector is not finite)"
        if unit:
            live = (chunk[:, 2] & DELETED) == 0
            if (np.abs(np.sqrt(squares[live]) - 1.0) > NORM_TOLERANCE).any():
                return "data_level0.bin is damaged (a vector is not of unit length)"
        seen_labels[start : start + len(chunk)] = chunk[:, header.label_offset :].view(np.uint64)[
            :, 0
        ]
    if len(np.unique(seen_labels)) != header.count:
        return "data_level0.bin is damaged (two elements share a label)"
    return None


def _upper_levels(path: Path, header: Header) -> str | None:
    """``link_lists.bin`` parsed whole: every size a whole number of levels up to the header's
    max level, every count and id in range, the entry point on the top level, nothing left."""
    words = np.fromfile(path, dtype=np.uint32) if path.stat().st_size % 4 == 0 else None
    if words is None:
        return "link_lists.bin is damaged (its size is not a whole number of words)"
    per_level = header.level_bytes // 4
    at = 0
    entry_level = 0
    for element in range(header.count):
        if at >= len(words):
            return "link_lists.bin is cut short"
        size = int(words[at])
        at += 1
        if not size:
            continue
        levels, rest = divmod(size, header.level_bytes)
        if rest or levels > header.max_level or at + size // 4 > len(words):
            return f"link_lists.bin is damaged (element {element} has a size of {size:,} bytes)"
        blocks = words[at : at + size // 4].reshape(levels, per_level)
        counts = blocks[:, 0] & 0xFFFF
        if (counts > header.max_links).any():
            return f"link_lists.bin is damaged (element {element} has too many links)"
        used = np.arange(header.max_links)[None, :] < counts[:, None]
        if (blocks[:, 1:][used] >= header.count).any():
            return "link_lists.bin is damaged (a link points past the last element)"
        if element == header.entry_point:
            entry_level = levels
        at += size // 4
    if at != len(words):
        return "link_lists.bin holds more than header.bin counts (a write was cut short)"
    if header.count and entry_level != header.max_level:
        return "link_lists.bin disagrees with header.bin on the top level"
    return None


def _labels(folder: Path, header: Header) -> str | None:
    """Chroma's id ↔ label maps: plain data, as many as the index holds at most, each label one
    of an element's."""
    if not header.count:
        return None
    try:
        meta = _PlainData(io.BytesIO((folder / "index_metadata.pickle").read_bytes())).load()
    except Exception as error:
        return f"index_metadata.pickle cannot be read ({type(error).__name__})"
    if not isinstance(meta, dict):
        return "index_metadata.pickle is damaged (not a map)"
    by_id, by_label = meta.get("id_to_label"), meta.get("label_to_id")
    if not isinstance(by_id, dict) or not isinstance(by_label, dict):
        return "index_metadata.pickle is damaged (its maps are missing)"
    if len(by_id) != len(by_label) or len(by_label) > header.count:
        return (
            f"index_metadata.pickle maps {len(by_label):,} labels, header.bin counts"
            f" {header.count:,} elements (a write of the index was cut short)"
        )
    rows = np.memmap(
        folder / "data_level0.bin",
        dtype=np.uint8,
        mode="r",
        shape=(header.count, header.element_bytes),
    )
    labels = set(np.array(rows[:, header.label_offset :]).view(np.uint64)[:, 0].tolist())
    if not labels.issuperset(by_label):
        return "index_metadata.pickle names labels the index does not hold"
    return None


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


class _PlainData(pickle.Unpickler):
    """Unpickles dicts, strings and numbers only: a damaged or foreign file can name no class."""

    def find_class(self, module: str, name: str) -> object:
        raise pickle.UnpicklingError(f"{module}.{name} is not plain data")
