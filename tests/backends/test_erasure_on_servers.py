"""Forgetting on a Chroma server and the fixture's database (PostgreSQL when
``AWAI_TEST_POSTGRES_URL`` names one, else SQLite): no row and no vector keeps the speaker, and
once the Chroma server's operator runs ``chroma vacuum`` and ``awai chroma-scrub`` no file of its
folder does.

Every column of every table the database holds (read through SQLAlchemy's reflection, so one
query suits both dialects) and every collection's metadata is checked through the servers' APIs. The Chroma server's files keep the dropped log rows in free pages until its
``chroma.sqlite3`` is vacuumed, which ``chroma vacuum --path`` does while the server runs, and
leaves a dropped collection's index folder (chroma-core/chroma#5259: its vectors, and at times
bytes of the speaker's metadata from the server's memory in its unused slots), which ``awai
chroma-scrub`` removes: the steps docs/privacy.md asks of operators. PostgreSQL's files are not scanned: AWAI's ``VACUUM``
does not overwrite dead rows, and what can be promised there is in docs/privacy.md.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import LargeBinary, MetaData, Text, cast, select

from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from bots.terminal.cli import main as awai
from storage.vectors import ChromaVectors
from tests.backends.servers import ChromaServer
from tests.test_erasure import CHANNEL, SPEAKER, WORDS, conversation, hits


@pytest.mark.slow
@pytest.mark.parametrize("per_segment", [None, 3], ids=["one segment", "segments of 3"])
def test_a_forgotten_speaker_is_in_no_row_and_no_collection_of_the_servers(
    make_runtime: Callable[..., Runtime],
    chroma_server: ChromaServer,
    monkeypatch: pytest.MonkeyPatch,
    per_segment: int | None,
) -> None:
    if per_segment is not None:  # the channel's vectors in several of the server's collections
        monkeypatch.setattr(ChromaVectors, "segment_vectors", per_segment)
    runtime = make_runtime()
    runtime.engine.ingest(conversation())
    runtime.schemas.recluster(CHANNEL, force=True)
    runtime.schemas.digest(CHANNEL, EVERYTHING)
    theirs = [u.message_id for u in conversation() if u.speaker_id == SPEAKER]
    assert rows_holding(runtime, WORDS) and vectors_of(runtime, theirs)

    runtime.schemas.forget_speaker(CHANNEL, SPEAKER)

    assert rows_holding(runtime, WORDS) == [] and rows_holding(runtime, SPEAKER) == []
    assert vectors_of(runtime, theirs) == 0
    assert runtime.store.pending_erasures() == []

    chroma = Path(sys.executable).with_name("chroma")
    vacuum = [str(chroma), "vacuum", "--path", str(chroma_server.path), "--force"]
    subprocess.run(vacuum, check=True, capture_output=True, timeout=120)
    live = {path.name for path in chroma_server.path.iterdir() if path.is_dir()}
    assert awai(["chroma-scrub", str(chroma_server.path)]) == 0
    left = {path.name for path in chroma_server.path.iterdir() if path.is_dir()}
    assert left < live, "the dropped collection's index folder was on the server's disk"
    assert hits(chroma_server.path, SPEAKER) == []
    assert runtime.engine.context(CHANNEL, "m7", EVERYTHING).thoughts, "the server still reads"


def rows_holding(runtime: Runtime, needle: str) -> list[str]:
    """Tables of the database with a row holding ``needle`` in any column.

    The tables and their columns come from the database itself (reflection), so a table no model
    of this code names is read too. Each column is read as the dialect casts it to text, except
    binary columns, whose bytes are searched for the needle's UTF-8 bytes: the same query holds
    on SQLite and PostgreSQL.
    """
    found = []
    with runtime.store.db.read() as session:
        tables = MetaData()
        tables.reflect(bind=session.connection())
        for name, table in tables.tables.items():
            readable = [
                column if isinstance(column.type, LargeBinary) else cast(column, Text)
                for column in table.columns
            ]
            if any(
                holds(value, needle) for row in session.execute(select(*readable)) for value in row
            ):
                found.append(name)
    return found


def holds(value: object, needle: str) -> bool:
    """Whether one column's value, as text or as bytes, contains ``needle``."""
    if isinstance(value, bytes | memoryview):
        return needle.encode() in bytes(value)
    return value is not None and needle in value


def vectors_of(runtime: Runtime, message_ids: list[str]) -> int:
    """Vectors of these messages in any collection the Chroma database holds (Chroma keeps no
    speaker id beside a vector: a speaker's vectors are their messages')."""
    client = runtime.store.vectors.client
    return sum(
        len(collection.get(where={"message_id": {"$in": message_ids}}, include=[])["ids"])
        for collection in client.list_collections()  # type: ignore[attr-defined]
    )
