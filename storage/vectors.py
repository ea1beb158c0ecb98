"""Chroma: a channel's vectors in a series of collections (segments), holding vectors we computed.

We never let Chroma embed anything: its default embedding function downloads a model. Collections
are created with ``embedding_function=None`` and every write passes vectors. Vector ids are
``<message id>#<thought index>``; metadata keeps the message id and the thought's index, so a
message's vectors (or its thoughts from one on) can be removed without knowing how many it had.

A channel's vectors are kept in segments of at most :data:`SEGMENT_VECTORS` each: the
channel's collection (segment 0, the name SQL stores) and ``<name>.s1``, ``<name>.s2``, … made
as each fills. Writes go to the newest only. Why: Chroma loads a collection's whole HNSW index
into the process for any call on it (a write, a count, a read by id, a delete of an id it does
not hold), about 2 KB a vector: +271 MiB to write one vector into a 121k-vector channel
(docs/performance.md). With segments, a write loads the newest segment's index only, whatever
the channel's size. Reads by id, counts, id lists and deletes go to every segment, so a forget
still reaches every vector. A channel written before segments is its segment 0 and rolls over at
its next write.

An embedded Chroma keeps every index it loaded until its client is closed, so a long ingest
held each segment it filled, and a bot every segment an edit or a forget went through (about
2.2 MiB per 1,000 vectors, measured). The embedded client is therefore closed between calls once
a roll-over left a full segment's index loaded, or it holds more than :data:`HELD_SEGMENTS`
segments' (:meth:`ChromaVectors._in_use`), and opened again on next use (tens of milliseconds).

The same class runs on an embedded ``PersistentClient`` (one process owns a folder) or on a
``chromadb.HttpClient`` talking to a Chroma server that several bot processes share; nothing else
differs, since every operation here is a plain Chroma call.
"""

from __future__ import annotations

import errno
import functools
import logging
import re
import shutil
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar
from urllib.parse import urlsplit

import numpy as np

from awai_engine.key_names import slug_with_digest
from awai_engine.reconcile import DamagedVectorsError
from storage.batches import batches
from storage.embedded_checks import EmbeddedChecks
from storage.errors import StorageError

log = logging.getLogger(__name__)
P = ParamSpec("P")
R = TypeVar("R")

PAGE = 5000
WRITE_BATCH = 1000
_UNSAFE = re.compile(r"[^a-zA-Z0-9._-]+")
_DOTS = re.compile(r"\.{2,}")
# Below this much free space, a failed embedded Chroma write is taken for a full disk: Chroma
# reports a failed segment write ("Error in compaction") without saying why.
LOW_SPACE_BYTES = 1 << 20
# Chroma's HNSW graph for a new collection: 2 links per vector, a construction beam of 16
# (Chroma's defaults are 16 and 100; 1 is degenerate: hnswlib's level factor is 1 / ln M). AWAI
# never searches that index (recall is exact over the read model's prefix, see README "How it
# reads"); it reads vectors by id and counts them. So the graph is upkeep only: every 1,000 writes Chroma rewrites each vector
# whose links changed (its whole 1.6 KB record), and each new vector changes the links of up to
# M others. Measured by bench/scale.py's 20k ingest (strace by file): the index's writes
# 113 MB (4 links) → 68 MB (2 links) for a 38 MB index; 16 links (Chroma's default) wrote more
# still (docs/performance.md). Both are fixed when a collection is made; existing ones keep
# theirs until rebuilt (a forget's compaction, a re-embed, a repair).
SMALL_GRAPH: dict[str, str | int | float] = {"hnsw:M": 2, "hnsw:construction_ef": 16}
# How many writes a new collection's index takes in memory before Chroma persists it (its
# default is 1,000). Each persist rewrites every index record whose links changed since the last
# and the whole id map (``index_metadata.pickle``), so fewer persists write fewer bytes: measured
# by bench/scale.py's 20k ingest, 2.20× → 1.95× bytes written / folder. The price: Chroma purges
# its log only up to what the index persisted, so up to this many vectors wait in the log (about
# 1.7 KB each, 3.4 MB at most), and a process that opens the collection replays them into the
# index first (0.2–0.3 s measured). Fixed when a collection is made.
PERSIST_EVERY: dict[str, str | int | float] = {"hnsw:sync_threshold": 2000}
# The space of a new collection: inner product, over the unit vectors AWAI writes (the same
# ranking as cosine, were the index ever searched). Why not cosine: Chroma normalises each vector
# of a cosine collection again as it stores it, which changes the last bits of about a quarter of
# the values, so what it gives back is not what was written. In an inner-product collection the
# vectors read back are the bits written, so the process that wrote them can append them to its
# read model without reading them back (:mod:`storage.read_model`) and still equal a rebuild.
# Existing cosine collections keep their space until they are made again (a forget's
# compaction, a re-embed, a repair).
SPACE = "ip"
# The settings a collection AWAI makes is made with (a new segment takes segment 0's).
MADE_WITH: dict[str, str | int | float] = {"hnsw:space": SPACE, **SMALL_GRAPH, **PERSIST_EVERY}
# The most vectors a segment takes before writes go to a new one. Chroma holds about 2 KB of index
# per vector of the collection written to (measured: writing into a fresh collection beside a
# 121k one, RSS +40 MiB at 10k vectors, +61 at 20k; the 121k one alone +237 MiB). 10,000 keeps a
# write's index under about 40 MiB; a channel of 100k is then 10–11 collections, each a
# get-by-id or delete call more on a rebuild or a forget (docs/performance.md).
SEGMENT_VECTORS = 10_000
# How many segments' indexes an embedded client may hold between calls before it is closed to let
# them go: a bot writing to a few channels keeps each one's newest segment loaded (at most
# 4 × 10,000 vectors, about 90 MiB), and a call that went through more (a forget or an edit in a
# channel of 40,000 vectors or more, a rebuild) gives its memory back when it ends.
HELD_SEGMENTS = 4
_SEGMENT = re.compile(r"\.s([1-9][0-9]*)")
# A copy of a channel's collection (a compaction's, a re-embed's): the channel's own name, a dash
# and the time it was made, in hex nanoseconds (storage.reembed), then perhaps a segment suffix.
_COPY = re.compile(r"-([0-9a-f]{1,20})(?:\.s[1-9][0-9]*)?")
_AS_GIVEN_SPACES = frozenset({"ip", "l2"})
# What Chroma 1.5 says when its files of a collection's index cannot be read: a truncated
# ``index_metadata.pickle`` or ``header.bin`` ("Error deserializing pickle file", "Error loading
# hnsw index", raised by every call), or a truncated ``data_level0.bin`` ("Error getting
# embedding", raised when vectors are read). A full disk during a flush leaves files so.
_DAMAGE = re.compile(
    r"hnsw segment reader|Error loading hnsw index|Error deserializing pickle|"
    r"Error getting embedding|Error finding id"
)


def _a_call(
    method: Callable[Concatenate[ChromaVectors, P], R],
) -> Callable[Concatenate[ChromaVectors, P], R]:
    """A public method of :class:`ChromaVectors`: one call, counted by ``_in_use``."""

    @functools.wraps(method)
    def call(self: ChromaVectors, *args: P.args, **kwargs: P.kwargs) -> R:
        with self._in_use():
            return method(self, *args, **kwargs)

    return call


def collection_name(channel_key: str) -> str:
    """A valid, unique Chroma collection name for any channel key.

    Chroma accepts 3–512 characters of ``[a-zA-Z0-9._-]``, starting and ending with a letter or
    digit, without ``..``. The name is a readable slug of the key plus a hash of the whole key, so
    two keys that slug alike still differ. Names are stored with their channel and must not change
    for a key: runs of dots became one only when that rule was added, which changed no name that
    Chroma had accepted. Keys that are not valid UTF-8 (lone surrogates) hash their code points.
    """
    slug = _DOTS.sub(".", _UNSAFE.sub("-", channel_key)).strip("-._")[:60].strip("-._")
    return f"awai-{slug_with_digest(slug, channel_key, 16)}"


def segment_name(name: str, number: int) -> str:
    """The name of a channel's ``number``-th segment (0: its collection's own name). The suffix
    cannot end a channel's collection name (those end with a hex digest), so no two channels'
    segments share a name; at most 507 + 5 characters below segment 1,000 (Chroma allows 512)."""
    return name if number == 0 else f"{name}.s{number}"


def vector_id(message_id: str, index: int) -> str:
    return f"{message_id}#{index}"


def vector_owner(vector: str) -> str:
    """The message id inside a vector id (``<message id>#<thought index>``)."""
    return vector.rsplit("#", 1)[0]


def vector_metadata(message_id: str, index: int) -> dict[str, str | int | float]:
    """What Chroma keeps beside a thought's vector: what its deletes filter on, nothing more.

    No speaker id: nothing asks Chroma by speaker (a speaker's messages are removed by their
    ids, which SQL knows), and each key is one more row, and its index entry, that Chroma's
    SQLite writes per vector (measured by ``bench.scale``'s bytes-written row); a collection
    written before keeps the key it has until it is rebuilt."""
    return {"message_id": message_id, "thought": index}


class ChromaVectors:
    """Vector storage on an embedded ``PersistentClient`` (or any Chroma client given to it).

    The embedded client is opened on first use, not with the store: importing chromadb and
    opening its folder cost more than a second, and a reading whose persisted read model is
    current needs no vector from Chroma at all (:mod:`storage.read_model`).

    Every method takes a channel's collection name and works on its segments (module docstring).
    """

    # Vectors per segment (:data:`SEGMENT_VECTORS`); the crash tests set a few to roll over.
    segment_vectors = SEGMENT_VECTORS

    def __init__(
        self,
        client: object | None = None,
        path: Path | None = None,
        connect: Callable[[], object] | None = None,
        writable: bool = True,
    ) -> None:
        """``connect``: makes the client on first use, when ``client`` is not given.
        ``writable``: whether a damaged embedded folder may be set aside (not when only looking)."""
        self._client = client
        self._connect = connect
        self._connecting = threading.Lock()
        self.path = path  # the embedded client's folder; None for a server
        self._as_given: dict[str, bool] = {}  # collection name → keeps_as_given
        self._checks = EmbeddedChecks(path, writable) if path is not None else None
        self._use = threading.Lock()  # guards the three below
        self._active = 0  # calls in progress, in any thread (nested ones counted too)
        self._held: set[str] = set()  # segments whose index the open client may hold
        self._filled = False  # a roll-over left a full segment's index loaded

    @property
    def client(self) -> object:
        if self._client is None and self._connect is not None:
            with self._connecting:
                if self._client is None:
                    self._client = self._connect()
        return self._client

    @property
    def opened(self) -> bool:
        """Whether the Chroma client was made (for tests of what a reading touches)."""
        return self._client is not None

    @contextmanager
    def _in_use(self) -> Iterator[None]:
        """One call on the vectors; when the last call in progress ends, an embedded client that
        holds indexes no write needs now is closed (module docstring). Not for a client given
        to the class (a server's, a test's): only one this class opens can be opened again."""
        with self._use:
            self._active += 1
        try:
            yield
        finally:
            with self._use:
                self._active -= 1
                if (
                    not self._active
                    and self._connect is not None
                    and (self._filled or len(self._held) > HELD_SEGMENTS)
                ):
                    self._close_client()

    def _holds(self, segment: str) -> None:
        """Note that the client may now hold ``segment``'s index (a call on its vectors loads it)."""
        with self._use:
            self._held.add(segment)

    def _close_client(self) -> None:
        """Close the client (the caller holds ``_use`` and no call is in progress): Chroma lets
        go of the indexes it loaded only then (closing 40,000 vectors' four segments gave back
        60 MiB at once, and the heap trim after an ingest's chunk 32 more)."""
        self._held.clear()
        self._filled = False
        close = getattr(self._client, "close", None)
        if close is None:  # none open, or a Chroma before clients could be closed: kept
            return
        self._client = None
        try:
            close()
        except Exception as error:  # its memory stays; the next call opens a new client
            log.warning("could not close the Chroma client of %s: %s", self.path, error)

    @classmethod
    def embedded(cls, path: Path, writable: bool = True) -> ChromaVectors:
        """The embedded Chroma of ``path``, opened on first use; an error opening it then says
        which folder (:class:`~storage.errors.StorageError`), as opening it eagerly did.

        Its files are checked before Chroma loads them (:class:`~storage.embedded_checks.
        EmbeddedChecks`): Chroma's own database when the client opens, each collection's index
        the first time this process uses it."""
        path.mkdir(parents=True, exist_ok=True)
        vectors: ChromaVectors

        def connect() -> object:
            assert vectors._checks is not None
            vectors._checks.folder()  # set aside first if Chroma's database is damaged
            import chromadb
            from chromadb.config import Settings as ChromaSettings

            try:
                return chromadb.PersistentClient(
                    path=str(path),
                    settings=ChromaSettings(anonymized_telemetry=False, allow_reset=False),
                )
            except Exception as error:
                raise StorageError(f"Cannot open Chroma in {path}: {error}") from error

        vectors = cls(path=path, connect=connect, writable=writable)
        return vectors

    @classmethod
    def server(cls, url: str) -> ChromaVectors:
        """A Chroma server at ``http(s)://host[:port][/database]`` (the database made if missing).

        Fails at once, with the server's own error, when the server cannot be reached.
        """
        import chromadb
        from chromadb.config import DEFAULT_DATABASE
        from chromadb.config import Settings as ChromaSettings

        parts = urlsplit(url)
        ssl = parts.scheme == "https"
        host, port = parts.hostname or "", parts.port or (443 if ssl else 8000)
        database = parts.path.strip("/") or DEFAULT_DATABASE
        if database != DEFAULT_DATABASE:
            _ensure_database(
                ChromaSettings(
                    chroma_api_impl="chromadb.api.fastapi.FastAPI",
                    chroma_server_host=host,
                    chroma_server_http_port=port,
                    chroma_server_ssl_enabled=ssl,
                    anonymized_telemetry=False,
                ),
                database,
            )
        client = chromadb.HttpClient(
            host=host,
            port=port,
            ssl=ssl,
            database=database,
            settings=ChromaSettings(anonymized_telemetry=False, allow_reset=False),
        )
        return cls(client)

    def _collection(
        self, name: str, channel_key: str | None = None
    ) -> Any:  # a chromadb Collection
        """The collection, made if missing; one that exists is checked first (``channel_key``
        given: it is being made, so there is nothing to check)."""
        if self._checks is not None and channel_key is None:
            self._checks.collection(name)
        self._holds(name)
        # Settings always, not only when ``channel_key`` is known: a write that finds segment 0
        # gone (a rebuild stopped after its drop, a compaction between a writer's steps) makes
        # it here, and a collection made without them would be an l2 one whose next roll-over
        # Chroma refuses ("Metadata cannot be empty"). Chroma ignores them for one that exists.
        return self.client.get_or_create_collection(  # type: ignore[attr-defined]
            name=name,
            metadata={"channel_key": channel_key, **MADE_WITH} if channel_key else MADE_WITH,
            embedding_function=None,
        )

    @contextmanager
    def _calling(self, name: str, writing: bool = False) -> Iterator[None]:
        """Chroma's errors in the words callers know.

        An index whose files cannot be read becomes :class:`DamagedVectorsError` (the SQL record
        rebuilds it); a write that failed for want of space becomes ``OSError(ENOSPC)``.
        """
        try:
            yield
        except Exception as error:
            # A full disk first: rebuilding a damaged index would need the space too.
            if writing and _disk_full(error, self.path):
                raise OSError(
                    errno.ENOSPC, "No space left on device", str(self.path or "the Chroma server")
                ) from error
            if _damaged(error):
                raise DamagedVectorsError(name, str(error)) from error
            raise

    @_a_call
    def keeps_as_given(self, name: str) -> bool:
        """Whether the collection gives back exactly the vectors written to it (its space is not
        cosine, see :data:`SPACE`). Asked of Chroma once per collection and process: a
        collection's space never changes."""
        known = self._as_given.get(name)
        if known is None:
            # Segment 0's metadata (every segment is made with it), asked without opening its
            # index or checking its files: a writer uses the newest segment's alone.
            if self._checks is not None:
                self._checks.database(name)
            with self._calling(name):
                metadata = self._metadata(name)
            known = self._as_given[name] = metadata.get("hnsw:space") in _AS_GIVEN_SPACES
        return known

    def _metadata(self, name: str) -> dict[str, Any]:
        """A collection's metadata, made if missing as ``_collection`` makes it; no index is
        loaded (Chroma loads one for a call on its vectors, a count or a write)."""
        from chromadb.errors import NotFoundError

        try:
            found = self.client.get_collection(name, embedding_function=None)  # type: ignore[attr-defined]
        except NotFoundError:
            found = self._collection(name)
        return dict(found.metadata or {})

    @_a_call
    def create(self, name: str, channel_key: str) -> None:
        with self._calling(name, writing=True):
            self._collection(name, channel_key)

    @_a_call
    def segments(self, name: str, checked: bool = True) -> list[str]:
        """The segments of channel collection ``name`` that exist, oldest first.

        Listed from Chroma every time (its metadata only: no index is loaded), not remembered:
        another process sharing a Chroma server may have rolled over since, and a delete must
        reach its segment too. Listed rather than probed one by one, so a gap (a drop or a
        compaction by another process between a writer's steps) hides none after it.
        ``checked``: false for a drop, which removes a damaged collection without reading it.
        """
        if self._checks is not None and checked:
            # Chroma's own database (a damaged one is found here, not by Chroma failing); each
            # segment's index files are checked when it is first used (``_collection``), so an
            # ingest checks, as it loads, the newest segment's alone.
            self._checks.database(name)
        with self._calling(name):
            listed = self.client.list_collections()  # type: ignore[attr-defined]
        numbers: dict[int, str] = {}
        for collection in listed:
            if collection.name == name:
                numbers[0] = name
            elif collection.name.startswith(name) and (
                match := _SEGMENT.fullmatch(collection.name, len(name))
            ):
                numbers[int(match.group(1))] = collection.name
        if self._checks is not None and checked and 0 not in numbers:
            # Missing: a new channel's, or lost with a damaged folder set aside (then damaged,
            # and rebuilt from SQL); the check reads no index of a collection that is not there.
            self._checks.collection(name)
        return [numbers[number] for number in sorted(numbers)]

    @_a_call
    def made_for(self, channel_key: str) -> dict[str, int]:
        """Each collection made for ``channel_key``, segments aside, with when it was made:
        the channel's own (0, the first) and each copy a compaction or a re-embed made
        (nanoseconds since the epoch, from its name). Only the one SQL names is in use; the
        others are what a crash left (:meth:`storage.reembed.Reembedder.drop_leftovers`)."""
        own = collection_name(channel_key)
        prefix = own[:490]
        with self._calling(own):
            listed = self.client.list_collections()  # type: ignore[attr-defined]
        made: dict[str, int] = {}
        for collection in listed:
            name = collection.name
            if name == own or (name.startswith(own) and _SEGMENT.fullmatch(name, len(own))):
                made[own] = 0
            elif name.startswith(prefix) and (match := _COPY.fullmatch(name, len(prefix))):
                made[f"{prefix}-{match.group(1)}"] = int(match.group(1), 16)
        return made

    @_a_call
    def upsert(
        self,
        name: str,
        ids: Sequence[str],
        vectors: np.ndarray,
        metadatas: Sequence[dict[str, str | int | float]],
    ) -> None:
        """Write to the newest segment, starting a new one as it fills (:data:`SEGMENT_VECTORS`).

        No other segment is touched, so the index this loads is at most one segment's. Ids are
        those of new thoughts, or of thoughts whose old vectors were deleted first (an edit, a
        write redone), so none is in an older segment. (One way one can be: a save that wrote
        vectors and then failed drops its new rows and leaves the vectors as orphans; if the
        same message is saved again before a repair removes them, and a roll-over came between,
        both copies stay. Reads take the newest, deletes reach both.) A segment 0 gone (a compaction dropped
        it meanwhile) is made again, as a write to a dropped collection did before segments.
        """
        existing = self.segments(name)
        newest = existing[-1] if existing else name
        number = 0 if newest == name else int(newest[len(name) + 2 :])
        collection = self._collection(newest)
        with self._calling(name):
            held = int(collection.count())
        start = 0
        while start < len(ids):
            if held >= self.segment_vectors:
                with self._use:
                    self._filled = True  # the full one is loaded, and no write needs it again
                number += 1
                newest, held = segment_name(name, number), 0
                collection = self._open_segment(name, newest)
            stop = min(len(ids), start + WRITE_BATCH, start + self.segment_vectors - held)
            with self._calling(name, writing=True):
                collection.upsert(
                    ids=list(ids[start:stop]),
                    embeddings=vectors[start:stop],
                    metadatas=list(metadatas[start:stop]),
                )
            held += stop - start
            start = stop

    def _open_segment(self, name: str, segment: str) -> Any:  # a chromadb Collection
        """A new segment of ``name``, made with segment 0's settings (space, graph, cadence), so
        a channel's vectors come back alike from every segment (:meth:`keeps_as_given`). What
        segment 0 lacks (one made without settings before they were always given) is a new
        collection's."""
        self._holds(segment)
        with self._calling(name, writing=True):
            return self.client.get_or_create_collection(  # type: ignore[attr-defined]
                name=segment,
                metadata={**MADE_WITH, **self._metadata(name)},
                embedding_function=None,
            )

    def _listed(self, name: str, newest_first: bool = False) -> Iterator[Any]:
        """Each segment of ``name`` that still exists, opened without being made again.

        Why not ``_collection``: a segment dropped between the listing and its turn (a drop or a
        compaction by another process) would come back empty from ``get_or_create``, a collection
        nobody writes to again. A read or a delete has nothing to do in a segment that is gone,
        so it is passed over.
        """
        from chromadb.errors import NotFoundError

        segments = self.segments(name)
        for segment in reversed(segments) if newest_first else segments:
            if self._checks is not None:
                self._checks.collection(segment)
            try:
                with self._calling(name):
                    collection = self.client.get_collection(segment, embedding_function=None)  # type: ignore[attr-defined]
            except NotFoundError:
                log.info("Chroma collection %s was dropped after it was listed", segment)
                continue
            self._holds(segment)
            yield collection

    @_a_call
    def delete_messages(self, name: str, message_ids: Iterable[str]) -> None:
        """Remove every vector of ``message_ids`` from every segment: the segments listed and
        opened once for the whole list (a forget of a speaker's 10,000 messages, say), the
        ids sent a slice at a time."""
        ids = list(message_ids)
        if ids:
            for collection in self._listed(name):
                for part in batches(ids):
                    with self._calling(name, writing=True):
                        collection.delete(where={"message_id": {"$in": part}})

    @_a_call
    def delete_thoughts_from(self, name: str, message_id: str, first_index: int) -> None:
        """Remove a message's vectors for thoughts ``first_index`` and later (an edit shrank it)."""
        for collection in self._listed(name):
            with self._calling(name, writing=True):
                collection.delete(
                    where={"$and": [{"message_id": message_id}, {"thought": {"$gte": first_index}}]}
                )

    @_a_call
    def count(self, name: str) -> int:
        total = 0
        for collection in self._listed(name):
            with self._calling(name):
                total += int(collection.count())
        return total

    @_a_call
    def delete_ids(self, name: str, ids: Sequence[str]) -> None:
        for collection in self._listed(name):
            for part in batches(ids, WRITE_BATCH):
                with self._calling(name, writing=True):
                    collection.delete(ids=list(part))

    @_a_call
    def vectors_of(self, name: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The vectors of ``ids`` that exist, a page of ids at a time: a page by id costs the
        same anywhere in a collection, where Chroma's pages by offset grow with the offset.

        Segments are asked newest first, each for the ids not found yet, so a catch-up on
        recent writes loads the newest segment's index alone."""
        found: dict[str, np.ndarray] = {}
        wanted = list(ids)
        for collection in self._listed(name, newest_first=True) if wanted else ():
            for start in range(0, len(wanted), PAGE):
                with self._calling(name):
                    page = collection.get(ids=wanted[start : start + PAGE], include=["embeddings"])
                embeddings = _finite(name, np.asarray(page["embeddings"], dtype=np.float32))
                found.update(zip(page["ids"], embeddings, strict=True))
            wanted = [vector for vector in wanted if vector not in found]
            if not wanted:
                break
        return found

    @_a_call
    def all_ids(self, name: str, read_vectors: bool = False) -> list[str]:
        """Every id of the channel's segments, each once; with ``read_vectors`` each page's
        vectors are read too (and let go), so that an index file too damaged to give them back
        shows here, as :class:`DamagedVectorsError`, rather than at the next reading."""
        include = ["embeddings"] if read_vectors else []
        ids: dict[str, None] = {}
        for collection in self._listed(name):
            offset = 0
            while True:
                with self._calling(name):
                    got = collection.get(include=include, limit=PAGE, offset=offset)
                if not got["ids"]:
                    break
                if read_vectors:
                    _finite(name, np.asarray(got["embeddings"], dtype=np.float32))
                ids.update(dict.fromkeys(got["ids"]))
                offset += len(got["ids"])
        return list(ids)

    def scrub(self) -> None:
        """Remove what an embedded Chroma keeps on disk of dropped collections.

        Chroma leaves a dropped collection's index folder (its vectors) in the data folder, and
        its SQLite file keeps dropped log rows in free pages; both go here. A Chroma server's
        files are not ours to touch: its operator runs ``chroma vacuum`` and ``awai
        chroma-scrub``, which calls :func:`scrub_folder` there (docs/privacy.md).
        """
        if self.path is None or not (self.path / "chroma.sqlite3").exists():
            return
        scrub_folder(self.path)

    @_a_call
    def drop(self, name: str) -> None:
        """Delete a channel's collection, every segment of it, newest first; one already gone (a
        drop redone after a crash) is not an error."""
        from chromadb.errors import NotFoundError

        for segment in reversed(self.segments(name, checked=False) or [name]):
            try:
                self.client.delete_collection(segment)  # type: ignore[attr-defined]
            except NotFoundError:
                log.info("Chroma collection %s was already gone", segment)
            if self._checks is not None:
                self._checks.forget(segment)
        self._as_given.pop(name, None)


def scrub_folder(path: Path) -> list[str]:
    """Remove the index folders of dropped collections from a Chroma data folder, then vacuum its
    SQLite file; returns the names of the folders removed.

    Chroma (1.x, embedded and server alike: chroma-core/chroma#5259) deletes a collection's rows
    but leaves its index folder, named by segment id, holding the collection's vectors and
    whatever its writer's memory held in the index's unused slots. A folder no segment names is
    such a leftover. A running server never opens it again, so this may run beside it.
    """
    connection = sqlite3.connect(path / "chroma.sqlite3", timeout=30, isolation_level=None)
    try:
        live = {row[0] for row in connection.execute("SELECT id FROM segments")}
        removed = []
        for folder in sorted(path.iterdir()):
            if folder.is_dir() and _is_uuid(folder.name) and folder.name not in live:
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder.name)
        connection.execute("VACUUM")
        return removed
    finally:
        connection.close()


def _is_uuid(name: str) -> bool:
    try:
        uuid.UUID(name)
    except ValueError:
        return False
    return True


def _ensure_database(admin_settings: object, database: str) -> None:
    """Create the named database on the server unless it exists (two processes may race here)."""
    import chromadb
    from chromadb.errors import NotFoundError

    admin = chromadb.AdminClient(admin_settings)  # type: ignore[arg-type]
    try:
        admin.get_database(database)
    except NotFoundError:
        try:
            admin.create_database(database)
        except Exception as error:
            # The server says "already exists" with a plain ChromaError when another process
            # created it meanwhile: then it is there now; if it is not, the error was real.
            try:
                admin.get_database(database)
            except NotFoundError:
                raise error from None


def _finite(name: str, vectors: np.ndarray) -> np.ndarray:
    """``vectors`` as Chroma gave them back, if every one is finite. Chroma refuses to store a
    vector that is not, so one read back so comes from damaged files (bytes changed in
    ``chroma.sqlite3``, whose log holds vectors not yet in the index, pass SQLite's checks):
    copied on, it would fail the write it goes to (a compaction's); the index is rebuilt."""
    with np.errstate(over="ignore", invalid="ignore"):
        whole = bool(np.isfinite(vectors).all())
    if not whole:
        raise DamagedVectorsError(name, "a vector Chroma gave back is not finite")
    return vectors


def _damaged(error: Exception) -> bool:
    """Whether Chroma failed because a collection's index files cannot be read."""
    from chromadb.errors import InternalError

    return isinstance(error, InternalError) and _DAMAGE.search(str(error)) is not None


def _disk_full(error: Exception, path: Path | None) -> bool:
    """Whether a failed Chroma write failed for want of disk space."""
    said = str(error)
    if "disk is full" in said or "No space left" in said:
        return True
    if path is None:
        return False
    try:
        return shutil.disk_usage(path).free < LOW_SPACE_BYTES
    except OSError:
        return False
