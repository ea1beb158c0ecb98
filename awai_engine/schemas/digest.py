"""The channel digest as values: per speaker, their schemas now and what changed since last time.

Adapters post a :class:`Digest` (Markdown and a PNG) without knowing how it was made. Changes are
found by comparing with the snapshot the previous digest left (ids, versions, sizes and summary
hashes only: a snapshot keeps no text).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from pydantic import Field

from awai_engine.schemas.basis import Basis
from awai_engine.schemas.model import SchemaState, message_of
from awai_engine.schemas.ports import DigestEntry, DigestSnapshot
from awai_engine.values import Value

ChangeKind = Literal["new", "grown", "shrunk", "members changed", "summary rewritten"]


class SchemaChange(Value):
    kind: ChangeKind
    previous_size: int | None = None


class DigestExample(Value):
    """A recent thought of a schema, with the message to link to."""

    message_id: str
    position: int
    text: str


class DigestSchema(Value):
    """One schema of a speaker; ``number`` is its label on the picture."""

    number: int
    schema_id: str
    version: int
    summary: str
    size: int
    as_of: int
    examples: tuple[DigestExample, ...] = ()
    changes: tuple[SchemaChange, ...] = ()


class DissolvedSchema(Value):
    """A schema the previous digest showed that no longer forms a cluster."""

    schema_id: str
    version: int
    size: int
    summary: str | None = None


class SpeakerDigest(Value):
    speaker_id: str
    speaker_name: str
    thoughts: int
    unclustered: int
    schemas: tuple[DigestSchema, ...] = ()
    dissolved: tuple[DissolvedSchema, ...] = ()
    sources: tuple[str, ...] = Field(
        (),
        exclude=True,
        description=(
            "Ids of the messages this section was made from (its schemas' members and the"
            " speaker's latest message), for the record of posts that quote them."
        ),
    )


class Digest(Value):
    """What an adapter posts for a channel: Markdown, a PNG map, and the values behind them."""

    channel: str
    created_at: float
    previous_at: float | None = None
    speakers: tuple[SpeakerDigest, ...] = ()
    other_speakers: int = 0
    markdown: str
    png: bytes
    png_size: tuple[int, int]


@dataclass(frozen=True)
class SpeakerMap:
    """One panel of the picture: a speaker's thoughts in 2-D, each with its schema number (0: none)."""

    title: str
    points: np.ndarray = field(repr=False)
    numbers: np.ndarray = field(repr=False)
    labels: tuple[tuple[int, str], ...]


def counted(count: int, noun: str) -> str:
    """``1 schema``, ``2 schemas``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def summary_hash(summary: str) -> str:
    return hashlib.sha256(summary.encode()).hexdigest()[:16]


def changes_of(state: SchemaState, previous: DigestEntry | None) -> tuple[SchemaChange, ...]:
    if previous is None:
        return (SchemaChange(kind="new"),)
    found = []
    if state.size > previous.size:
        found.append(SchemaChange(kind="grown", previous_size=previous.size))
    elif state.size < previous.size:
        found.append(SchemaChange(kind="shrunk", previous_size=previous.size))
    elif state.version != previous.version:
        found.append(SchemaChange(kind="members changed", previous_size=previous.size))
    if summary_hash(state.summary or "") != previous.summary_hash:
        found.append(SchemaChange(kind="summary rewritten"))
    return tuple(found)


def speaker_digest(
    basis: Basis,
    states: Sequence[SchemaState],
    first_number: int,
    previous: DigestSnapshot | None,
    positions: dict[str, int],
    examples: int,
) -> SpeakerDigest:
    """The speaker's section: schemas largest first, with changes and recent examples."""
    before = {
        entry.schema_id: entry
        for entry in (previous.entries if previous else ())
        if entry.speaker_id == basis.speaker_id
    }
    rows_of = {key: row for row, key in enumerate(basis.keys)}
    ordered = sorted(states, key=lambda state: (-state.size, state.schema_id))
    schemas = []
    for number, state in enumerate(ordered, start=first_number):
        recent = [rows_of[key] for key in state.members[-examples:]] if examples else []
        schemas.append(
            DigestSchema(
                number=number,
                schema_id=state.schema_id,
                version=state.version,
                summary=state.summary or "",
                size=state.size,
                as_of=positions.get(state.as_of_message_id, state.as_of),
                examples=tuple(
                    DigestExample(
                        message_id=basis.message_ids[row],
                        position=int(basis.positions[row]),
                        text=basis.texts[row],
                    )
                    for row in reversed(recent)
                ),
                changes=changes_of(state, before.get(state.schema_id)) if previous else (),
            )
        )
    current = {state.schema_id for state in states}
    dissolved = tuple(
        DissolvedSchema(schema_id=entry.schema_id, version=entry.version, size=entry.size)
        for entry in before.values()
        if entry.schema_id not in current
    )
    members = (message_of(key) for state in states for key in state.members)
    return SpeakerDigest(
        sources=tuple(dict.fromkeys([*members, basis.last_message_id])),
        speaker_id=basis.speaker_id,
        speaker_name=basis.speaker_name,
        thoughts=basis.count,
        unclustered=basis.count - sum(state.size for state in states),
        schemas=tuple(schemas),
        dissolved=dissolved,
    )


def speaker_map(basis: Basis, section: SpeakerDigest, states: Sequence[SchemaState]) -> SpeakerMap:
    """The speaker's thoughts projected on their two main directions, numbered by schema."""
    rows_of = {key: row for row, key in enumerate(basis.keys)}
    by_id = {state.schema_id: state for state in states}
    numbers = np.zeros(basis.count, dtype=np.int64)
    labels = []
    for schema in section.schemas:
        numbers[[rows_of[key] for key in by_id[schema.schema_id].members]] = schema.number
        labels.append((schema.number, schema.summary))
    title = f"{section.speaker_name}: {counted(section.thoughts, 'thought')}, {counted(len(section.schemas), 'schema')}"
    return SpeakerMap(
        title=title, points=plane(basis.vectors), numbers=numbers, labels=tuple(labels)
    )


def plane(vectors: np.ndarray) -> np.ndarray:
    """Coordinates on the two directions of largest variance (signs fixed: deterministic)."""
    points = np.zeros((len(vectors), 2), dtype=np.float64)
    if len(vectors) < 2:
        return points
    centred = vectors.astype(np.float64) - vectors.astype(np.float64).mean(axis=0)
    few = len(centred) <= centred.shape[1]  # then the small Gram matrix is the cheaper one
    values, vectors_ = np.linalg.eigh(centred @ centred.T if few else centred.T @ centred)
    top = vectors_[:, ::-1][:, :2]
    coordinates = top * np.sqrt(np.maximum(values[::-1][:2], 0.0)) if few else centred @ top
    largest = np.abs(coordinates).argmax(axis=0)
    coordinates *= np.where(coordinates[largest, np.arange(2)] < 0, -1.0, 1.0)
    points[:] = coordinates
    return points


def snapshot(
    created_at: float, speakers: Sequence[tuple[str, Sequence[SchemaState]]]
) -> DigestSnapshot:
    """What this digest showed, for the next one to compare with."""
    return DigestSnapshot(
        created_at=created_at,
        entries=tuple(
            DigestEntry(
                speaker_id=speaker_id,
                schema_id=state.schema_id,
                version=state.version,
                size=state.size,
                summary_hash=summary_hash(state.summary or ""),
            )
            for speaker_id, states in speakers
            for state in states
        ),
    )
