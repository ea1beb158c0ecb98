"""The point-in-time read model of one channel: messages in channel order and their vectors.

Why it exists: the reading of message ``i`` may use only what came before ``i``. Keeping the
channel's thought vectors as one float32 matrix in channel order makes "everything before ``i``"
a prefix slice: searched exactly while the channel is small, and through cells fitted on a
prefix once it is large (:mod:`awai_engine.cells`). An approximate index over the whole channel
(Chroma's HNSW) would both need a brute-force filter for old messages and return neighbours that
depend on vectors added later, which would let later messages change the reading of an earlier
one.
"""

from __future__ import annotations

import bisect
import operator
import threading
from abc import abstractmethod
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain, pairwise, repeat
from typing import Any, TypeVar, overload

import numpy as np

from awai_engine import mapped_rows
from awai_engine.cells import CellIndex, similarities
from awai_engine.column_runs import Runs, gathered
from awai_engine.growth import grown_length
from awai_engine.lexical import LexicalIndex, terms
from awai_engine.settings import RecallIndexSettings
from awai_engine.values import MessageRef, Thought

_NO_ONE: frozenset[str] = frozenset()
_UNSET = object()
T = TypeVar("T")


@dataclass(frozen=True)
class TimelineMessage:
    """One stored message as the engine sees it; ``first_row`` indexes its thoughts' vectors."""

    ref: MessageRef
    text: str
    summary: str
    thoughts: tuple[Thought, ...]
    first_row: int
    addressees: tuple[str, ...] = ()

    @property
    def message_id(self) -> str:
        return self.ref.message_id

    @property
    def is_reply(self) -> bool:
        return self.ref.thread_root is not None and self.ref.thread_root != self.ref.message_id


class Spans(Sequence[T]):
    """A column whose items are spans of one buffer between consecutive bounds, each made only
    when asked for: a file's packed texts (:class:`storage.read_model_files.Packed`) and a
    message's rows (:class:`RowSlices`) are read so, a few dozen items a reading out of a
    hundred thousand."""

    def __init__(self, bounds: np.ndarray) -> None:
        self._bounds = bounds  # an array: a list of a hundred thousand ints is 4 MB a column

    def __len__(self) -> int:
        return len(self._bounds) - 1

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step == 1:
                return self._items(start, max(start, stop))
            return [self[i] for i in range(start, stop, step)]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):  # a Sequence's contract: iteration and ``in`` rely on it
            raise IndexError(f"{type(self).__name__} index out of range")
        start, end = self._bounds[index : index + 2].tolist()
        return self._item(start, end)

    @abstractmethod
    def _item(self, start: int, end: int) -> T:
        """The item spanning ``start``..``end`` of the buffer."""

    def gather(self, indexes: np.ndarray) -> list[T]:
        """The items at ``indexes`` (in range), in that order: one call for the messages of a
        speaker spread over the channel, not one per item."""
        bounds = self._bounds
        return [
            self._item(start, stop)
            for start, stop in zip(
                bounds[indexes].tolist(), bounds[indexes + 1].tolist(), strict=True
            )
        ]

    def _items(self, first: int, end: int) -> list[T]:
        """Items ``first``..``end`` - 1 (a kind of span that can make a run of items at once,
        faster than one by one, says so here)."""
        bounds = self._bounds[first : end + 1].tolist()
        return [self._item(start, stop) for start, stop in pairwise(bounds)]


class RowSlices(Spans[list[int]]):
    """Per message, its rows' values of a column kept by row (a message's rows are consecutive,
    from its first row to the next message's).

    Why: a message's thought indexes are its rows' ``row_thought``; held as a list per message
    they were a hundred thousand objects at 100k messages, each walked by every full pass of the
    garbage collector (tens of milliseconds landing in a reading)."""

    def __init__(self, values: np.ndarray, first_rows: np.ndarray) -> None:
        super().__init__(np.append(first_rows, len(values)))
        self._values = values

    def _item(self, start: int, end: int) -> list[int]:
        return self._values[start:end].tolist()


@dataclass(frozen=True)
class MessageColumns:
    """A channel's messages as columns (what a persisted read model holds), by position.

    Building a hundred thousand frozen values takes longer than reading them from disk, and a
    reading looks at a few dozen messages: :class:`MessageList` builds each on first use.
    """

    message_ids: list[str]
    speaker_ids: list[str]
    speaker_names: list[str]
    ts: np.ndarray
    thread_roots: list[str | None]
    scopes: list[str]
    # Read per message when it is built: a file may hold them packed, decoded on first use.
    texts: Sequence[str]
    summaries: Sequence[str]
    addressees: Sequence[list[str]]
    thought_texts: Sequence[list[str]]
    thought_indexes: Sequence[list[int]]  # restored: a view of the rows' own (RowSlices)
    fallbacks: list[bool]
    first_rows: np.ndarray

    def __len__(self) -> int:
        return len(self.message_ids)

    @classmethod
    def joined(cls, parts: Sequence[MessageColumns]) -> MessageColumns:
        """``parts``' messages one after another, as one set of columns (each part's first rows
        counted from the timeline's first row). The lists and arrays are joined (a pass over
        pointers and numbers); the columns read only when a message is built, which a file holds
        packed, are read where they are (:class:`~awai_engine.column_runs.Runs`): joining them
        would decode every text of the channel."""

        def listed(name: str) -> list[Any]:
            return list(chain.from_iterable(getattr(part, name) for part in parts))

        def runs(name: str) -> Runs[Any]:
            return Runs([getattr(part, name) for part in parts])

        return cls(
            message_ids=listed("message_ids"),
            speaker_ids=listed("speaker_ids"),
            speaker_names=listed("speaker_names"),
            ts=np.concatenate([part.ts for part in parts]),
            thread_roots=listed("thread_roots"),
            scopes=listed("scopes"),
            texts=runs("texts"),
            summaries=runs("summaries"),
            addressees=runs("addressees"),
            thought_texts=runs("thought_texts"),
            thought_indexes=runs("thought_indexes"),
            fallbacks=listed("fallbacks"),
            first_rows=np.concatenate([part.first_rows for part in parts]),
        )

    def message(self, position: int) -> TimelineMessage:
        fallback = self.fallbacks[position]
        return TimelineMessage(
            ref=MessageRef(
                message_id=self.message_ids[position],
                speaker_id=self.speaker_ids[position],
                speaker_name=self.speaker_names[position],
                ts=float(self.ts[position]),
                position=position,
                thread_root=self.thread_roots[position],
                scope=self.scopes[position],
            ),
            text=self.texts[position],
            summary=self.summaries[position],
            thoughts=tuple(
                Thought(index=index, text=text, fallback=fallback)
                for index, text in zip(
                    self.thought_indexes[position], self.thought_texts[position], strict=True
                )
            ),
            first_row=int(self.first_rows[position]),
            addressees=tuple(self.addressees[position]),
        )


class MessageList(Sequence[TimelineMessage]):
    """A timeline's messages by position; those restored from columns are built when first read."""

    def __init__(self, columns: MessageColumns | None = None) -> None:
        self._columns = columns
        self._items: list[TimelineMessage | None] = [None] * len(columns) if columns else []
        # Positions of the restored messages built so far, oldest first: past BUILT_KEPT the
        # oldest is dropped back to its columns (deque appends and pops are atomic, so readers
        # on other threads need no lock; two building one message at once only drop it early).
        self._built: deque[int] = deque()

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> TimelineMessage: ...

    @overload
    def __getitem__(self, index: slice) -> list[TimelineMessage]: ...

    def __getitem__(self, index: int | slice) -> TimelineMessage | list[TimelineMessage]:
        if isinstance(index, slice):
            return [self._at(i) for i in range(*index.indices(len(self._items)))]
        if index < 0:
            index += len(self._items)
        if not 0 <= index < len(self._items):
            raise IndexError("timeline position out of range")
        return self._at(index)

    def __iter__(self) -> Iterator[TimelineMessage]:
        return (self._at(i) for i in range(len(self._items)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    @property
    def built(self) -> int:
        """How many messages exist as objects (restored ones not read yet are only columns)."""
        return len(self._items) - self._items.count(None)

    @property
    def restored(self) -> int:
        """How many messages came from columns (built or not, the columns stay held)."""
        return len(self._columns) if self._columns else 0

    def append(self, message: TimelineMessage) -> None:
        self._items.append(message)

    def extend(self, columns: MessageColumns) -> None:
        """Take ``columns``' messages (their first rows counted from the timeline's first) as the
        next positions, held as columns. Those appended as objects since the columns were
        restored become columns too, and their objects are let go: each is built again from
        its columns when read, as a restored one is (:data:`BUILT_KEPT` bounds them)."""
        restored = self.restored
        held = [] if self._columns is None else [self._columns]
        if len(self._items) > restored:
            held.append(self.columns(restored))
        # The columns first: a reader that finds a position empty builds it from them.
        self._columns = MessageColumns.joined([*held, columns])
        appended = len(self._items)
        self._items.extend([None] * len(columns))
        self._items[restored:appended] = [None] * (appended - restored)

    def addressees(self, position: int) -> Sequence[str]:
        """The names the message at ``position`` addresses, without building the message."""
        message = self._items[position]
        if message is not None:
            return message.addressees
        assert self._columns is not None
        return self._columns.addressees[position]

    def addressees_between(self, start: int, end: int) -> list[Sequence[str]]:
        """:meth:`addressees` of the messages at ``start``..``end`` - 1, as one list: those
        restored from columns read as one run of the column (naming the lines back to a far
        recalled one reads tens of thousands at once)."""
        restored = min(end, len(self._columns) if self._columns else 0)
        head: list[Sequence[str]] = []
        if start < restored:
            assert self._columns is not None
            head = list(self._columns.addressees[start:restored])
        return head + [
            self._built_at(position).addressees for position in range(max(start, restored), end)
        ]

    def columns(self, start: int = 0) -> MessageColumns:
        """The messages from position ``start`` on as columns, building none: the restored ones
        are the columns they came from, and those appended since were built when appended."""
        source = self._columns
        restored = len(source) if source else 0
        tail = self._items[max(start, restored) :]
        assert all(message is not None for message in tail)
        added: list[TimelineMessage] = tail  # type: ignore[assignment]

        def column(name: str, value: Callable[[TimelineMessage], Any]) -> list[Any]:
            head = list(getattr(source, name)[start:restored]) if start < restored else []
            return head + [value(m) for m in added]

        def array(name: str, value: Callable[[TimelineMessage], Any], dtype: type) -> np.ndarray:
            head = getattr(source, name)[start:restored] if start < restored else []
            return np.concatenate(
                [np.asarray(head, dtype=dtype), np.array([value(m) for m in added], dtype=dtype)]
            )

        return MessageColumns(
            message_ids=column("message_ids", lambda m: m.message_id),
            speaker_ids=column("speaker_ids", lambda m: m.ref.speaker_id),
            speaker_names=column("speaker_names", lambda m: m.ref.speaker_name),
            ts=array("ts", lambda m: m.ref.ts, np.float64),
            thread_roots=column("thread_roots", lambda m: m.ref.thread_root),
            scopes=column("scopes", lambda m: m.ref.scope),
            texts=column("texts", lambda m: m.text),
            summaries=column("summaries", lambda m: m.summary),
            addressees=column("addressees", lambda m: list(m.addressees)),
            thought_texts=column("thought_texts", lambda m: [t.text for t in m.thoughts]),
            thought_indexes=column("thought_indexes", lambda m: [t.index for t in m.thoughts]),
            fallbacks=column("fallbacks", lambda m: any(t.fallback for t in m.thoughts)),
            first_rows=array("first_rows", lambda m: m.first_row, np.int64),
        )

    def peek(self, position: int) -> TimelineMessage:
        """The message at ``position``, built for the caller alone if it is only columns yet:
        a pass over the whole channel (re-clustering indexes every speaker's thoughts) would
        otherwise keep every message as an object, several times what its columns take."""
        message = self._items[position]
        if message is None:
            assert self._columns is not None
            return self._columns.message(position)
        return message

    def thoughts_at(self, positions: np.ndarray) -> tuple[list[int], list[Sequence[str]]]:
        """The first rows and thought texts of the messages at ``positions`` (ascending),
        building nothing, the restored ones read from their columns in one call: a speaker's
        basis takes only these (and its rows' thought indexes, from the timeline's
        ``row_thought``), and building each of a long speaker's messages for them, or reading
        them one by one, was most of a reading's time at 100k messages."""
        columns = self._columns
        restored = len(columns) if columns is not None else 0
        cut = int(np.searchsorted(positions, restored))
        head, tail = positions[:cut], positions[cut:].tolist()
        first_rows: list[int] = []
        texts: list[Sequence[str]] = []
        if len(head):
            assert columns is not None
            first_rows = columns.first_rows[head].tolist()
            texts = gathered(columns.thought_texts, head)
        for position in tail:
            message = self._built_at(position)
            first_rows.append(message.first_row)
            texts.append([thought.text for thought in message.thoughts])
        return first_rows, texts

    def message_ids_at(self, positions: np.ndarray) -> list[str]:
        """The ids of the messages at ``positions``, building nothing: the column's own strings
        (a speaker's basis names every thought's message, and copies of the ids per speaker
        grew a bot holding a large channel)."""
        restored = self._columns.message_ids if self._columns is not None else []
        return [
            restored[position] if position < len(restored) else self._built_at(position).message_id
            for position in positions.tolist()
        ]

    def _built_at(self, position: int) -> TimelineMessage:
        """The message at ``position``, appended after the columns were restored: always built."""
        message = self._items[position]
        assert message is not None
        return message

    def _at(self, position: int) -> TimelineMessage:
        message = self._items[position]
        if message is None:
            assert self._columns is not None
            message = self._items[position] = self._columns.message(position)
            self._built.append(position)
            while len(self._built) > BUILT_KEPT:
                try:
                    self._items[self._built.popleft()] = None
                except IndexError:  # another thread emptied it meanwhile
                    break
        return message


BUILT_KEPT = 4096
"""Restored messages a timeline keeps built as objects (about 2.4 KB each, 10 MB in all); the
rest stay columns (0.8 KB). Why a bound: each reading builds the few hundred messages it looks
at, and a bot holding a 100,000-message channel kept every one it had ever built, growing by
about 2.6 MiB a reading (442 MiB after 41 readings against 337 after one). Building one again
from its columns takes microseconds, and the object built is equal to the one dropped. 4,096
holds the messages of a dozen readings or more; 8,192 held 20 MB of a 400 MiB goal."""


@dataclass
class Timeline:
    """Append-only view of a channel; a change other than an append builds a new one.

    Readers slice rows before a position, and appends only add rows after the last one, so a
    reader needs no lock: what it reads is never modified underneath it.
    """

    dimension: int
    revision: int = 0
    index: RecallIndexSettings = field(default_factory=RecallIndexSettings)
    messages: MessageList = field(default_factory=MessageList)
    # Columns of every message by position, kept beside ``messages`` so that passes over the
    # whole channel (who spoke, which scopes) need not build each message.
    speaker_ids: list[str] = field(default_factory=list)
    speaker_names: list[str] = field(default_factory=list)
    scopes: list[str] = field(default_factory=list)
    position_of: dict[str, int] = field(default_factory=dict)
    top_level: list[int] = field(default_factory=list)
    threads: dict[str, list[int]] = field(default_factory=dict)
    _vectors: np.ndarray = field(default_factory=lambda: np.empty((0, 0), dtype=np.float32))
    _row_positions: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    _row_thought: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    _ts: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.float64))
    rows: int = 0
    _cells: CellIndex = field(init=False)
    lexicon: LexicalIndex = field(init=False)
    # name term → (first position, speaker id, all terms of the name) of each speaker
    _names: dict[str, list[tuple[int, str, frozenset[str]]]] = field(default_factory=dict)
    _speakers: dict[str, tuple[int, str]] = field(default_factory=dict)  # id → (code, name)
    _first_said: dict[str, int] = field(default_factory=dict)  # id → their first position
    _speaker_of: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    _speakers_seen: tuple[tuple[str, int], ...] = field(default=(), compare=False, repr=False)
    # position → the case-folded names its message addresses, filled on first use (see
    # addressed_by): a message's own column, so it never changes once written.
    _addressed: list[frozenset[str] | None] = field(default_factory=list, compare=False, repr=False)
    # The same as small integers (see names_between): case-folded name → code, and by position
    # the code of the speaker's name and those of the names addressed, filled on first use.
    _name_codes: dict[str, int] = field(default_factory=dict, compare=False, repr=False)
    # (-1: not coded yet; arrays with room to grow; a row of addressed codes is padded with -1)
    _speaker_name_code: np.ndarray = field(
        default_factory=lambda: np.full(0, -1, dtype=np.int64), compare=False, repr=False
    )
    _addressed_codes: np.ndarray = field(
        default_factory=lambda: np.full((0, 1), -1, dtype=np.int64), compare=False, repr=False
    )
    _coding: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)
    # name → by position, a value computed from that message alone (see derived)
    _derived: dict[str, list[Any]] = field(default_factory=dict, compare=False, repr=False)
    # name → by position, numbers computed from that message alone (NaN: not yet; see
    # derived_numbers)
    _derived_numbers: dict[str, np.ndarray] = field(default_factory=dict, compare=False, repr=False)
    # step → rows 0, step, 2·step… copied contiguous (see every_kth_row); rows never change.
    _strided: dict[int, np.ndarray] = field(default_factory=dict, compare=False, repr=False)
    # Set once by whoever owns the timeline (the read model, or the views of a channel) when it
    # lets go of it: no cache may keep a retired timeline, which may hold removed words (see
    # :meth:`awai_engine.engine.Engine.drop_removed_elsewhere`). It is never cleared.
    retired: bool = field(default=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._cells = CellIndex(self.index)
        self.lexicon = LexicalIndex()
        if self._vectors.shape[1:] != (self.dimension,):
            self._vectors = np.empty((0, self.dimension), dtype=np.float32)

    def __getstate__(self) -> dict[str, Any]:
        """The timeline's fields without its lock, which cannot be copied: a copy (the
        association bench appends questions to a copy of a conversation's timeline) gets a lock
        of its own (:meth:`__setstate__`)."""
        state = self.__dict__.copy()
        del state["_coding"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._coding = threading.Lock()

    @property
    def vectors(self) -> np.ndarray:
        return self._vectors[: self.rows]

    @property
    def row_positions(self) -> np.ndarray:
        """Position (channel order) of the message each vector row belongs to."""
        return self._row_positions[: self.rows]

    @property
    def row_thought(self) -> np.ndarray:
        """Index of the thought within its message, for each vector row."""
        return self._row_thought[: self.rows]

    @property
    def timestamps(self) -> np.ndarray:
        """``ts`` of each message, by position."""
        return self._ts[: len(self.messages)]

    @property
    def speaker_codes(self) -> np.ndarray:
        """A small integer per speaker (in order of first message), for each message by
        position: who said what, as an array."""
        return self._speaker_of[: len(self.messages)]

    def append(
        self,
        ref: MessageRef,
        text: str,
        summary: str,
        thoughts: tuple[Thought, ...],
        vectors: np.ndarray,
        addressees: tuple[str, ...] = (),
    ) -> None:
        """Add the newest message; ``ref.position`` must be the next position."""
        position = len(self.messages)
        if ref.position != position:
            raise ValueError(f"append at position {ref.position}, expected {position}")
        if len(thoughts) != len(vectors):
            raise ValueError("one vector per thought")
        self._reserve(self.rows + len(vectors), position + 1)
        end = self.rows + len(vectors)
        self._vectors[self.rows : end] = vectors
        self._row_positions[self.rows : end] = position
        self._row_thought[self.rows : end] = [thought.index for thought in thoughts]
        self._ts[position] = ref.ts
        self._speaker_of[position] = self._speaker_seen(position, ref.speaker_id, ref.speaker_name)
        message = TimelineMessage(ref, text, summary, thoughts, self.rows, addressees)
        self.messages.append(message)
        self.speaker_ids.append(ref.speaker_id)
        self.speaker_names.append(ref.speaker_name)
        self.scopes.append(ref.scope)
        self.position_of[ref.message_id] = position
        if message.is_reply:
            self.threads.setdefault(ref.thread_root or "", []).append(position)
        else:
            self.top_level.append(position)
        self.rows = end
        self._file_rows()
        self.lexicon.add(position, text)

    def extend(self, columns: MessageColumns, vectors: np.ndarray) -> None:
        """Add ``columns``' messages as the newest, with their thoughts' ``vectors`` (rows in
        message order, each message's first at ``columns.first_rows``, counted from the first
        of ``vectors``), all at once: equal to appending each in turn, its cells and word index
        included, and held as columns, as a loaded file holds its messages.

        Why: catching up many rows appended each as a value of about 5.5 KB, its rows filed and
        its terms indexed a message at a time. An edit of the middle message of a
        100,000-message channel reads the 50,000 after it again: taking them in so was 4.8 s of
        the 10.9 s the reading after the edit took, and is 1.9 s extended. Taken so, they cost
        what :meth:`built` pays for as many: rows, speakers and lines written as columns, the
        cells taking every row in one call (which fits each level at the same row count as
        appends do), the terms counted once."""
        count, start, first_row = len(columns), len(self.messages), self.rows
        first_rows = np.asarray(columns.first_rows, dtype=np.int64)
        sizes = np.fromiter(map(len, columns.thought_indexes), dtype=np.int64, count=count)
        if int(sizes.sum()) != len(vectors) or not np.array_equal(
            first_rows, np.cumsum(sizes) - sizes
        ):
            raise ValueError("one vector per thought, each message's rows after the last one's")
        if not count:
            return
        end = first_row + len(vectors)
        self._reserve(end, start + count)
        self._vectors[first_row:end] = vectors
        self._row_positions[first_row:end] = np.repeat(
            np.arange(start, start + count, dtype=np.int64), sizes
        )
        row_thought = np.fromiter(
            chain.from_iterable(columns.thought_indexes), dtype=np.int64, count=len(vectors)
        )
        self._row_thought[first_row:end] = row_thought
        self._ts[start : start + count] = columns.ts
        self._speaker_of[start : start + count] = [
            self._speaker_seen(position, speaker_id, name)
            for position, speaker_id, name in zip(
                range(start, start + count), columns.speaker_ids, columns.speaker_names, strict=True
            )
        ]
        # Each message's thought indexes are its rows' (as :meth:`built` holds them), not a
        # list of its own.
        self.messages.extend(
            replace(
                columns,
                first_rows=first_rows + first_row,
                thought_indexes=RowSlices(row_thought, first_rows),
            )
        )
        self.speaker_ids.extend(columns.speaker_ids)
        self.speaker_names.extend(columns.speaker_names)
        self.scopes.extend(columns.scopes)
        self.position_of.update(zip(columns.message_ids, range(start, start + count), strict=True))
        self._take_lines(start, columns.message_ids, columns.thread_roots)
        self.rows = end
        self._file_rows()
        self.lexicon.extend(columns.texts)

    def _file_rows(self) -> None:
        """File the rows taken in since in the cells."""
        levels = len(self._cells.levels)
        self._cells.add(self._vectors, self.rows)
        if len(self._cells.levels) != levels:
            # A level's fit read every row so far: the file's pages it mapped in are let go
            # (an ingest of 30,000 lines kept 43 MiB of them at the fit at 32,768 rows).
            mapped_rows.let_go(self._vectors)

    def _take_lines(
        self, start: int, message_ids: Sequence[str], thread_roots: Sequence[str | None]
    ) -> None:
        """Put the messages from position ``start`` (their ids and thread roots) in their lines:
        a reply in its thread, any other at the top level.

        Column-wise, not message by message: a Python pass over a hundred thousand messages
        was most of the time ``awai read FILE`` spends opening a large stored channel."""
        count = len(thread_roots)
        rooted = np.fromiter(
            map(operator.is_not, thread_roots, repeat(None)), dtype=bool, count=count
        )
        reply = np.zeros(count, dtype=bool)
        for at in np.flatnonzero(rooted).tolist():
            root = thread_roots[at]
            if root is not None and root != message_ids[at]:
                reply[at] = True
                self.threads.setdefault(root, []).append(start + at)
        self.top_level.extend((np.flatnonzero(~reply) + start).tolist())

    def _speaker_seen(self, position: int, speaker_id: str, speaker_name: str) -> int:
        """Register a speaker at their first message (code, name and its terms); their code."""
        if speaker_id not in self._speakers:
            self._speakers[speaker_id] = (len(self._speakers), speaker_name)
            self._first_said[speaker_id] = position
            name = frozenset(terms(speaker_name))
            for word in name:
                self._names.setdefault(word, []).append((position, speaker_id, name))
        return self._speakers[speaker_id][0]

    def addressed_by(self, position: int) -> frozenset[str]:
        """The names (case-folded) the message at ``position`` addresses, as the adapter parsed
        them: a column computed once per message, on first use.

        Why: reading one message looks at who addressed whom over the lines before it (the reply
        target's turn-taking, the speaker's exchange), a couple of hundred lines per reading;
        folding their names each time, or building each message to get at them, cost more than
        the rest of the reply-target scorer. It depends on that message alone, so it is causal.
        """
        folded = self._addressed
        if position >= len(folded):
            folded.extend([None] * (len(self.messages) - len(folded)))
        found = folded[position]
        if found is None:
            names = self.messages.addressees(position)
            found = folded[position] = (
                frozenset(name.casefold() for name in names) if names else _NO_ONE
            )
        return found

    def addressed_between(self, start: int, end: int) -> list[frozenset[str]]:
        """:meth:`addressed_by` of the messages at ``start``..``end`` - 1, as one list: a pass
        over the lines before a message (its conversation, its exchange, its cues) reads this
        once instead of calling per line."""
        folded = self._addressed
        if len(folded) < end or None in folded[start:end]:
            for position in range(start, end):
                self.addressed_by(position)
        return self._addressed[start:end]  # type: ignore[return-value]  # all filled above

    def name_code(self, name: str) -> int:
        """The code of a case-folded name in :meth:`names_between` (-1: no message so far was
        said by or to that name)."""
        return self._name_codes.get(name, -1)

    def names_between(self, start: int, end: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Who said, and who was addressed by, each message at positions ``start``..``end`` - 1,
        as codes of case-folded names (:meth:`name_code`): the speakers' codes by position, and
        every (position, addressed name's code) pair, positions ascending.

        Why codes: turn-taking over a couple of hundred lines (who spoke since a line, who was
        addressed since) is then a few array operations instead of a pass of string sets. Each
        message's codes are computed once and depend on it alone (a code is a number for a name,
        given in order of first use), so this stays causal.
        """
        said_by = self._speaker_name_code
        if len(said_by) < end or (said_by[start:end] < 0).any():
            self._code_names(start, end)
        # Read after coding: a row once coded never changes, and a grown array keeps the rows.
        speakers = self._speaker_name_code[start:end].copy()
        addressed = self._addressed_codes[start:end]
        rows, slots = np.nonzero(addressed >= 0)
        return speakers, rows + start, addressed[rows, slots]

    def _code_names(self, start: int, end: int) -> None:
        """Code the lines at ``start``..``end`` - 1 not coded yet, a run of columns at a time.

        Why by runs: the lines back to a far recalled one are tens of thousands the first time
        a process meets them; coding them one by one (building each line's set of names) was
        30-70 ms landing in single readings at 100,000 messages. Most lines address no one, so
        only those that do are looked at one by one."""
        with self._coding:  # readings run in several threads; a new name gets one code
            said_by, addressed = self._speaker_name_code, self._addressed_codes
            if len(said_by) < len(self.messages):
                room = grown_length(len(self.messages), len(said_by))
                said_by = np.concatenate((said_by, np.full(room - len(said_by), -1)))
                grown = np.full((room, addressed.shape[1]), -1, dtype=np.int64)
                grown[: len(addressed)] = addressed
                addressed = grown
            todo = np.flatnonzero(said_by[start:end] < 0) + start
            if not len(todo):
                return
            first, last = int(todo[0]), int(todo[-1]) + 1
            codes = self._name_codes
            named = [
                (position, sorted({name.casefold() for name in names}))
                for position, names in zip(
                    range(first, last), self.messages.addressees_between(first, last), strict=True
                )
                if names and said_by[position] < 0
            ]
            widest = max((len(names) for _, names in named), default=0)
            if widest > addressed.shape[1]:
                wider = np.full((len(addressed), widest), -1, dtype=np.int64)
                wider[:, : addressed.shape[1]] = addressed
                # Published before any row is coded into it: a reader that sees a row coded in
                # ``said_by`` (written last) must find its names in the array it reads, not in
                # a copy only this thread holds yet.
                self._addressed_codes = addressed = wider
            for position, names in named:
                addressed[position, : len(names)] = [
                    codes.setdefault(name, len(codes)) for name in names
                ]
            spoken = self.speaker_names[first:last]
            said_code = {
                name: codes.setdefault(name.casefold(), len(codes)) for name in set(spoken)
            }
            coded = np.fromiter(
                map(said_code.__getitem__, spoken), dtype=np.int64, count=len(spoken)
            )
            said_by[todo] = coded[todo - first]  # coded: last
            self._addressed_codes, self._speaker_name_code = addressed, said_by

    def speaker_name(self, speaker_id: str) -> str:
        """The display name a speaker had at their first message."""
        return self._speakers[speaker_id][1]

    def speakers_seen(self) -> tuple[tuple[str, int], ...]:
        """Every speaker so far: the name they had at their first message, and its position.
        The same tuple until a new speaker comes: every basis cut carries it, and naming keeps
        what it found of it (:func:`awai_engine.schemas.naming.known_names`)."""
        seen = self._speakers_seen
        if len(seen) != len(self._speakers):
            seen = self._speakers_seen = tuple(
                (name, self._first_said[speaker_id])
                for speaker_id, (_, name) in self._speakers.items()
            )
        return seen

    def first_said(self, speaker_id: str) -> int:
        """The position of the speaker's first message."""
        return self._first_said[speaker_id]

    def derived(
        self, name: str, positions: Sequence[int], compute: Callable[[TimelineMessage], T]
    ) -> list[T]:
        """``compute`` of the messages at ``positions``, each computed once per message and kept
        in a column called ``name``.

        Why: a reading scores some fifty earlier lines, and each line is scored again by the
        next fifty readings; what depends on that line alone (its words, whether it asks) is
        worth computing once. A value depends on its message only, so this stays causal.
        """
        column = self._derived.setdefault(name, [])
        if len(column) < len(self.messages):
            column.extend([_UNSET] * (len(self.messages) - len(column)))
        values = []
        for position in positions:
            value = column[position]
            if value is _UNSET:
                value = column[position] = compute(self.messages[position])
            values.append(value)
        return values

    def derived_numbers(
        self,
        name: str,
        positions: np.ndarray,
        compute: Callable[[TimelineMessage], tuple[float, ...]],
        width: int,
    ) -> np.ndarray:
        """:meth:`derived` for numbers: ``compute`` (``width`` numbers per message) of the
        messages at ``positions``, as rows of one array, each computed once per message.

        Why an array: a reading reads these for its fifty to two hundred candidates, and one
        gather out of an array costs less than collecting and converting as many Python values.
        Causal for the same reason as :meth:`derived`. Readings run in several threads: a row is
        written whole under the interpreter lock, and a write lost to an array grown meanwhile
        is only computed again.
        """
        column = self._derived_numbers.get(name)
        if column is None or len(column) < len(self.messages):
            kept = 0 if column is None else len(column)
            grown = np.full((grown_length(len(self.messages), kept), width), np.nan)
            if column is not None:
                grown[:kept] = column
            self._derived_numbers[name] = column = grown
        values = column[positions]
        for k in np.flatnonzero(np.isnan(values[:, -1])).tolist():
            at = int(positions[k])
            values[k] = column[at] = compute(self.messages[at])
        return values

    def speaker_code(self, speaker_id: str) -> int:
        """The speaker's code in :attr:`speaker_codes`."""
        return self._speakers[speaker_id][0]

    def named_speakers(self, position: int) -> frozenset[str]:
        """Ids of the other speakers whose whole name (as index terms) the message at
        ``position`` writes and who spoke before it: "what did Caroline say about…", "bob: …".
        A message that names someone is likely about what they said."""
        message = self.messages[position]
        words = set(terms(message.text))
        return frozenset(
            speaker_id
            for word in words
            for first, speaker_id, name in self._names.get(word, ())
            if first < position and name <= words and speaker_id != message.ref.speaker_id
        )

    def search(
        self, query_rows: np.ndarray, end_row: int, probes: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Rows before ``end_row`` worth comparing with the stored thoughts ``query_rows``, and
        their similarities.

        While ``end_row`` is within the first ``exact_rows``, every earlier row is returned. Past
        that, the ``recent_rows`` rows just before ``end_row`` are returned (near the message
        θ(d) is low, so near rows are compared exactly) and older rows come from about
        ``probes`` cells nearest to the queries (far back only close meanings count, and close
        meanings share cells; see :mod:`awai_engine.cells`). Every piece of the index was fitted
        on rows before ``end_row``, so the answer depends only on the prefix.
        Returns ``(rows ascending, similarities of shape (len(rows), len(query_rows)))``.
        """
        queries = np.take(self._vectors, query_rows, axis=0)
        if not self._cells.usable(end_row):
            return np.arange(end_row), similarities(self._vectors[:end_row], queries)
        recent = max(0, end_row - self.index.rules.recent_rows)
        older = self._cells.nearest_rows(
            queries,
            query_rows,
            end_row,
            recent,
            self.index.rules.probes if probes is None else probes,
        )
        similarity = np.concatenate(
            [
                similarities(np.take(self._vectors, older, axis=0), queries),
                similarities(self._vectors[recent:end_row], queries),
            ]
        )
        return np.concatenate([older, np.arange(recent, end_row)]), similarity

    @classmethod
    def built(
        cls,
        revision: int,
        index: RecallIndexSettings,
        columns: MessageColumns,
        vectors: np.ndarray,
    ) -> Timeline:
        """Every message at once, from ``columns`` and the vectors of their thoughts (rows in
        message order, each message's first at ``columns.first_rows``): equal to the timeline
        appending each message in turn builds, its cells and word index included.

        Why: a channel rebuilt whole (a start without a current file, any change but an
        append) appended a hundred thousand messages one by one, each a value of about 5.5 KB
        (550 MB) until the timeline was written out and loaded back, and 10 s of the 25 s an
        edit in the 100k channel cost the next reading. Built so, it holds columns as a loaded
        file does, its cells filed as appends file them (:meth:`CellIndex.add` over every row
        at once fits each level at the same row counts) and its word index counted once."""
        rows = len(vectors)
        first_rows = np.asarray(columns.first_rows, dtype=np.int64)
        row_positions = np.repeat(
            np.arange(len(columns), dtype=np.int64), np.diff(np.append(first_rows, rows))
        )
        row_thought = np.fromiter(
            chain.from_iterable(columns.thought_indexes), dtype=np.int64, count=rows
        )
        cells = CellIndex(index)
        cells.add(vectors, rows)
        return cls.restored(
            revision,
            index,
            replace(columns, thought_indexes=RowSlices(row_thought, first_rows)),
            vectors,
            row_positions,
            row_thought,
            cells,
            LexicalIndex.built(columns.texts),
        )

    @classmethod
    def restored(
        cls,
        revision: int,
        index: RecallIndexSettings,
        columns: MessageColumns,
        vectors: np.ndarray,
        row_positions: np.ndarray,
        row_thought: np.ndarray,
        cells: CellIndex,
        lexicon: LexicalIndex,
    ) -> Timeline:
        """A timeline from its persisted parts, equal to the one appending every message builds.

        ``vectors`` may be a read-only memory map of a file: appends go to memory mapped after
        it (:func:`~awai_engine.mapped_rows.grown`), so its rows are neither copied nor written.
        """
        timeline = cls(dimension=vectors.shape[1], revision=revision, index=index)
        count = len(columns)
        timeline.messages = MessageList(columns)
        timeline.speaker_ids = list(columns.speaker_ids)
        timeline.speaker_names = list(columns.speaker_names)
        timeline.scopes = list(columns.scopes)
        timeline.position_of = dict(zip(columns.message_ids, range(count), strict=True))
        timeline._take_lines(0, columns.message_ids, columns.thread_roots)
        timeline._vectors = vectors
        timeline._row_positions = row_positions
        timeline._row_thought = row_thought
        timeline._ts = np.array(columns.ts, dtype=np.float64)
        # Speakers get their codes in order of first message, as appending them one by one does.
        codes = {speaker: code for code, speaker in enumerate(dict.fromkeys(columns.speaker_ids))}
        timeline._speaker_of = np.fromiter(
            map(codes.__getitem__, columns.speaker_ids), dtype=np.int64, count=count
        )
        # A new speaker's code is one more than every code before it: each first message is
        # where the running maximum of the codes steps up.
        reached = np.maximum.accumulate(timeline._speaker_of)
        first = np.flatnonzero(np.diff(reached, prepend=-1))
        for position in first.tolist():  # ascending codes: ascending first positions
            timeline._speaker_seen(
                position, columns.speaker_ids[position], columns.speaker_names[position]
            )
        timeline.rows = len(vectors)
        timeline._cells = cells
        timeline.lexicon = lexicon
        return timeline

    @property
    def cells(self) -> CellIndex:
        return self._cells

    def array_bytes(self) -> int:
        """Bytes of every array the timeline holds, its cells' and word index's included, as
        allocated (room for later appends counts: it is memory too)."""
        return (
            sum(a.nbytes for a in (self._vectors, self._row_positions, self._row_thought, self._ts))
            + self._cells.array_bytes()
            + self.lexicon.array_bytes()
        )

    def _reserve(self, rows: int, messages: int) -> None:
        if rows > len(self._vectors):
            # Grown by a quarter, not doubled: a large channel's vectors are most of its memory.
            capacity = grown_length(rows, len(self._vectors))
            # A vectors file's rows stay mapped from it: only those appended since are copied.
            vectors = mapped_rows.grown(self._vectors, self.rows, capacity)
            positions = np.empty(capacity, dtype=np.int64)
            positions[: self.rows] = self._row_positions[: self.rows]
            thought = np.empty(capacity, dtype=np.int64)
            thought[: self.rows] = self._row_thought[: self.rows]
            self._vectors, self._row_positions, self._row_thought = vectors, positions, thought
        if messages > len(self._ts):
            ts = np.empty(grown_length(messages, len(self._ts)), np.float64)
            ts[: len(self.messages)] = self._ts[: len(self.messages)]
            speaker_of = np.empty(len(ts), dtype=np.int64)
            speaker_of[: len(self.messages)] = self._speaker_of[: len(self.messages)]
            self._ts, self._speaker_of = ts, speaker_of

    def line_before(self, position: int, last: int) -> tuple[str, list[int]]:
        """The line of the message at ``position`` (its thread, or the top level): the positions
        of at most ``last`` messages of it just before, oldest first (a slice, not the whole line,
        so the cost does not grow with the channel)."""
        message = self.messages[position]
        if message.is_reply:
            root = message.ref.thread_root or ""
            replies = self.threads.get(root, [])
            end = bisect.bisect_left(replies, position)
            earlier = replies[max(0, end - last) : end]
            root_position = self.position_of.get(root)
            if root_position is not None and root_position < position and end < last:
                earlier = [root_position, *earlier]
            return "thread", earlier
        end = bisect.bisect_left(self.top_level, position)
        return "top-level", self.top_level[max(0, end - last) : end]

    def every_kth_row(self, step: int, end_row: int) -> np.ndarray:
        """Vector rows 0, step, 2·step, … before ``end_row``, as one contiguous array.

        Why: the far bar compares a message with a fixed sample of the far past on every
        reading, and gathering a strided sample out of a large matrix costs more than the
        product. Rows are only ever appended, so a copy made once serves every later prefix up
        to twice as long (it is sliced to ``end_row``); a few steps are kept, replaced when the
        channel grows. Not every row of the channel: a reading early in a 100k channel (step 1)
        copied all 186 MB of its vectors, and kept them.
        """
        need = -(-end_row // step)
        copy = self._strided.get(step)
        if copy is None or len(copy) < need:
            # Rows first: an append may grow the array meanwhile, and rows past ``rows`` may not
            # be written yet. Readings run in several threads, so the bounded dict is trimmed
            # without assuming its first key is still there.
            rows = min(self.rows, 2 * end_row)
            copy = np.ascontiguousarray(self._vectors[0:rows:step])
            while len(self._strided) >= 4:
                oldest = next(iter(list(self._strided)), None)
                if oldest is None:
                    break
                self._strided.pop(oldest, None)
            self._strided[step] = copy
        return copy[:need]

    def rows_of(self, position: int) -> range:
        message = self.messages[position]
        return range(message.first_row, message.first_row + len(message.thoughts))
