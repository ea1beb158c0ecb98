"""Forgetting on PostgreSQL and a Chroma server: no row and no vector keeps the speaker.

What the files of the two servers keep is theirs to scrub (docs/privacy.md: ``VACUUM FULL``, the
WAL and backups on PostgreSQL; ``chroma vacuum`` on the Chroma server's folder); what AWAI can
check through their APIs is checked here: every text of every AWAI table, cast to text, and every
collection's metadata.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import column, select, table, text

from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from storage import migrations
from tests.test_erasure import CHANNEL, SPEAKER, WORDS, conversation


def test_a_forgotten_speaker_is_in_no_row_and_no_collection_of_the_servers(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime()
    runtime.engine.ingest(conversation())
    runtime.schemas.recluster(CHANNEL, force=True)
    runtime.schemas.digest(CHANNEL, EVERYTHING)
    assert rows_holding(runtime, WORDS) and vectors_of(runtime, SPEAKER)

    runtime.schemas.forget_speaker(CHANNEL, SPEAKER)

    assert rows_holding(runtime, WORDS) == [] and rows_holding(runtime, SPEAKER) == []
    assert vectors_of(runtime, SPEAKER) == 0
    assert runtime.store.pending_erasures() == []


def rows_holding(runtime: Runtime, needle: str) -> list[str]:
    """Tables with a row whose text (every column, as the database prints it) holds ``needle``."""
    found = []
    with runtime.store.db.read() as session:
        for name in migrations.metadata().tables:
            whole_row = text(
                f"CAST({session.bind.dialect.identifier_preparer.quote(name)} AS TEXT)"
            )
            rows = session.execute(select(whole_row).select_from(table(name, column("x"))))
            if any(needle in (row[0] or "") for row in rows):
                found.append(name)
    return found


def vectors_of(runtime: Runtime, speaker_id: str) -> int:
    """Vectors of the speaker in any collection the Chroma database holds."""
    client = runtime.store.vectors.client
    return sum(
        len(collection.get(where={"speaker_id": speaker_id}, include=[])["ids"])
        for collection in client.list_collections()  # type: ignore[attr-defined]
    )
