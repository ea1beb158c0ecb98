"""The schemas' record in SQL: runs, versions, memoised summaries, digest snapshots, marks.

Why these tables: a version is stored once and never changed (runs only link to it), so the
history of every schema survives re-clustering; a run records the fingerprint of exactly the
thoughts it clustered, so a reading can tell whether a stored run fits its prefix. Every table
hangs off ``channels`` with ``ON DELETE CASCADE``: dropping a channel leaves no schema text.
Removal (a forgotten speaker, deleted messages) is the one exception to "never changed": privacy
beats fidelity, so versions holding removed thoughts go, with the runs that held them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from sqlalchemy import (
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    Row,
    Select,
    String,
    Text,
    UniqueConstraint,
    delete,
    false,
    insert,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, Session, mapped_column

from awai_engine.schemas.model import SchemaRun, SchemaState, message_of
from awai_engine.schemas.ports import DigestEntry, DigestSnapshot, PurgeReport
from storage.batches import batches
from storage.queries import rowcount, tombstoned
from storage.sql import Base, ChannelRow, Database, DeletedMessageRow


def _channel_fk() -> ForeignKey:
    """Every schema row belongs to a channel and goes with it."""
    return ForeignKey("channels.id", ondelete="CASCADE")


class SchemaRunRow(Base):
    __tablename__ = "schema_runs"
    __table_args__ = (
        UniqueConstraint("channel_id", "speaker_id", "method", "basis_digest", name="uq_run_basis"),
        Index("ix_run_speaker_count", "channel_id", "speaker_id", "basis_count"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    channel_id: Mapped[int] = mapped_column(_channel_fk())
    speaker_id: Mapped[str] = mapped_column(String(255))
    speaker_name: Mapped[str] = mapped_column(String(255))
    method: Mapped[str] = mapped_column(String(128))
    basis_count: Mapped[int] = mapped_column(Integer)
    basis_digest: Mapped[str] = mapped_column(String(64))
    basis_message_id: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[float] = mapped_column(Float)


# A version's summary until something shows it: the re-clustering job stores versions unworded and
# the words are written, memoised by member set, when first needed (awai_engine/schemas/summaries).
# The column stays NOT NULL so stores made before this need no migration; no summary is empty.
UNWRITTEN = ""


class SchemaVersionRow(Base):
    __tablename__ = "schema_versions"
    __table_args__ = (
        UniqueConstraint("channel_id", "schema_id", "version", name="uq_schema_version"),
        Index("ix_schema_version_speaker", "channel_id", "speaker_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    channel_id: Mapped[int] = mapped_column(_channel_fk())
    speaker_id: Mapped[str] = mapped_column(String(255))
    speaker_name: Mapped[str] = mapped_column(String(255))
    schema_id: Mapped[str] = mapped_column(String(64))
    version: Mapped[int] = mapped_column(Integer)
    summary: Mapped[str] = mapped_column(Text)
    members: Mapped[str] = mapped_column(Text)  # JSON list of thought keys, channel order
    member_positions: Mapped[str] = mapped_column(Text)  # JSON list, positions when made
    centroid: Mapped[bytes] = mapped_column(LargeBinary)  # float32
    as_of: Mapped[int] = mapped_column(Integer)
    as_of_message_id: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[float] = mapped_column(Float)


class SchemaRunVersionRow(Base):
    """Which versions make up a run (a version unchanged across runs is linked, not copied)."""

    __tablename__ = "schema_run_versions"

    run_id: Mapped[int] = mapped_column(
        ForeignKey("schema_runs.id", ondelete="CASCADE"), primary_key=True
    )
    version_id: Mapped[int] = mapped_column(
        ForeignKey("schema_versions.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    ordinal: Mapped[int] = mapped_column(Integer)


class SchemaSummaryRow(Base):
    """A summary written for exactly one member set (ids and texts), so it is written once.

    ``fallback`` marks words made without the language model (its keyphrase name, by a process
    with no model or while the model failed): a backend with the model takes them for missing and
    writes its own over them, once; an offline one reuses them. The model's words are final.
    A version's keyphrases are kept here too, as a JSON list marked fallback, under a key of
    their own (:meth:`awai_engine.schemas.summaries.Summaries.keyphrases`), so they are purged
    with their members and their speaker as a name is.
    """

    __tablename__ = "schema_summaries"
    __table_args__ = (
        UniqueConstraint("channel_id", "members_digest", name="uq_summary_members"),
        Index("ix_summary_speaker", "channel_id", "speaker_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    channel_id: Mapped[int] = mapped_column(_channel_fk())
    speaker_id: Mapped[str] = mapped_column(String(255))
    members_digest: Mapped[str] = mapped_column(String(64))
    members: Mapped[str] = mapped_column(Text)  # JSON list of thought keys
    summary: Mapped[str] = mapped_column(Text)
    created_at: Mapped[float] = mapped_column(Float)
    fallback: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class SchemaDigestRow(Base):
    """What one digest showed (ids, versions, sizes, summary hashes: no text)."""

    __tablename__ = "schema_digests"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    channel_id: Mapped[int] = mapped_column(_channel_fk(), index=True)
    created_at: Mapped[float] = mapped_column(Float)
    entries: Mapped[str] = mapped_column(Text)


class SchemaMarkRow(Base):
    """Per channel: the revision last re-clustered, and up to when deletions were purged."""

    __tablename__ = "schema_marks"

    channel_id: Mapped[int] = mapped_column(_channel_fk(), primary_key=True)
    revision: Mapped[int | None] = mapped_column(Integer)
    purged_until: Mapped[float] = mapped_column(Float, default=0.0)


class SqlSchemaStore:
    """:class:`awai_engine.schemas.ports.SchemaStore` on the AWAI database."""

    def __init__(self, database: Database) -> None:
        self.db = database

    # -- runs ----------------------------------------------------------------------------------

    def run_with_basis(
        self, channel: str, speaker_id: str, method: str, basis_digest: str
    ) -> SchemaRun | None:
        with self.db.read() as session:
            row = session.scalars(
                _runs_of(channel, speaker_id).where(
                    SchemaRunRow.method == method, SchemaRunRow.basis_digest == basis_digest
                )
            ).one_or_none()
            return _run(session, channel, row) if row else None

    def highest_run(
        self, channel: str, speaker_id: str, bases: Sequence[tuple[str, str]]
    ) -> SchemaRun | None:
        wanted = set(bases)
        if not wanted:
            return None
        with self.db.read() as session:
            rows = session.scalars(
                _runs_of(channel, speaker_id)
                .where(SchemaRunRow.basis_digest.in_({digest for _, digest in wanted}))
                .order_by(SchemaRunRow.basis_count.desc())
            )
            found = next((row for row in rows if (row.method, row.basis_digest) in wanted), None)
            return _run(session, channel, found) if found else None

    def run_counts(self, channel: str) -> list[tuple[str, int, int]]:
        with self.db.read() as session:
            channel_row = self.db.channel(session, channel)
            if channel_row is None:
                return []
            rows = session.execute(
                select(SchemaRunRow.speaker_id, SchemaRunRow.id, SchemaRunRow.basis_count).where(
                    SchemaRunRow.channel_id == channel_row.id
                )
            )
            return [(row.speaker_id, row.id, row.basis_count) for row in rows]

    def drop_runs(self, channel: str, run_ids: Sequence[int]) -> int:
        if not run_ids:
            return 0
        with self.db.session() as session:
            channel_id = _channel_id(self.db, session, channel)
            return sum(
                rowcount(
                    session.execute(
                        delete(SchemaRunRow).where(
                            SchemaRunRow.channel_id == channel_id, SchemaRunRow.id.in_(chunk)
                        )
                    )
                )
                for chunk in batches(list(run_ids))
            )

    def save_runs(self, runs: Sequence[SchemaRun]) -> list[SchemaRun]:
        """Store one speaker's runs in one transaction, in order.

        In bulk because a re-clustering stores a channel's runs by the thousand: the channel
        was looked up, and each run's versions looked up, once per run. Consecutive runs of a
        chain share most of their versions (an unchanged schema is linked, not copied), so the
        versions seen in this transaction are remembered and only the others looked up; the
        runs' rows, and the links to their versions, go in one statement each (see
        :func:`_save_runs`).
        """
        if not runs:
            return []
        now = time.time()
        try:
            with self.db.session() as session:
                channel_id = _channel_id(self.db, session, runs[0].channel)
                ids = _save_runs(session, channel_id, runs, now)
        except IntegrityError:
            # One was stored by another process meanwhile (theirs is the same clustering): store
            # them one at a time, each returning the stored one where there is one.
            if len(runs) == 1:
                stored = self.run_with_basis(
                    runs[0].channel, runs[0].speaker_id, runs[0].method, runs[0].basis_digest
                )
                if stored is None:
                    raise
                return [stored]
            return [saved for run in runs for saved in self.save_runs([run])]
        return [
            replace(run, run_id=run_id, created_at=now)
            for run, run_id in zip(runs, ids, strict=True)
        ]

    # -- versions ------------------------------------------------------------------------------

    def versions(self, channel: str, speaker_id: str | None = None) -> list[SchemaState]:
        with self.db.read() as session:
            channel_row = self.db.channel(session, channel)
            if channel_row is None:
                return []
            query = select(SchemaVersionRow).where(SchemaVersionRow.channel_id == channel_row.id)
            if speaker_id is not None:
                query = query.where(SchemaVersionRow.speaker_id == speaker_id)
            rows = session.scalars(query.order_by(SchemaVersionRow.id))
            return [_state(row) for row in rows]

    def version(self, channel: str, schema_id: str, version: int) -> SchemaState | None:
        with self.db.read() as session:
            channel_row = self.db.channel(session, channel)
            if channel_row is None:
                return None
            row = session.scalars(
                select(SchemaVersionRow).where(
                    SchemaVersionRow.channel_id == channel_row.id,
                    SchemaVersionRow.schema_id == schema_id,
                    SchemaVersionRow.version == version,
                )
            ).one_or_none()
            return _state(row) if row else None

    # -- summaries -----------------------------------------------------------------------------

    def summary(
        self, channel: str, speaker_id: str, members_digest: str, *, model_only: bool = False
    ) -> str | None:
        query = (
            select(SchemaSummaryRow.summary)
            .join(ChannelRow, ChannelRow.id == SchemaSummaryRow.channel_id)
            .where(ChannelRow.key == channel, SchemaSummaryRow.members_digest == members_digest)
        )
        if model_only:
            query = query.where(SchemaSummaryRow.fallback.is_(False))
        with self.db.read() as session:  # one query: a reading asks it for each schema it shows
            return session.scalar(query)

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
        """Memoise a summary; another writer's, if first, wins, unless theirs is a fallback and
        this one the model's. Nothing is stored if a member's message is deleted by now.

        The tombstone check is in the write transaction, which writers take one at a time, so
        either a purge (:meth:`forget_deleted`) runs after this and finds the row, or this finds
        the tombstone: a summary written while its member was deleted and purged (a model call
        takes seconds) cannot come after the purge and stay for good.

        A database opened read-only (a backup on read-only media) keeps nothing: the summary
        is shown to the one asking, and memoised by the first command that may write.
        """
        if self.db.read_only:
            return summary
        with self.db.session() as session:
            channel_id = _channel_id(self.db, session, channel)
            if _any_deleted(session, channel_id, members):
                return summary  # shown to the one asking, whose reading began before it went
            stored = session.execute(
                select(
                    SchemaSummaryRow.id, SchemaSummaryRow.summary, SchemaSummaryRow.fallback
                ).where(
                    SchemaSummaryRow.channel_id == channel_id,
                    SchemaSummaryRow.members_digest == members_digest,
                )
            ).one_or_none()
            if stored is None:  # no writer can insert it meanwhile: they wait for this one
                session.add(
                    SchemaSummaryRow(
                        channel_id=channel_id,
                        speaker_id=speaker_id,
                        members_digest=members_digest,
                        members=json.dumps(list(members), ensure_ascii=False),
                        summary=summary,
                        created_at=time.time(),
                        fallback=fallback,
                    )
                )
                return summary
            if stored.fallback and not fallback:  # the model's words replace a fallback's
                session.execute(
                    update(SchemaSummaryRow)
                    .where(SchemaSummaryRow.id == stored.id)
                    .values(summary=summary, fallback=False, created_at=time.time())
                )
                return summary
            return stored.summary  # another writer memoised this member set first: theirs

    # -- marks and digests ---------------------------------------------------------------------

    def reclustered_revision(self, channel: str) -> int | None:
        with self.db.read() as session:
            channel_row = self.db.channel(session, channel)
            if channel_row is None:
                return None
            mark = session.get(SchemaMarkRow, channel_row.id)
            return mark.revision if mark else None

    def mark_reclustered(self, channel: str, revision: int) -> None:
        with self.db.session() as session:
            _mark(session, _channel_id(self.db, session, channel)).revision = revision

    def last_digest(self, channel: str) -> DigestSnapshot | None:
        with self.db.read() as session:
            channel_row = self.db.channel(session, channel)
            if channel_row is None:
                return None
            row = session.scalars(
                select(SchemaDigestRow)
                .where(SchemaDigestRow.channel_id == channel_row.id)
                .order_by(SchemaDigestRow.id.desc())
                .limit(1)
            ).one_or_none()
            if row is None:
                return None
            entries = tuple(DigestEntry(**entry) for entry in json.loads(row.entries))
            return DigestSnapshot(created_at=row.created_at, entries=entries)

    def save_digest(self, channel: str, snapshot: DigestSnapshot) -> None:
        with self.db.session() as session:
            session.add(
                SchemaDigestRow(
                    channel_id=_channel_id(self.db, session, channel),
                    created_at=snapshot.created_at,
                    entries=json.dumps([entry.__dict__ for entry in snapshot.entries]),
                )
            )

    # -- removal -------------------------------------------------------------------------------

    def forget_speaker(self, channel: str, speaker_id: str) -> PurgeReport:
        with self.db.session() as session:
            channel_row = self.db.channel(session, channel)
            if channel_row is None:
                return PurgeReport()
            channel_id = channel_row.id
            runs = rowcount(
                session.execute(
                    delete(SchemaRunRow).where(
                        SchemaRunRow.channel_id == channel_id, SchemaRunRow.speaker_id == speaker_id
                    )
                )
            )
            versions = rowcount(
                session.execute(
                    delete(SchemaVersionRow).where(
                        SchemaVersionRow.channel_id == channel_id,
                        SchemaVersionRow.speaker_id == speaker_id,
                    )
                )
            )
            summaries = rowcount(
                session.execute(
                    delete(SchemaSummaryRow).where(
                        SchemaSummaryRow.channel_id == channel_id,
                        SchemaSummaryRow.speaker_id == speaker_id,
                    )
                )
            )
            entries = 0
            for row in session.scalars(
                select(SchemaDigestRow).where(SchemaDigestRow.channel_id == channel_id)
            ):
                kept = [e for e in json.loads(row.entries) if e["speaker_id"] != speaker_id]
                entries += len(json.loads(row.entries)) - len(kept)
                row.entries = json.dumps(kept)
            return PurgeReport(runs, versions, summaries, entries)

    def forget_deleted(self, channel: str) -> PurgeReport:
        with self.db.session() as session:
            channel_row = self.db.channel(session, channel)
            if channel_row is None:
                return PurgeReport()
            channel_id = channel_row.id
            mark = _mark(session, channel_id)
            tombstones = session.execute(
                select(DeletedMessageRow.message_id, DeletedMessageRow.deleted_at).where(
                    DeletedMessageRow.channel_id == channel_id,
                    DeletedMessageRow.deleted_at > mark.purged_until,
                )
            ).all()
            if not tombstones:
                return PurgeReport()
            deleted = {message_id for message_id, _ in tombstones}
            mark.purged_until = max(deleted_at for _, deleted_at in tombstones)
            doomed_versions = [
                row.id
                for row in session.execute(
                    select(SchemaVersionRow.id, SchemaVersionRow.members).where(
                        SchemaVersionRow.channel_id == channel_id
                    )
                )
                if _holds(row.members, deleted)
            ]
            doomed_summaries = [
                row.id
                for row in session.execute(
                    select(SchemaSummaryRow.id, SchemaSummaryRow.members).where(
                        SchemaSummaryRow.channel_id == channel_id
                    )
                )
                if _holds(row.members, deleted)
            ]
            runs = 0
            for start in range(0, len(doomed_versions), 500):
                part = doomed_versions[start : start + 500]
                holders = select(SchemaRunVersionRow.run_id).where(
                    SchemaRunVersionRow.version_id.in_(part)
                )
                runs += rowcount(
                    session.execute(delete(SchemaRunRow).where(SchemaRunRow.id.in_(holders)))
                )
                session.execute(delete(SchemaVersionRow).where(SchemaVersionRow.id.in_(part)))
            for start in range(0, len(doomed_summaries), 500):
                part = doomed_summaries[start : start + 500]
                session.execute(delete(SchemaSummaryRow).where(SchemaSummaryRow.id.in_(part)))
            return PurgeReport(runs, len(doomed_versions), len(doomed_summaries), 0)


def _any_deleted(session: Session, channel_id: int, members: Sequence[str]) -> bool:
    """Whether a tombstone names the message of any of these thought keys."""
    messages = sorted({message_of(key) for key in members})
    return any(tombstoned(session, channel_id, batch) for batch in batches(messages))


def _holds(members_json: str, deleted: set[str]) -> bool:
    return any(message_of(key) in deleted for key in json.loads(members_json))


def _channel_id(database: Database, session: Session, channel: str) -> int:
    row = database.channel(session, channel)
    if row is None:
        raise LookupError(f"Unknown channel {channel!r}.")
    return row.id


def _mark(session: Session, channel_id: int) -> SchemaMarkRow:
    mark = session.get(SchemaMarkRow, channel_id)
    if mark is None:
        mark = SchemaMarkRow(channel_id=channel_id, revision=None, purged_until=0.0)
        session.add(mark)
    return mark


def _save_runs(
    session: Session, channel_id: int, runs: Sequence[SchemaRun], now: float
) -> list[int]:
    """Insert runs and link their versions (see :func:`_version_ids`); their rows' ids.

    The runs' rows in one multi-row INSERT and the links in another, not three statements
    per run: a real 100k-message channel of 8,455 speakers stores 39,707 runs in its first
    re-clustering, and building, compiling and running a statement per run kept the process
    that stores them busy while its workers waited (``bench.scale --kept-lines train``).
    Linking after every row is in changes nothing :func:`_version_ids` does: a stale version
    it removes (with the runs linking it) is one of another history, which none of these runs
    links. Runs that give a version two sets of members (which runs of one history never do)
    are stored one at a time (:func:`_save_run`), as before: the later one removes the row the
    earlier one linked, with that run."""
    if not _one_history(runs):
        known: dict[tuple[str, int], tuple[int, str]] = {}
        return [_save_run(session, channel_id, run, known, now) for run in runs]
    table = Base.metadata.tables[SchemaRunRow.__tablename__]
    ids: list[int] = []
    for chunk in batches(runs):
        ids.extend(
            session.scalars(
                insert(table).returning(table.c.id, sort_by_parameter_order=True),
                [
                    {
                        "channel_id": channel_id,
                        "speaker_id": run.speaker_id,
                        "speaker_name": run.speaker_name,
                        "method": run.method,
                        "basis_count": run.basis_count,
                        "basis_digest": run.basis_digest,
                        "basis_message_id": run.basis_message_id,
                        "created_at": now,
                    }
                    for run in chunk
                ],
            ).all()
        )
    # Each version found or inserted once for all the runs, in the order they first name it.
    states: dict[tuple[str, int], SchemaState] = {}
    for run in runs:
        for state in run.states:
            states.setdefault((state.schema_id, state.version), state)
    rows = _version_ids(session, channel_id, list(states.values()), {}, now)
    found = dict(zip(states, rows, strict=True))
    links = [
        {"run_id": run_id, "version_id": found[(state.schema_id, state.version)], "ordinal": n}
        for run, run_id in zip(runs, ids, strict=True)
        for n, state in enumerate(run.states)
    ]
    linked = Base.metadata.tables[SchemaRunVersionRow.__tablename__]
    for batch in batches(links):
        session.execute(insert(linked), batch)
    return ids


def _one_history(runs: Sequence[SchemaRun]) -> bool:
    """Whether the runs give each version (schema id and number) one set of members, as the
    runs of one history of a speaker's thoughts do."""
    members: dict[tuple[str, int], tuple[str, ...]] = {}
    for run in runs:
        for state in run.states:
            given = tuple(state.members)
            if members.setdefault((state.schema_id, state.version), given) != given:
                return False
    return True


def _save_run(
    session: Session,
    channel_id: int,
    run: SchemaRun,
    known: dict[tuple[str, int], tuple[int, str]],
    now: float,
) -> int:
    """Insert a run and link its versions (see :func:`_version_ids`); its row's id."""
    run_id = session.scalars(
        insert(SchemaRunRow)
        .values(
            channel_id=channel_id,
            speaker_id=run.speaker_id,
            speaker_name=run.speaker_name,
            method=run.method,
            basis_count=run.basis_count,
            basis_digest=run.basis_digest,
            basis_message_id=run.basis_message_id,
            created_at=now,
        )
        .returning(SchemaRunRow.id)
    ).one()
    version_ids = _version_ids(session, channel_id, run.states, known, now)
    if version_ids:
        session.execute(
            insert(SchemaRunVersionRow),
            [
                {"run_id": run_id, "version_id": version_id, "ordinal": ordinal}
                for ordinal, version_id in enumerate(version_ids)
            ],
        )
    return run_id


def _version_ids(
    session: Session,
    channel_id: int,
    states: Sequence[SchemaState],
    known: dict[tuple[str, int], tuple[int, str]],
    now: float,
) -> list[int]:
    """The rows of a run's versions, inserted where new (an unchanged schema links its old row).

    In one history of the speaker's thoughts an id and a version name one state: a version is
    numbered by the fixed point it formed at, and one run clusters each point. A row with the
    same id and version but other members was made from a history that has since changed (an
    edit or an insertion before that point gave every later prefix a new fingerprint). No
    reading can use it any more, so it goes, with the runs that link it (a run must never
    lend a reading members its basis lacks); a history that comes back is clustered again.

    ``known`` holds the rows (id, members) this transaction has seen by (schema id, version),
    kept up to date as rows are inserted and removed: only the others are looked up, a batch
    at a time, and the new ones inserted in one executemany, not one statement (and one ORM
    flush) per version: a long speaker's run holds a thousand versions.
    """
    members = [json.dumps(list(state.members), ensure_ascii=False) for state in states]
    names = [(state.schema_id, state.version) for state in states]
    unknown = [name for name in dict.fromkeys(names) if name not in known]
    wanted = set(unknown)
    for batch in batches(unknown):
        # By id and version separately, not as pairs: SQLite searches the (channel, id,
        # version) index for ``schema_id IN``, but scans every version of the channel for a
        # pair ``IN``, which made storing a channel's catch-up quadratic in its versions.
        rows = session.execute(
            select(
                SchemaVersionRow.id,
                SchemaVersionRow.schema_id,
                SchemaVersionRow.version,
                SchemaVersionRow.members,
            ).where(
                SchemaVersionRow.channel_id == channel_id,
                SchemaVersionRow.schema_id.in_({schema_id for schema_id, _ in batch}),
                SchemaVersionRow.version.in_({version for _, version in batch}),
            )
        )
        known.update(
            {
                (row.schema_id, row.version): (row.id, row.members)
                for row in rows
                if (row.schema_id, row.version) in wanted
            }
        )
    ids: list[int | None] = [None] * len(states)
    stale = []
    for number, name in enumerate(names):
        found = known.get(name)
        if found is not None and found[1] == members[number]:
            ids[number] = found[0]
        elif found is not None:
            stale.append(found[0])
            del known[name]
    for chunk in batches(stale):
        holders = select(SchemaRunVersionRow.run_id).where(
            SchemaRunVersionRow.version_id.in_(chunk)
        )
        session.execute(delete(SchemaRunRow).where(SchemaRunRow.id.in_(holders)))
        session.execute(delete(SchemaVersionRow).where(SchemaVersionRow.id.in_(chunk)))
    new = [number for number, found in enumerate(ids) if found is None]
    if new:
        # Core, not the ORM's bulk insert: 0.27–0.30 s of CPU against 0.46–0.56 s for 20,000
        # versions in runs of 20 (in-memory SQLite, same script).
        table = Base.metadata.tables[SchemaVersionRow.__tablename__]
        inserted = session.scalars(
            insert(table).returning(table.c.id, sort_by_parameter_order=True),
            [
                {
                    "channel_id": channel_id,
                    "speaker_id": states[number].speaker_id,
                    "speaker_name": states[number].speaker_name,
                    "schema_id": states[number].schema_id,
                    "version": states[number].version,
                    "summary": states[number].summary or UNWRITTEN,
                    "members": members[number],
                    "member_positions": json.dumps(list(states[number].member_positions)),
                    "centroid": np.asarray(states[number].centroid, dtype=np.float32).tobytes(),
                    "as_of": states[number].as_of,
                    "as_of_message_id": states[number].as_of_message_id,
                    "created_at": now,
                }
                for number in new
            ],
        ).all()
        for number, version_id in zip(new, inserted, strict=True):
            ids[number] = version_id
            known[names[number]] = (version_id, members[number])
    done = [version_id for version_id in ids if version_id is not None]
    assert len(done) == len(states)
    return done


def _state(row: SchemaVersionRow | Row[*tuple[Any, ...]]) -> SchemaState:
    """A stored version as the engine's state, from its ORM object or a plain row of
    :data:`_STATE_COLUMNS` (named alike)."""
    return SchemaState(
        schema_id=row.schema_id,
        version=row.version,
        speaker_id=row.speaker_id,
        speaker_name=row.speaker_name,
        members=tuple(json.loads(row.members)),
        member_positions=tuple(json.loads(row.member_positions)),
        centroid=np.frombuffer(row.centroid, dtype=np.float32).copy(),
        summary=row.summary or None,
        as_of_message_id=row.as_of_message_id,
        as_of=row.as_of,
        created_at=row.created_at,
    )


def _runs_of(channel: str, speaker_id: str) -> Select[SchemaRunRow]:
    """The speaker's stored runs in the channel, named by its key: one query where looking the
    channel up first made two (a reading asks for runs once or twice)."""
    return (
        select(SchemaRunRow)
        .join(ChannelRow, ChannelRow.id == SchemaRunRow.channel_id)
        .where(ChannelRow.key == channel, SchemaRunRow.speaker_id == speaker_id)
    )


# The columns :func:`_state` reads. Why plain rows: a run's versions are loaded when a reading
# first meets a new point of the speaker's, and building (and identity-mapping) an ORM object
# per version cost 3-4 ms of such a reading at 100k messages; the rows are only read.
_STATE_COLUMNS = (
    SchemaVersionRow.schema_id,
    SchemaVersionRow.version,
    SchemaVersionRow.speaker_id,
    SchemaVersionRow.speaker_name,
    SchemaVersionRow.members,
    SchemaVersionRow.member_positions,
    SchemaVersionRow.centroid,
    SchemaVersionRow.summary,
    SchemaVersionRow.as_of_message_id,
    SchemaVersionRow.as_of,
    SchemaVersionRow.created_at,
)


def _run(session: Session, channel: str, row: SchemaRunRow) -> SchemaRun:
    versions = session.execute(
        select(*_STATE_COLUMNS)
        .join(SchemaRunVersionRow, SchemaRunVersionRow.version_id == SchemaVersionRow.id)
        .where(SchemaRunVersionRow.run_id == row.id)
        .order_by(SchemaRunVersionRow.ordinal)
    )
    return SchemaRun(
        channel=channel,
        speaker_id=row.speaker_id,
        speaker_name=row.speaker_name,
        method=row.method,
        basis_count=row.basis_count,
        basis_digest=row.basis_digest,
        basis_message_id=row.basis_message_id,
        states=tuple(_state(version) for version in versions),
        run_id=row.id,
        created_at=row.created_at,
    )
