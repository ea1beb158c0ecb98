"""A speaker's thoughts before a point of the channel: exactly what one clustering may see.

Reading message ``i`` may use only the speaker's thoughts before ``i``; in the timeline those are
the speaker's rows below ``messages[i].first_row``. :class:`SpeakerRows` indexes the rows of every
speaker once per timeline revision, so cutting a basis is a binary search and a gather.
"""

from __future__ import annotations

import bisect
import hashlib
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
    """Which timeline rows each speaker said, in channel order (one index per revision)."""

    def __init__(self, timeline: Timeline) -> None:
        self.revision = timeline.revision  # read first: the messages below are at least these
        self.timeline = timeline
        rows: dict[str, list[int]] = {}
        names: dict[str, str] = {}
        for message in timeline.messages[: len(timeline.messages)]:
            speaker = message.ref.speaker_id
            names[speaker] = message.ref.speaker_name
            rows.setdefault(speaker, []).extend(
                range(message.first_row, message.first_row + len(message.thoughts))
            )
        self._rows = rows
        self._names = names
        self._said_by: dict[str, _Said] = {}

    def speakers(self) -> list[str]:
        """Speaker ids in order of their first thought."""
        return sorted(self._rows, key=lambda speaker: self._rows[speaker][0])

    def name(self, speaker_id: str) -> str:
        return self._names.get(speaker_id, speaker_id)

    def count(self, speaker_id: str, end_row: int | None = None) -> int:
        rows = self._rows.get(speaker_id, [])
        return len(rows) if end_row is None else bisect.bisect_left(rows, end_row)

    def basis(self, channel: str, speaker_id: str, end_row: int | None = None) -> Basis | None:
        """The speaker's thoughts in rows below ``end_row`` (all of them if ``None``).

        The speaker's keys, texts and running fingerprints are built once per index, so cutting a
        basis for one reading is slicing, not a walk over everything the speaker ever said.
        """
        count = self.count(speaker_id, end_row)
        if count == 0:
            return None
        said = self._said(speaker_id)
        rows = self._rows[speaker_id][:count]
        positions = said.positions[:count]
        last = self.timeline.messages[int(positions[-1])]
        return Basis(
            channel=channel,
            speaker_id=speaker_id,
            speaker_name=last.ref.speaker_name,
            keys=tuple(said.keys[:count]),
            texts=tuple(said.texts[:count]),
            message_ids=tuple(said.message_ids[:count]),
            positions=positions.copy(),
            vectors=np.ascontiguousarray(self.timeline.vectors[rows], dtype=np.float32),
            digest=said.digests[count - 1],
        )

    def _said(self, speaker_id: str) -> _Said:
        """Everything the speaker said in this timeline, with the fingerprint after each thought.

        The fingerprint after ``k`` thoughts is the SHA-256 of the first ``k`` entries: the same
        digest a single pass over those ``k`` thoughts gives.
        """
        said = self._said_by.get(speaker_id)
        if said is not None:
            return said
        timeline = self.timeline
        rows = self._rows.get(speaker_id, [])
        positions = np.asarray(timeline.row_positions[rows], dtype=np.int64)
        keys, texts, message_ids, digests = [], [], [], []
        fingerprint = hashlib.sha256()
        for row, position in zip(rows, positions.tolist(), strict=True):
            message = timeline.messages[position]
            thought = message.thoughts[row - message.first_row]
            key = thought_key(message.message_id, thought.index)
            keys.append(key)
            texts.append(thought.text)
            message_ids.append(message.message_id)
            fingerprint.update(f"{key}\x1f{thought.text}\x1e".encode())
            digests.append(fingerprint.hexdigest())
        said = _Said(keys, texts, message_ids, positions, digests)
        self._said_by[speaker_id] = said  # a race only computes the same value twice
        return said


@dataclass(frozen=True)
class _Said:
    keys: list[str]
    texts: list[str]
    message_ids: list[str]
    positions: np.ndarray
    digests: list[str]
