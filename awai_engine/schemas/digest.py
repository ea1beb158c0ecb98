"""The channel digest as values: per speaker, their schemas now and what changed since last time.

Adapters post a :class:`Digest` (Markdown and a PNG) without knowing how it was made. Changes are
found by comparing with the snapshot the previous digest left (ids, versions, sizes and summary
hashes only: a snapshot keeps no text).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from awai_engine.acknowledgement import says_something
from awai_engine.schemas.basis import Basis
from awai_engine.schemas.model import SchemaState, message_of
from awai_engine.schemas.naming import known_names
from awai_engine.schemas.ports import DigestEntry, DigestSnapshot
from awai_engine.values import Value

ChangeKind = Literal["new", "grown", "shrunk", "members changed", "summary rewritten"]


class SchemaChange(Value):
    kind: ChangeKind
    previous_size: int | None = None
    previous_messages: int | None = None


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
    messages: int = Field(1, ge=1, description="Distinct messages it came back in.")
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
    unclustered: int = Field(description="Messages of theirs with no thought in a schema.")
    messages: int = Field(0, description="Distinct messages they said (the picture's unit).")
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
    language: str = Field("en", description="The channel's language, which the digest is in.")
    markdown: str
    png: bytes
    png_size: tuple[int, int]


@dataclass(frozen=True)
class Trend:
    """What changed since the previous digest, in the bar's own unit (messages it came back
    in): ``new``; ``delta`` with the signed count; ``changed`` (other members, as many messages,
    or a snapshot from before messages were recorded); or ``same``. The picture words it in the
    channel's language."""

    kind: Literal["new", "delta", "changed", "same"]
    messages: int = 0


@dataclass(frozen=True)
class PanelRow:
    """One preconception on the picture: its name, how often it came back, and its trend
    (``None`` on a channel's first digest)."""

    name: str
    messages: int
    trend: Trend | None


@dataclass(frozen=True)
class SpeakerPanel:
    """One speaker's panel of the picture: their largest preconceptions, most recurring first."""

    speaker_name: str
    messages: int
    rows: tuple[PanelRow, ...]
    more: int  # preconceptions not drawn


def summary_hash(summary: str) -> str:
    return hashlib.sha256(summary.encode()).hexdigest()[:16]


def members_hash(members: Sequence[str]) -> str:
    return hashlib.sha256("\x1f".join(members).encode()).hexdigest()[:16]


def changes_of(state: SchemaState, previous: DigestEntry | None) -> tuple[SchemaChange, ...]:
    if previous is None:
        return (SchemaChange(kind="new"),)
    was = {"previous_size": previous.size, "previous_messages": previous.messages}
    found = []
    # In messages, as the rest of the digest counts; in thoughts for a snapshot from before.
    now, before = state.size, previous.size
    if previous.messages is not None:
        now, before = len({message_of(key) for key in state.members}), previous.messages
    if now > before:
        found.append(SchemaChange(kind="grown", **was))
    elif now < before:
        found.append(SchemaChange(kind="shrunk", **was))
    elif _members_changed(state, previous):
        found.append(SchemaChange(kind="members changed", **was))
    if summary_hash(state.summary or "") != previous.summary_hash:
        found.append(SchemaChange(kind="summary rewritten"))
    return tuple(found)


def _members_changed(state: SchemaState, previous: DigestEntry) -> bool:
    """By the members themselves where the snapshot has them: a digest is as of now, and a
    state clustered then may come back under another version number once the job clusters the
    same members at a fixed point (:mod:`awai_engine.schemas.runs`)."""
    if previous.members_hash is None:
        return state.version != previous.version
    return members_hash(state.members) != previous.members_hash


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
        recent = _latest_per_message([rows_of[key] for key in state.members], basis, examples)
        schemas.append(
            DigestSchema(
                number=number,
                schema_id=state.schema_id,
                version=state.version,
                summary=state.summary or "",
                size=state.size,
                messages=len({message_of(key) for key in state.members}),
                as_of=positions.get(state.as_of_message_id, state.as_of),
                examples=tuple(
                    DigestExample(
                        message_id=basis.message_ids[row],
                        position=int(basis.positions[row]),
                        text=basis.texts[row],
                    )
                    for row in recent
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
    members = [message_of(key) for state in states for key in state.members]
    said = set(basis.message_ids)
    return SpeakerDigest(
        sources=tuple(dict.fromkeys([*members, basis.last_message_id])),
        speaker_id=basis.speaker_id,
        speaker_name=basis.speaker_name,
        thoughts=basis.count,
        unclustered=len(said - set(members)),
        messages=len(said),
        schemas=tuple(schemas),
        dissolved=dissolved,
    )


def _latest_per_message(rows: Sequence[int], basis: Basis, examples: int) -> list[int]:
    """Of a schema's member ``rows`` (oldest first), the latest thought of each of its latest
    ``examples`` messages, newest first: examples from distinct messages, never one message
    (or one thought) shown twice. A thought with a word that could say what it is about comes
    before one without ("Nice work Maya." shows what the preconception is only when nothing
    else of it can)."""
    latest: dict[str, int] = {}
    names = known_names(basis, basis.count)
    for worded in (True, False):
        for row in reversed(rows):
            if len(latest) == examples:
                break
            if says_something(basis.texts[row], names) == worded:
                latest.setdefault(basis.message_ids[row], row)
    return sorted(latest.values(), reverse=True)


def speaker_panel(
    section: SpeakerDigest, basis: Basis, rows: int, first: bool
) -> SpeakerPanel | None:
    """The speaker's panel, or ``None`` when they have no preconception (no empty panels).
    ``first``: the channel's first digest, so there is no trend to show."""
    if not section.schemas:
        return None
    ordered = sorted(section.schemas, key=lambda schema: (-schema.messages, schema.number))
    return SpeakerPanel(
        speaker_name=section.speaker_name,
        messages=len(set(basis.message_ids)),
        rows=tuple(
            PanelRow(
                name=schema.summary,
                messages=schema.messages,
                trend=None if first else trend(schema),
            )
            for schema in ordered[:rows]
        ),
        more=max(0, len(ordered) - rows),
    )


def trend(schema: DigestSchema) -> Trend:
    """What changed since the previous digest (see :class:`Trend`)."""
    for change in schema.changes:
        if change.kind == "new":
            return Trend("new")
        if change.kind in ("grown", "shrunk", "members changed"):
            if change.previous_messages is None or change.previous_messages == schema.messages:
                return Trend("changed")
            return Trend("delta", schema.messages - change.previous_messages)
    return Trend("same")


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
                messages=len({message_of(key) for key in state.members}),
                members_hash=members_hash(state.members),
            )
            for speaker_id, states in speakers
            for state in states
        ),
    )
