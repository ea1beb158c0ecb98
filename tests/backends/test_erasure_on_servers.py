"""Forgetting on PostgreSQL and a Chroma server: no row and no vector keeps the speaker, and once
the Chroma server's operator runs ``chroma vacuum`` and ``awai chroma-scrub`` no file of its folder
does.

Every text of every AWAI table (cast to text) and every collection's metadata is checked through
the servers' APIs. The Chroma server's files keep the dropped log rows in free pages until its
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

from sqlalchemy import column, select, table, text

from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from bots.terminal.cli import main as awai
from storage import migrations
from tests.backends.servers import ChromaServer
from tests.test_erasure import CHANNEL, SPEAKER, WORDS, conversation, hits


def test_a_forgotten_speaker_is_in_no_row_and_no_collection_of_the_servers(
    make_runtime: Callable[..., Runtime], chroma_server: ChromaServer
) -> None:
    runtime = make_runtime()
    runtime.engine.ingest(conversation())
    runtime.schemas.recluster(CHANNEL, force=True)
    runtime.schemas.digest(CHANNEL, EVERYTHING)
    assert rows_holding(runtime, WORDS) and vectors_of(runtime, SPEAKER)
    assert hits(chroma_server.path, SPEAKER)  # the server's files hold the speaker's id

    runtime.schemas.forget_speaker(CHANNEL, SPEAKER)

    assert rows_holding(runtime, WORDS) == [] and rows_holding(runtime, SPEAKER) == []
    assert vectors_of(runtime, SPEAKER) == 0
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
