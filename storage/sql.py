"""The relational side: the record of what exists (channels, utterances and their edits, thoughts).

SQL is the source of truth. Chroma holds vectors for rows marked ``synced``; a row is written here
first with ``synced = false``, its vectors go to Chroma, and only then is it marked synced, so a
crash in between leaves a row that reconciliation can finish (see :mod:`storage.store`).

Concurrency (chosen by measurement, see ``bench/concurrent_ingest.py``): SQLite in WAL mode,
short transactions, and two kinds of them.

- :meth:`Database.session` is a *write* transaction. On SQLite it starts with ``BEGIN IMMEDIATE``,
  so it holds the write lock from its first statement: a read-modify-write inside it (check a row,
  then insert it) is atomic across threads and processes, and a second writer waits (the busy
  timeout) instead of failing with "database is locked" when its read snapshot goes stale, which
  is what a deferred transaction that reads and then writes does. Inside one process, writers queue
  on a lock first, which hands the database over at once instead of SQLite's sleep-and-retry.
- :meth:`Database.read` is a read-only snapshot (``BEGIN``, deferred): in WAL mode readers never
  wait for writers nor block them.

A single writer thread fed by a queue was measured against this and gave the same throughput (the
writes that cost are Chroma's, not SQLite's) while working only inside one process; this design
also serialises writers of several processes (a bot and ``awai doctor --repair``).

PostgreSQL (``postgresql+psycopg://…``, several bot processes on several machines) keeps exactly
these semantics rather than a second set: a write transaction first takes a transaction-scoped
advisory lock (``pg_advisory_xact_lock``), PostgreSQL's counterpart of ``BEGIN IMMEDIATE``, so
every check-then-insert of the store is atomic across processes, and the unique constraints are
the last word behind it. A read is a ``REPEATABLE READ`` snapshot, so its several queries agree
as a deferred SQLite transaction's do (READ COMMITTED would give each query its own snapshot).

The tables are made and changed by the Alembic revisions in :mod:`storage.migrations` only.
"""

from __future__ import annotations

import errno
import json
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    Select,
    String,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    false,
    select,
    text,
)
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, OperationalError
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    Session,
    mapped_column,
    relationship,
    sessionmaker,
)

from awai_engine.errors import AwaiError


class Base(DeclarativeBase):
    pass


class ChannelRow(Base):
    __tablename__ = "channels"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(512), unique=True)
    collection: Mapped[str] = mapped_column(String(512), unique=True)
    embedding_model: Mapped[str | None] = mapped_column(String(512))
    dimension: Mapped[int | None] = mapped_column(Integer)
    # Bumped by every change readers must see; a cached read model compares it to stay fresh.
    revision: Mapped[int] = mapped_column(Integer, default=0)
    # A random token given when the row is made: a database reset, restored or replaced counts
    # revisions and row ids again from the same numbers, and must not pass for this one.
    incarnation: Mapped[str | None] = mapped_column(String(32), default=lambda: uuid.uuid4().hex)
    # Bumped by every deletion, withdrawal, revival and forget-me: other processes compare it to
    # know they hold something removed (see ``Reads.removal_mark``); it never goes back.
    removals: Mapped[int] = mapped_column(Integer, default=0, server_default="0")

    @property
    def source(self) -> str:
        """What a read model of the channel was made from: the collection its vectors are in and
        the incarnation of this row (a read model made from another database never matches)."""
        return f"{self.collection}@{self.incarnation or ''}"


class UtteranceRow(Base):
    __tablename__ = "utterances"
    __table_args__ = (
        UniqueConstraint("channel_id", "message_id", name="uq_utterance_message"),
        Index("ix_utterance_order", "channel_id", "ts", "id"),
        # The synced rows after an id, as every catch-up of a read model asks: by channel order
        # alone each such query read all of the channel's rows (7–27 ms at 100,000 messages).
        # Partial, with the catch-up's own predicate: whole, SQLite took it over the index
        # below for the count of unsynced rows, which then read every row of the channel again.
        Index(
            "ix_utterance_arrival",
            "channel_id",
            "id",
            sqlite_where=text("synced IS 1"),
            postgresql_where=text("synced IS true"),
        ),
        Index("ix_utterance_speaker", "channel_id", "speaker_id"),
        # The rows not marked synced yet, alone: every start counts them in every channel
        # (storage.repair), and they are a handful at most; counting them by scanning the
        # channel's rows took 14 ms at 100,000 messages. The predicate is written as the count
        # asks (``synced.is_(False)``), so SQLite, which matches it by form, uses the index.
        Index(
            "ix_utterance_unsynced",
            "channel_id",
            sqlite_where=text("synced IS 0"),
            postgresql_where=text("synced IS false"),
        ),
    )

    # The autoincrement id is the arrival order: it breaks ties between equal timestamps.
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    channel_id: Mapped[int] = mapped_column(ForeignKey("channels.id", ondelete="CASCADE"))
    message_id: Mapped[str] = mapped_column(String(255))
    speaker_id: Mapped[str] = mapped_column(String(255))
    speaker_name: Mapped[str] = mapped_column(String(255))
    text: Mapped[str] = mapped_column(Text)
    ts: Mapped[float] = mapped_column(Float)
    thread_root: Mapped[str | None] = mapped_column(String(255))
    addressees: Mapped[str] = mapped_column(Text, default="[]")
    # Who may see it (see awai_engine.visibility): "channel", or a narrower audience's name.
    scope: Mapped[str] = mapped_column(String(255), default="channel", server_default="channel")
    summary: Mapped[str] = mapped_column(Text, default="")
    synced: Mapped[bool] = mapped_column(Boolean, default=False)
    edited_at: Mapped[float | None] = mapped_column(Float)
    # Thoughts made offline because the language model did not answer: to be rewritten by it.
    extraction_fallback: Mapped[bool] = mapped_column(
        Boolean, default=False, server_default=false()
    )
    # The platform's time of the stored text's last edit (None: the original): older never wins.
    edited_ts: Mapped[float | None] = mapped_column(Float)

    thoughts: Mapped[list[ThoughtRow]] = relationship(
        back_populates="utterance",
        cascade="all, delete-orphan",
        order_by="ThoughtRow.idx",
        passive_deletes=True,
    )
    versions: Mapped[list[UtteranceVersionRow]] = relationship(
        cascade="all, delete-orphan", order_by="UtteranceVersionRow.id", passive_deletes=True
    )

    def addressee_names(self) -> tuple[str, ...]:
        return tuple(json.loads(self.addressees or "[]"))


class UtteranceVersionRow(Base):
    """An earlier text of an edited utterance: the edit history."""

    __tablename__ = "utterance_versions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    utterance_id: Mapped[int] = mapped_column(
        ForeignKey("utterances.id", ondelete="CASCADE"), index=True
    )
    text: Mapped[str] = mapped_column(Text)
    replaced_at: Mapped[float] = mapped_column(Float)


class ThoughtRow(Base):
    __tablename__ = "thoughts"
    __table_args__ = (UniqueConstraint("utterance_id", "idx", name="uq_thought_index"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    utterance_id: Mapped[int] = mapped_column(ForeignKey("utterances.id", ondelete="CASCADE"))
    idx: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)

    utterance: Mapped[UtteranceRow] = relationship(back_populates="thoughts")


class DeletedMessageRow(Base):
    """A tombstone: the id of a deleted message, so redelivery or backfill cannot bring it back.

    ``withdrawn_ts`` is set when the words were edited off the platform rather than deleted (the
    message turned into a command to AWAI, or into a file alone): the platform's time of that
    edit. The message is forgotten all the same, but a later edit that puts words back in it is
    stored again, as the platform shows it. ``None``: deleted or forgotten for good.
    ``speaker_id`` is kept with a withdrawal only, so that the speaker's forget-me can find it and
    make it for good; a tombstone for good names no one.
    """

    __tablename__ = "deleted_messages"

    channel_id: Mapped[int] = mapped_column(
        ForeignKey("channels.id", ondelete="CASCADE"), primary_key=True
    )
    message_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    deleted_at: Mapped[float] = mapped_column(Float, default=time.time)
    withdrawn_ts: Mapped[float | None] = mapped_column(Float)
    speaker_id: Mapped[str | None] = mapped_column(String(255))


BUSY_TIMEOUT_SECONDS = 30.0
# The key of the PostgreSQL advisory lock every write transaction holds ("AWAI" "wrte").
WRITE_LOCK_KEY = 0x41574149_77727465


class DatabaseBusyError(AwaiError, RuntimeError):
    """Another writer held the database for longer than the busy timeout."""


def check_database_url(url: str) -> None:
    """Refuse, in words, a URL SQLAlchemy cannot parse or whose driver is not installed.

    Without this, a typo in ``AWAI_DATABASE_URL`` surfaces as an ``ArgumentError`` or a
    ``ModuleNotFoundError`` from deep inside SQLAlchemy. The URL itself is not repeated: it may
    hold a password.
    """
    example = (
        "e.g. postgresql+psycopg://user:password@host:5432/awai, or leave it unset for the"
        " SQLite file in the data folder"
    )
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise ValueError(f"AWAI_DATABASE_URL is not a database URL ({example})") from None
    try:
        dialect = parsed.get_dialect()
    except NoSuchModuleError:
        raise ValueError(
            f"AWAI_DATABASE_URL names the database kind {parsed.drivername!r}, which SQLAlchemy"
            f" does not know ({example})"
        ) from None
    try:
        dialect.import_dbapi()
    except ImportError as error:
        raise ValueError(
            f"AWAI_DATABASE_URL needs the Python driver {error.name or parsed.drivername!r} for"
            f" {parsed.drivername}, which is not installed: install it, or use a driver that is"
            f" ({example})"
        ) from None


def make_engine(url: str, read_only: bool = False) -> Engine:
    """An engine with SQLite tuned for several threads: WAL, a busy timeout, foreign keys on.

    ``read_only`` opens a SQLite file read-only (a backup on read-only media, a full disk) and
    sets nothing that writes.

    pysqlite's own transaction handling is switched off (``isolation_level = None``) so that the
    ``begin`` event decides how each transaction starts: ``BEGIN IMMEDIATE`` by default, plain
    ``BEGIN`` for connections opened with the ``sqlite_begin="DEFERRED"`` execution option.
    """
    check_database_url(url)
    is_sqlite = url.startswith("sqlite")
    if read_only and is_sqlite:
        path = make_url(url).database
        # Without a WAL file there is nothing to replay: immutable needs no -shm file either.
        immutable = "" if Path(f"{path}-wal").exists() else "&immutable=1"
        url = f"sqlite:///file:{path}?mode=ro{immutable}&uri=true"
    engine = create_engine(
        url,
        connect_args=(
            {"timeout": BUSY_TIMEOUT_SECONDS, "check_same_thread": False} if is_sqlite else {}
        ),
        pool_pre_ping=not is_sqlite,
        # Adapter handlers, the scheduler and readers each hold a connection
        # briefly; SQLite connections are cheap, so the pool never makes a thread wait.
        **({"pool_size": 10, "max_overflow": 40} if is_sqlite else {}),
    )
    if is_sqlite:

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: object) -> None:
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            if not read_only:
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_SECONDS * 1000)}")
            cursor.execute("PRAGMA foreign_keys=ON")
            # A deleted row's bytes are overwritten with zeros, not left in a free page.
            cursor.execute("PRAGMA secure_delete=ON")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(connection: Connection) -> None:
            default = "DEFERRED" if read_only else "IMMEDIATE"  # IMMEDIATE takes a write lock
            mode = connection.get_execution_options().get("sqlite_begin", default)
            connection.exec_driver_sql(f"BEGIN {mode}")

    return engine


class Database:
    """Sessions on one SQLAlchemy engine, its tables brought to the newest migration on open.

    ``read_only``: nothing is migrated (a database at an older revision is refused) and only
    :meth:`read` sessions can work.
    """

    def __init__(self, url: str, read_only: bool = False) -> None:
        from storage import migrations  # imports every model module, so it comes after Base

        self.url = url
        self.read_only = read_only
        self.engine = make_engine(url, read_only)
        if not read_only:
            migrations.upgrade(self.engine)
        elif (at := migrations.current(self.engine)) != migrations.head():
            self.engine.dispose()
            raise RuntimeError(
                f"the database is at revision {at or 'none'} and this AWAI needs"
                f" {migrations.head()}; a read-only database cannot be upgraded: copy the data"
                " folder somewhere writable first"
            )
        self.is_sqlite = url.startswith("sqlite")
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        snapshot = (
            {"sqlite_begin": "DEFERRED"}
            if self.is_sqlite
            else {"isolation_level": "REPEATABLE READ", "postgresql_readonly": True}
        )
        self._snapshots = sessionmaker(
            self.engine.execution_options(**snapshot), expire_on_commit=False
        )
        self._writer = threading.Lock()
        self._writing = threading.local()
        self._statements: dict[Select[Any], tuple[str, tuple[str, ...] | None]] = {}
        self._compile_guard = threading.Lock()

    @contextmanager
    def session(self) -> Iterator[Session]:
        """One short write transaction: committed on success, rolled back on error.

        Keep it short (no model calls, no Chroma calls that can wait): every other writer, of
        this process or another, waits for it.
        """
        if getattr(self._writing, "active", False):
            # A second connection would wait for this thread's own write lock until the timeout.
            raise RuntimeError("A write session was opened inside another on the same thread.")
        if not self._writer.acquire(timeout=BUSY_TIMEOUT_SECONDS):
            raise DatabaseBusyError(
                f"Another write held the database for over {BUSY_TIMEOUT_SECONDS:.0f} s."
            )
        self._writing.active = True
        try:
            with self._sessions() as session, session.begin():
                if not self.is_sqlite:
                    _take_write_lock(session)
                yield session
        except DBAPIError as error:
            if _disk_full(error):  # the error callers know, whichever database said it
                raise OSError(
                    errno.ENOSPC,
                    "No space left on device",
                    self.engine.url.render_as_string(hide_password=True),
                ) from error
            raise
        finally:
            self._writing.active = False
            self._writer.release()

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only snapshot: consistent across its queries, never waiting for writers."""
        with self._snapshots() as session, session.begin():
            yield session

    def scalar(self, query: Select[Any], **params: Any) -> Any:
        """The first value of a read-only ``query`` (a module's constant, with named bind
        parameters of plain values), or ``None`` when it finds no row: read on a pooled driver
        connection, outside any session, as a statement of its own (it sees every write
        committed before it, and never waits for a writer).

        Why not :meth:`read`: a reading asks its channel's revision every time (to see a change
        another process made before it answers), and an ORM session cost that about 0.27 ms, a
        plain SQLAlchemy connection 0.07 ms, the driver's own cursor 0.012 ms.
        """
        sql, names = self._compiled(query)
        values = tuple(params[name] for name in names) if names is not None else params
        connection = self.engine.raw_connection()
        try:
            cursor = connection.cursor()
            try:
                cursor.execute(sql, values)
                row = cursor.fetchone()
            finally:
                cursor.close()
        finally:
            connection.close()  # back to the pool, which ends a transaction the driver began
        return None if row is None else row[0]

    def _compiled(self, query: Select[Any]) -> tuple[str, tuple[str, ...] | None]:
        """``query``'s SQL for this database, and its parameters' order (``None``: by name)."""
        with self._compile_guard:
            found = self._statements.get(query)
            if found is None:
                compiled = query.compile(dialect=self.engine.dialect)
                order = tuple(compiled.positiontup or ()) if compiled.positional else None
                found = self._statements[query] = (compiled.string, order)
            return found

    def channel(self, session: Session, key: str) -> ChannelRow | None:
        return session.scalars(select(ChannelRow).where(ChannelRow.key == key)).one_or_none()

    def scrub(self) -> None:
        """Leave no deleted bytes in the database's files (after a forget or a delete).

        SQLite: deleted rows were zeroed as they went (``secure_delete``); ``VACUUM`` rebuilds the
        file without free pages, and a ``TRUNCATE`` checkpoint empties the write-ahead log, which
        holds earlier page images. PostgreSQL: ``VACUUM`` makes dead row versions reusable, but
        neither it nor anything short of ``VACUUM FULL`` (which locks each table while it
        rewrites it) takes their bytes out of the table files, and the server's own write-ahead
        log and backups keep them until recycled: ``docs/privacy.md`` says what to run.
        """
        with self._writer:
            raw = self.engine.raw_connection()
            try:
                cursor = raw.cursor()
                if self.is_sqlite:
                    cursor.execute("VACUUM")
                    cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                else:
                    raw.commit()
                    raw.driver_connection.autocommit = True  # type: ignore[union-attr]  # VACUUM refuses a transaction
                    cursor.execute("VACUUM")
                    raw.driver_connection.autocommit = False  # type: ignore[union-attr]  # a pooled one has it
                cursor.close()
            finally:
                raw.close()

    def dispose(self) -> None:
        self.engine.dispose()


def _disk_full(error: DBAPIError) -> bool:
    """SQLite's ``SQLITE_FULL`` (13) or PostgreSQL's ``disk_full`` (SQLSTATE 53100)."""
    return (
        getattr(error.orig, "sqlite_errorcode", None) == 13
        or getattr(error.orig, "sqlstate", None) == "53100"
    )


def _take_write_lock(session: Session) -> None:
    """PostgreSQL: wait (up to the busy timeout) for the database-wide write lock."""
    try:
        session.execute(text(f"SET LOCAL lock_timeout = '{int(BUSY_TIMEOUT_SECONDS * 1000)}ms'"))
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": WRITE_LOCK_KEY})
    except OperationalError as error:
        raise DatabaseBusyError(
            f"Another write held the database for over {BUSY_TIMEOUT_SECONDS:.0f} s."
        ) from error
