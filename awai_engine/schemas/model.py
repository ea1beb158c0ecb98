"""What one clustering of a speaker's thoughts is made of, as the engine and storage exchange it.

A **run** clusters one speaker's thoughts up to one of their messages (its *basis*) and holds the
speaker's schemas at that point; each schema there is one **version** (a state). A version is
never changed once stored; a later run whose cluster has other members makes a new version.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np


def thought_key(message_id: str, index: int) -> str:
    """A thought's name that survives re-indexing: the message id and the thought's index."""
    return f"{message_id}#{index}"


def message_of(key: str) -> str:
    return key.rsplit("#", 1)[0]


@dataclass(frozen=True)
class SchemaState:
    """One version of one schema: its members, its centre, and what it says.

    ``version`` numbers a state by how many of the speaker's thoughts the clustering had heard
    when the state first formed, so numbers grow with time and one number names one state for
    good, including a state clustered on demand for an old message (see ``recall.py``).
    ``summary`` is ``None`` until a reading, a digest or ``awai schemas`` first shows the state,
    stored or not: a summary may cost a language-model call, so only states shown are worded
    (:mod:`awai_engine.schemas.summaries`).
    """

    schema_id: str
    version: int
    speaker_id: str
    speaker_name: str
    members: tuple[str, ...]  # thought keys, in channel order
    member_positions: tuple[int, ...]  # channel positions when the version was made
    centroid: np.ndarray = field(compare=False, repr=False)  # unit length, float32
    summary: str | None
    as_of_message_id: str
    as_of: int  # position of the last member when the version was made
    created_at: float | None = None

    @property
    def size(self) -> int:
        return len(self.members)

    def with_summary(self, summary: str) -> SchemaState:
        return replace(self, summary=summary)


@dataclass(frozen=True)
class SchemaRun:
    """A speaker's schemas as clustered on exactly their thoughts up to ``basis_message_id``.

    ``basis_digest`` fingerprints those thoughts (ids and texts, in order), so a stored run is
    used only for a prefix it was really computed on. ``run_id`` is ``None`` for a run clustered
    on demand for a reading and kept in memory only.
    """

    channel: str
    speaker_id: str
    speaker_name: str
    method: str
    basis_count: int
    basis_digest: str
    basis_message_id: str
    states: tuple[SchemaState, ...]
    run_id: int | None = None
    created_at: float | None = None
