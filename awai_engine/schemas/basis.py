"""A speaker's thoughts before a point of the channel: exactly what one clustering may see.

Reading message ``i`` may use only the speaker's thoughts before ``i``; in the timeline those are
the speaker's rows below ``messages[i].first_row``. :class:`SpeakerRows` indexes the rows of every
speaker once per timeline and keeps up with its appends, so cutting a basis is a binary search
and slicing (its vectors are gathered when used: :class:`RowVectors`), and a new message costs
its own thoughts, not a walk over the channel.
"""

from __future__ import annotations

import bisect
import hashlib
import threading
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from awai_engine import mapped_rows
from awai_engine.ordering import stable_order
from awai_engine.schemas.model import thought_key
from awai_engine.timeline import Timeline


@dataclass(frozen=True)
class Basis:
    """The speaker's thoughts up to one of their messages, in channel order, with vectors
    (``rows``: gathered from the timeline when used)."""

    channel: str
    speaker_id: str
    speaker_name: str
    keys: tuple[str, ...]
    texts: tuple[str, ...]
    message_ids: tuple[str, ...]
    positions: np.ndarray = field(repr=False)
    rows: RowVectors = field(repr=False)
    digest: str
    # Every speaker of the channel, as (name at their first message, that message's position):
    # naming a preconception leaves out the people known by then (``naming.known_names``).
    speakers: tuple[tuple[str, int], ...] = ()

    @property
    def count(self) -> int:
        return len(self.keys)

    @property
    def vectors(self) -> np.ndarray:
        """All the thoughts' float32 vectors, in order (gathered on first use: clustering)."""
        return self.rows.all()

    def vectors_at(self, indices: Sequence[int] | np.ndarray) -> np.ndarray:
        """The vectors of the thoughts at ``indices``: the same float32 rows as
        ``vectors[indices]``, without gathering the others when they are not yet."""
        return self.rows.at(indices)

    @property
    def last_message_id(self) -> str:
        return self.message_ids[-1]


class RowVectors:
    """Some rows of a timeline's vectors, as float32, gathered all at once only when all are used.

    Why: a reading whose run is already made needs only the rows of the schemas it recalls
    (``recall.returning``, ``build.central_rows``), yet gathering all of a speaker's rows from a
    loaded file was a third of a reading at 100,000 messages (5 ms, then 2 ms letting the file's
    pages go). Clustering, which needs them all, gathers them once and keeps them; the timeline's
    matrix is then let go of, so the rows hold nothing of the channel beyond the copy.
    A timeline only grows at its end, so the rows read later are the bits they were when cut.
    """

    def __init__(self, source: np.ndarray, rows: np.ndarray | None = None) -> None:
        """``source``: the timeline's matrix with the ``rows`` to take from it, or (``rows``
        ``None``) the rows' vectors themselves."""
        self._source: np.ndarray | None = source if rows is not None else None
        self._rows = rows
        self._all: np.ndarray | None = source if rows is None else None
        self._lock = threading.Lock()

    def all(self) -> np.ndarray:
        """Every row, gathered on the first call (then kept; the source is dropped)."""
        with self._lock:
            if self._all is None:
                assert self._source is not None and self._rows is not None
                source = self._source
                self._all = np.ascontiguousarray(source[self._rows], dtype=np.float32)
                self._source = self._rows = None
                # The speaker's rows are spread over the whole channel: gathering them mapped
                # nearly all of a loaded file's pages into this process (mapped_rows.let_go).
                mapped_rows.let_go(source)
            return self._all

    def at(self, indices: Sequence[int] | np.ndarray) -> np.ndarray:
        """The rows at ``indices`` (positions among these rows), without gathering the rest.
        The few pages they touch are not let go here: the next reading's association lets go
        of the whole file (``association.recall``), and a madvise over it cost more than the
        gather (2 ms at 100,000 messages)."""
        with self._lock:
            if self._all is not None:
                return self._all[indices]
            assert self._source is not None and self._rows is not None
            return np.ascontiguousarray(
                self._source[self._rows[np.asarray(indices, dtype=np.int64)]], dtype=np.float32
            )

    def head(self, count: int) -> RowVectors:
        """The first ``count`` rows (the prefix's bits, as a shorter basis cut has them)."""
        with self._lock:
            if self._all is not None:
                return RowVectors(self._all[:count])
            assert self._source is not None and self._rows is not None
            return RowVectors(self._source, self._rows[:count])

    def __getstate__(self) -> dict[str, np.ndarray]:
        """Sent to another process as the gathered rows, never as the channel's whole matrix."""
        return {"rows": self.all()}

    def __setstate__(self, state: dict[str, np.ndarray]) -> None:
        self._source, self._rows, self._all = None, None, state["rows"]
        self._lock = threading.Lock()


class SpeakerRows:
    """Which timeline rows each speaker said, in channel order, for one timeline.

    A timeline only ever grows in place (any other change builds a new one), so the index catches
    up with appended messages instead of being rebuilt. The rows of the timeline it is made on
    are grouped by speaker in one pass, and a speaker's own array is cut from them when first
    asked for: a reading asks for a few speakers, and making every speaker's array was 40 ms of
    every start that opens a 100,000-message channel of 8,455 speakers.
    """

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self._rows: dict[str, array[int]] = {}  # int64 rows: a list's ints were 36 bytes each
        # The first catch-up's rows, by speaker code, until each speaker's are made into _rows.
        self._grouped = _Grouped(np.empty(0, dtype=np.int64), np.zeros(1, dtype=np.int64))
        # By speaker code, the position of their last message seen: their name as of it.
        self._last = np.empty(0, dtype=np.int64)
        self._said_by: dict[str, _Said] = {}
        self._seen = 0
        self._lock = threading.RLock()
        self.catch_up()

    def catch_up(self) -> None:
        """Index the messages appended to the timeline since the last call."""
        with self._lock:
            count = len(self.timeline.messages)
            if count == self._seen:
                return
            # From the timeline's columns, speaker by speaker: a pass message by message was a
            # tenth of a second at 100,000 messages, paid by every process opening the channel.
            timeline, seen = self.timeline, self._seen
            codes = timeline.speaker_codes[seen:count]
            speakers = int(codes.max()) + 1
            if speakers > len(self._last):
                self._last = np.concatenate(
                    [self._last, np.full(speakers - len(self._last), -1, dtype=np.int64)]
                )
            # each speaker's last message here (one may rename)
            np.maximum.at(self._last, codes, np.arange(seen, count, dtype=np.int64))
            first_row, end_row = timeline.row_positions.searchsorted([seen, count])
            row_codes = codes[timeline.row_positions[first_row:end_row] - seen]
            grouped = _Grouped(
                stable_order(row_codes).astype(np.int64) + first_row,
                np.concatenate([[0], np.cumsum(np.bincount(row_codes, minlength=speakers))]),
            )
            if seen == 0:
                self._grouped = grouped
            else:  # a few new messages: their speakers' rows made and extended now
                for code in np.flatnonzero(np.diff(grouped.bounds)).tolist():
                    speaker = timeline.speaker_ids[int(self._last[code])]
                    self._made(speaker).frombytes(grouped.of(code).tobytes())
            self._seen = count
            for speaker, said in self._said_by.items():
                said.extend(self.timeline, self._rows[speaker])

    def speakers(self) -> list[str]:
        """Ids of the speakers with a thought, in order of their first thought (a message
        without one is set aside, never synced, but a timeline may hold one)."""
        with self._lock:
            for position in self._last.tolist():
                self._made(self.timeline.speaker_ids[position])
            said = [speaker for speaker, rows in self._rows.items() if rows]
            return sorted(said, key=lambda speaker: self._rows[speaker][0])

    def name(self, speaker_id: str) -> str:
        with self._lock:
            code = self._code(speaker_id)
            if code is None:
                return speaker_id
            return self.timeline.speaker_names[int(self._last[code])]

    def _code(self, speaker_id: str) -> int | None:
        """The speaker's code, if they have a message this index has seen."""
        try:
            code = self.timeline.speaker_code(speaker_id)
        except KeyError:
            return None
        return code if code < len(self._last) and self._last[code] >= 0 else None

    def _made(self, speaker_id: str) -> array[int]:
        """The speaker's rows (empty for one not seen), cut from the first catch-up's on first
        use."""
        rows = self._rows.get(speaker_id)
        if rows is None:
            rows = self._rows[speaker_id] = array("q")
            code = self._code(speaker_id)
            if code is not None:
                rows.frombytes(self._grouped.of(code).tobytes())
        return rows

    def count(self, speaker_id: str, end_row: int | None = None) -> int:
        with self._lock:
            rows = self._made(speaker_id)
            return len(rows) if end_row is None else bisect.bisect_left(rows, end_row)

    def basis(self, channel: str, speaker_id: str, end_row: int | None = None) -> Basis | None:
        """The speaker's thoughts in rows below ``end_row`` (all of them if ``None``)."""
        with self._lock:
            return self.head(channel, speaker_id, self.count(speaker_id, end_row))

    def digest(self, speaker_id: str, count: int) -> str:
        """The fingerprint of the speaker's first ``count`` thoughts (``count`` ≥ 1)."""
        with self._lock:
            return self._said(speaker_id).digest(count)

    def head(self, channel: str, speaker_id: str, count: int) -> Basis | None:
        """The speaker's first ``count`` thoughts (``None`` for none).

        The speaker's keys, texts and running fingerprints are kept per index, so cutting a
        basis for one reading is slicing, not a walk over everything the speaker ever said.
        """
        with self._lock:
            count = min(count, self.count(speaker_id))
            if count <= 0:
                return None
            said = self._said(speaker_id)
            rows = np.asarray(self._made(speaker_id)[:count], dtype=np.int64)
            timeline = self.timeline
            positions = timeline.row_positions[rows]
            ids = timeline.messages.message_ids_at(positions)
            return Basis(
                channel=channel,
                speaker_id=speaker_id,
                speaker_name=self.name_at(speaker_id, count),
                keys=tuple(map(thought_key, ids, timeline.row_thought[rows].tolist())),
                texts=tuple(said.texts[:count]),
                message_ids=tuple(ids),
                positions=positions,
                rows=RowVectors(timeline.vectors, rows),
                digest=said.digest(count),
                speakers=timeline.speakers_seen(),
            )

    def name_at(self, speaker_id: str, count: int) -> str:
        """The speaker's name on the message of their ``count``-th thought (``count`` ≥ 1):
        a basis is named as of its last thought (a speaker may rename)."""
        with self._lock:
            position = int(self.timeline.row_positions[self._made(speaker_id)[count - 1]])
            return self.timeline.speaker_names[position]

    def _said(self, speaker_id: str) -> _Said:
        said = self._said_by.get(speaker_id)
        if said is None:
            said = _Said()
            said.extend(self.timeline, self._made(speaker_id))
            self._said_by[speaker_id] = said
        return said


class _Said:
    """Everything a speaker said in a timeline, with the fingerprint after each thought.

    The fingerprint after ``k`` thoughts is the SHA-256 of the first ``k`` entries: the same
    digest a single pass over those ``k`` thoughts gives. Held for every speaker a bot has read,
    for as long as it holds the channel, so it keeps only what the timeline's columns cannot
    give cheaply: each thought's text (decoded from the packed columns once: a reading needs all
    of a speaker's) and its digest as 32 bytes (not 64 hex characters). Positions, message ids
    and thought keys are cut from the columns when a basis is, sharing the columns' strings: a
    copy of them per speaker was a third of a held 100k channel's growth.
    """

    def __init__(self) -> None:
        self.texts: list[str] = []
        self._digests = bytearray()
        self._fingerprint = hashlib.sha256()

    def digest(self, count: int) -> str:
        """The fingerprint of the first ``count`` thoughts (``count`` ≥ 1), in hex."""
        return self._digests[(count - 1) * _DIGEST : count * _DIGEST].hex()

    def extend(self, timeline: Timeline, rows: Sequence[int]) -> None:
        """Take in the speaker's rows past those already taken."""
        new = np.asarray(rows[len(self.texts) :], dtype=np.int64)
        if not len(new):
            return
        row_positions = timeline.row_positions[new]
        # a message's rows are consecutive: its id, first row and texts are read once
        positions = np.unique(row_positions)
        first_rows, said = timeline.messages.thoughts_at(positions)
        ids = timeline.messages.message_ids_at(positions)
        of_message = np.searchsorted(positions, row_positions).tolist()
        fingerprint, digests, texts = self._fingerprint, self._digests, self.texts
        for row, message, index in zip(
            new.tolist(), of_message, timeline.row_thought[new].tolist(), strict=True
        ):
            text = said[message][row - first_rows[message]]
            texts.append(text)
            fingerprint.update(f"{thought_key(ids[message], index)}\x1f{text}\x1e".encode())
            digests += fingerprint.digest()


@dataclass(frozen=True)
class _Grouped:
    """Rows grouped by speaker code: code ``c``'s are ``rows[bounds[c]:bounds[c + 1]]``, in
    channel order."""

    rows: np.ndarray  # int64
    bounds: np.ndarray  # int64, one more than the codes

    def of(self, code: int) -> np.ndarray:
        if code + 1 >= len(self.bounds):
            return self.rows[:0]
        return self.rows[int(self.bounds[code]) : int(self.bounds[code + 1])]


_DIGEST = hashlib.sha256().digest_size
