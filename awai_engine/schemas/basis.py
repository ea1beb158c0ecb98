"""A speaker's thoughts before a point of the channel: exactly what one clustering may see.

Reading message ``i`` may use only the speaker's thoughts before ``i``; in the timeline those are
the speaker's rows below ``messages[i].first_row``. :class:`SpeakerRows` indexes the rows of every
speaker once per timeline and keeps up with its appends, so cutting a basis is a binary search
and a gather, and a new message costs its own thoughts, not a walk over the channel.
"""

from __future__ import annotations

import bisect
import hashlib
import threading
from dataclasses import dataclass, field

import numpy as np

from awai_engine.schemas.model import thought_key
from awai_engine.timeline import Timeline


@dataclass(frozen=True)
class Basis:
    """The speaker's thoughts up to one of their messages, in channel order, with vectors."""

    channel: str
    speaker_id: str
    speaker_name: str
    keys: tuple[str, ...]
    texts: tuple[str, ...]
    message_ids: tuple[str, ...]
    positions: np.ndarray = field(repr=False)
    vectors: np.ndarray = field(repr=False)
    digest: str

    @property
    def count(self) -> int:
        return len(self.keys)

    @property
    def last_message_id(self) -> str:
        return self.message_ids[-1]


class SpeakerRows:
    """Which timeline rows each speaker said, in channel order, for one timeline.

    A timeline only ever grows in place (any other change builds a new one), so the index catches
    up with appended messages instead of being rebuilt.
    """

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self._rows: dict[str, list[int]] = {}
        self._names: dict[str, str] = {}
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
            # From the timeline's columns: a pass over the channel builds no message.
            timeline = self.timeline
            starts = timeline.row_positions.searchsorted(np.arange(self._seen, count + 1))
            for offset, speaker in enumerate(timeline.speaker_ids[self._seen : count]):
                self._names[speaker] = timeline.speaker_names[self._seen + offset]
                self._rows.setdefault(speaker, []).extend(
                    range(int(starts[offset]), int(starts[offset + 1]))
                )
            self._seen = count
            for speaker, said in self._said_by.items():
                said.extend(self.timeline, self._rows[speaker])

    def speakers(self) -> list[str]:
        """Speaker ids in order of their first thought."""
        with self._lock:
            return sorted(self._rows, key=lambda speaker: self._rows[speaker][0])

    def name(self, speaker_id: str) -> str:
        return self._names.get(speaker_id, speaker_id)

    def count(self, speaker_id: str, end_row: int | None = None) -> int:
        with self._lock:
            rows = self._rows.get(speaker_id, [])
            return len(rows) if end_row is None else bisect.bisect_left(rows, end_row)

    def basis(self, channel: str, speaker_id: str, end_row: int | None = None) -> Basis | None:
        """The speaker's thoughts in rows below ``end_row`` (all of them if ``None``)."""
        with self._lock:
            return self.head(channel, speaker_id, self.count(speaker_id, end_row))

    def digest(self, speaker_id: str, count: int) -> str:
        """The fingerprint of the speaker's first ``count`` thoughts (``count`` ≥ 1)."""
        with self._lock:
            return self._said(speaker_id).digests[count - 1]

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
            rows = self._rows[speaker_id][:count]
            return Basis(
                channel=channel,
                speaker_id=speaker_id,
                speaker_name=self.name_at(speaker_id, count),
                keys=tuple(said.keys[:count]),
                texts=tuple(said.texts[:count]),
                message_ids=tuple(said.message_ids[:count]),
                positions=said.positions[:count].copy(),
                vectors=np.ascontiguousarray(self.timeline.vectors[rows], dtype=np.float32),
                digest=said.digests[count - 1],
            )

    def name_at(self, speaker_id: str, count: int) -> str:
        """The speaker's name on the message of their ``count``-th thought (``count`` ≥ 1):
        a basis is named as of its last thought (a speaker may rename)."""
        with self._lock:
            position = int(self._said(speaker_id).positions[count - 1])
            return self.timeline.speaker_names[position]

    def _said(self, speaker_id: str) -> _Said:
        said = self._said_by.get(speaker_id)
        if said is None:
            said = _Said()
            said.extend(self.timeline, self._rows.get(speaker_id, []))
            self._said_by[speaker_id] = said
        return said


@dataclass
class _Said:
    """Everything a speaker said in a timeline, with the fingerprint after each thought.

    The fingerprint after ``k`` thoughts is the SHA-256 of the first ``k`` entries: the same
    digest a single pass over those ``k`` thoughts gives.
    """

    keys: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    message_ids: list[str] = field(default_factory=list)
    digests: list[str] = field(default_factory=list)
    _positions: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    _fingerprint: hashlib._Hash = field(default_factory=hashlib.sha256)

    @property
    def positions(self) -> np.ndarray:
        return self._positions[: len(self.keys)]

    def extend(self, timeline: Timeline, rows: list[int]) -> None:
        """Take in the speaker's rows past those already taken."""
        new = rows[len(self.keys) :]
        if not new:
            return
        positions = timeline.row_positions[new]
        done = len(self.keys)
        if done + len(new) > len(self._positions):
            grown = np.empty(max(done + len(new), 2 * len(self._positions)), dtype=np.int64)
            grown[:done] = self._positions[:done]
            self._positions = grown
        self._positions[done : done + len(new)] = positions
        last = -1
        for row, position in zip(new, positions.tolist(), strict=True):
            if position != last:  # a message's rows are consecutive: one lookup for them
                message_id, first_row, indexes, texts = timeline.messages.thoughts_of(position)
                last = position
            key = thought_key(message_id, indexes[row - first_row])
            text = texts[row - first_row]
            self.keys.append(key)
            self.texts.append(text)
            self.message_ids.append(message_id)
            self._fingerprint.update(f"{key}\x1f{text}\x1e".encode())
            self.digests.append(self._fingerprint.hexdigest())
