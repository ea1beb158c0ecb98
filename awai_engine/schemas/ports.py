"""What the schema service needs from storage, as protocols (``storage/`` implements them).

Two parts: the channel's messages (the same store the engine reads, plus removing a speaker), and
the schemas' own record: runs, versions, memoised summaries, digest snapshots, re-cluster marks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from awai_engine.schemas.model import SchemaRun, SchemaState
from awai_engine.timeline import Timeline


class MessageStore(Protocol):
    """The part of the engine's store the schema service reads, and the one removal it adds."""

    def channels(self) -> list[str]: ...

    def timeline(self, channel: str) -> Timeline: ...

    def delete_speaker(self, channel: str, speaker_id: str) -> list[str]:
        """Remove every message of the speaker (rows, thoughts, vectors, edit history) for good.

        Returns the removed message ids; tombstones keep them from being ingested again.
        """
        ...

    def begin_erasure(self, channel: str, speaker_id: str | None = None) -> None:
        """Record a removal before it starts, so a crash leaves it to be finished."""
        ...

    def pending_erasures(self) -> Sequence[PendingErasure]:
        """Removals recorded and not finished yet."""
        ...

    def finish_erasures(self, channels: Sequence[str] | None = None) -> int:
        """Scrub what the stores keep of removed data (all pending, or those channels')."""
        ...


class PendingErasure(Protocol):
    """A removal not finished yet: a forgotten speaker's (``speaker_id``), or deletes'."""

    @property
    def channel(self) -> str: ...

    @property
    def speaker_id(self) -> str | None: ...


@dataclass(frozen=True)
class DigestEntry:
    """One schema as the previous digest showed it; the summary only as a hash (no text kept)."""

    speaker_id: str
    schema_id: str
    version: int
    size: int
    summary_hash: str
    messages: int | None = None  # messages it came back in; None in snapshots made before
    members_hash: str | None = None  # of its thought keys; None in snapshots made before


@dataclass(frozen=True)
class DigestSnapshot:
    created_at: float
    entries: tuple[DigestEntry, ...]


@dataclass(frozen=True)
class PurgeReport:
    """What was removed from the schema record (a forgotten speaker or deleted messages)."""

    runs: int = 0
    versions: int = 0
    summaries: int = 0
    digest_entries: int = 0

    def __add__(self, other: PurgeReport) -> PurgeReport:
        return PurgeReport(
            self.runs + other.runs,
            self.versions + other.versions,
            self.summaries + other.summaries,
            self.digest_entries + other.digest_entries,
        )


class SchemaStore(Protocol):
    """Durable record of schema runs and versions; stored runs and versions never change."""

    def run_with_basis(
        self, channel: str, speaker_id: str, method: str, basis_digest: str
    ) -> SchemaRun | None:
        """The stored run made by ``method`` on exactly the thoughts fingerprinted by the digest."""
        ...

    def highest_run(
        self, channel: str, speaker_id: str, bases: Sequence[tuple[str, str]]
    ) -> SchemaRun | None:
        """Of the stored runs made by ``method`` on the thoughts fingerprinted by ``digest`` for
        some ``(method, digest)`` of ``bases``, the one with the largest basis."""
        ...

    def run_counts(self, channel: str) -> list[tuple[str, int, int]]:
        """``(speaker id, run id, basis count)`` of every stored run of the channel."""
        ...

    def drop_runs(self, channel: str, run_ids: Sequence[int]) -> int:
        """Remove runs no reading uses (a superseded "as of now"); their versions stay."""
        ...

    def save_runs(self, runs: Sequence[SchemaRun]) -> list[SchemaRun]:
        """Store one channel's runs and their new versions, in order; where an equal run is
        already stored, that one comes back instead."""
        ...

    def versions(self, channel: str, speaker_id: str | None = None) -> list[SchemaState]:
        """Every stored version (all speakers, or one), oldest first."""
        ...

    def version(self, channel: str, schema_id: str, version: int) -> SchemaState | None: ...

    def summary(
        self, channel: str, speaker_id: str, members_digest: str, *, model_only: bool = False
    ) -> str | None:
        """The memoised summary of exactly these members (ids and texts), if any; with
        ``model_only``, ``None`` for one made without the language model (a fallback)."""
        ...

    def save_summary(
        self,
        channel: str,
        speaker_id: str,
        members_digest: str,
        members: Sequence[str],
        summary: str,
        *,
        fallback: bool = False,
    ) -> str:
        """Memoise a summary (``fallback``: made without the model) and return the one that
        stands: another writer's if first, unless theirs is a fallback and this one is not, which
        replaces it. Stores nothing if a member's message is deleted by then."""
        ...

    def reclustered_revision(self, channel: str) -> int | None:
        """The timeline revision the channel was last re-clustered at."""
        ...

    def mark_reclustered(self, channel: str, revision: int) -> None: ...

    def last_digest(self, channel: str) -> DigestSnapshot | None: ...

    def save_digest(self, channel: str, snapshot: DigestSnapshot) -> None: ...

    def forget_speaker(self, channel: str, speaker_id: str) -> PurgeReport:
        """Remove every run, version, summary and digest entry of the speaker."""
        ...

    def forget_deleted(self, channel: str) -> PurgeReport:
        """Remove versions and summaries holding a thought of a message deleted since the last
        call (tombstoned), and the runs that held those versions."""
        ...
