"""`awai doctor` finds each kind of disagreement between SQL and Chroma, and --repair fixes it.

The faults are made the way they happen: a vector write that fails halfway through an edit or a
delete (the process would have died there), a vector lost from Chroma, a vector left behind with no
message. After the repair both stores must hold what a run without faults holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import pytest

from awai_engine.reconcile import audit, reconcile
from awai_engine.samples import SAMPLES
from bots.runtime import Runtime, open_runtime
from bots.terminal.cli import main
from bots.terminal.transcript import read_transcript
from storage.vectors import collection_name
from tests.store_state import assert_same, assert_stored_once, stored_state

CHANNEL = "terminal:local:doctor"
EDITED = "m007"
NEW_TEXT = "Actually, let's move the launch. QA needs another week. Marketing agrees."
DELETED = "m009"
LOST = "m004"


class Crash(RuntimeError):
    """Stands for the process dying at that moment."""


@contextmanager
def failing(runtime: Runtime, method: str) -> Iterator[None]:
    """The next call to the vector store's ``method`` fails, as if the process died in it."""
    vectors = runtime.store.vectors
    original = getattr(vectors, method)

    def crash(*args: object, **kwargs: object) -> None:
        setattr(vectors, method, original)
        raise Crash(method)

    setattr(vectors, method, crash)
    try:
        yield
    finally:
        setattr(vectors, method, original)


def _ingest(runtime: Runtime) -> None:
    transcript = read_transcript(SAMPLES["en"].path, "doctor", 10**9)
    runtime.engine.ingest(transcript.utterances[:16])


def _edit(runtime: Runtime) -> bool:
    original = runtime.store.timeline(CHANNEL).messages[6]
    assert original.message_id == EDITED
    edited = read_transcript(SAMPLES["en"].path, "doctor", 10**9).utterances[6]
    return runtime.engine.edit(edited.model_copy(update={"text": NEW_TEXT}))


def _break(runtime: Runtime) -> int:
    """One of each fault: an edit and a delete cut short, a vector lost, an orphan vector.

    Returns how many vectors the cut-short delete left behind.
    """
    timeline = runtime.store.timeline(CHANNEL)
    left_behind = len(timeline.messages[timeline.position_of[DELETED]].thoughts)
    with failing(runtime, "upsert"), pytest.raises(Crash):
        _edit(runtime)  # new text and thoughts in SQL, old vectors removed, new ones not written
    with failing(runtime, "delete_messages"), pytest.raises(Crash):
        runtime.engine.delete(CHANNEL, DELETED)  # row and tombstone gone/written, vectors left
    collection = collection_name(CHANNEL)
    runtime.store.vectors.delete_messages(collection, [LOST])
    ghost = np.full((1, 384), 1 / np.sqrt(384), dtype=np.float32)
    runtime.store.vectors.upsert(
        collection, ["ghost#0"], ghost, [{"message_id": "ghost", "thought": 0, "speaker_id": "x"}]
    )
    return left_behind


@pytest.fixture
def clean_state(make_runtime: Callable[..., Runtime]) -> dict:
    """What the same operations leave when nothing goes wrong."""
    runtime = make_runtime("clean")
    _ingest(runtime)
    assert _edit(runtime)
    runtime.engine.delete(CHANNEL, DELETED)
    return stored_state(runtime.store, runtime.engine, CHANNEL)


def test_audit_names_each_injected_fault(runtime: Runtime) -> None:
    _ingest(runtime)
    left_behind = _break(runtime)
    [found] = audit(runtime.store).channels
    assert found.unfinished_edits == 1 and found.unfinished_writes == 0
    assert found.missing_vectors == 1
    assert found.orphan_vectors == 1 + left_behind  # the ghost and the deleted message's
    assert {EDITED, LOST, "ghost#0"} <= set(found.examples)
    assert not found.repaired


@pytest.mark.slow
def test_doctor_reports_then_repairs_to_the_state_of_a_run_without_faults(
    runtime: Runtime,
    clean_state: dict,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "220")
    _ingest(runtime)
    _break(runtime)
    data_dir = str(runtime.settings.data_dir)

    assert main(["--data-dir", data_dir, "doctor"]) == 1
    table = capsys.readouterr().out
    assert "│ doctor " in table and "needs repair" in table and "awai doctor --repair" in table

    assert main(["--data-dir", data_dir, "doctor", "--repair"]) == 0
    assert "repaired" in capsys.readouterr().out

    assert main(["--data-dir", data_dir, "doctor"]) == 0
    assert "ok" in capsys.readouterr().out.split()
    state = stored_state(runtime.store, runtime.engine, CHANNEL)
    assert_stored_once(state)
    assert state["messages"][EDITED]["text"] == NEW_TEXT
    assert_same(state, clean_state)


@pytest.mark.slow
def test_every_start_repairs_what_a_crash_left_and_costs_only_counts_otherwise(
    runtime: Runtime, clean_state: dict
) -> None:
    _ingest(runtime)
    assert audit(runtime.store, thorough=False).channels[0].checked == "counts"
    _break(runtime)
    restarted = open_runtime(runtime.settings)
    try:
        assert audit(restarted.store).clean
        assert_same(stored_state(restarted.store, restarted.engine, CHANNEL), clean_state)
        again = reconcile(restarted.store, restarted.engine.embedder)
        assert again.clean and again.channels[0].checked == "counts"
    finally:
        restarted.close()


def test_a_channel_embedded_by_another_model_keeps_its_pending_messages_for_reembed(
    runtime: Runtime,
) -> None:
    _ingest(runtime)
    with failing(runtime, "upsert"), pytest.raises(Crash):
        _edit(runtime)
    other = runtime.engine.embedder.model_name + "-elsewhere"
    with runtime.store.db.session() as session:
        runtime.store.db.channel(session, CHANNEL).embedding_model = other  # type: ignore[union-attr]
    [report] = reconcile(runtime.store, runtime.engine.embedder).channels
    assert not report.repaired and "awai reembed" in (report.not_repaired_because or "")
    assert audit(runtime.store).channels[0].unfinished_edits == 1


@pytest.mark.slow
def test_doctor_repair_extracts_again_the_thoughts_an_upgrade_deleted(
    runtime: Runtime, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Upgrades to 0003 and 0006 on SQLite deleted every thought (fixed in the migrations); a
    folder so damaged kept its messages' texts, and the reconciliation then removed their
    vectors as orphans. Doctor finds messages without thoughts and extracts them again."""
    monkeypatch.setenv("COLUMNS", "220")
    _ingest(runtime)
    before = stored_state(runtime.store, runtime.engine, CHANNEL)
    with runtime.store.db.engine.begin() as connection:
        connection.exec_driver_sql("DELETE FROM thoughts")  # what the cascade did
    runtime.store.read_model.forget(CHANNEL)
    first = reconcile(runtime.store, runtime.engine.embedder).channels[0]  # a start
    assert first.orphan_vectors and first.lost_thoughts == 16 and not first.repaired
    again = reconcile(runtime.store, runtime.engine.embedder).channels[0]  # the next start
    assert again.lost_thoughts == 16 and "awai doctor --repair" in (
        again.not_repaired_because or ""
    )
    assert EDITED not in runtime.store.timeline(CHANNEL).position_of  # unreadable now
    data_dir = str(runtime.settings.data_dir)

    assert main(["--data-dir", data_dir, "doctor"]) == 1
    assert "thoughts lost" in capsys.readouterr().out
    assert main(["--data-dir", data_dir, "doctor", "--repair"]) == 0
    assert main(["--data-dir", data_dir, "doctor"]) == 0
    capsys.readouterr()

    runtime.store.read_model.forget(CHANNEL)
    assert_same(stored_state(runtime.store, runtime.engine, CHANNEL), before)


def test_messages_set_aside_for_lost_thoughts_leave_a_timeline_another_process_holds(
    make_runtime: Callable[..., Runtime],
) -> None:
    """Setting messages aside moves the channel's revision: a process holding the channel's
    timeline from before would otherwise go on reading messages whose thoughts are gone."""
    repairer = make_runtime("data")
    reader = make_runtime("data")  # another process of the deployment, on the same folder
    _ingest(repairer)
    assert EDITED in reader.store.timeline(CHANNEL).position_of  # held in its memory
    with repairer.store.db.engine.begin() as connection:
        connection.exec_driver_sql("DELETE FROM thoughts")  # what the cascade did
    repairer.store.read_model.forget(CHANNEL)
    report = reconcile(repairer.store, repairer.engine.embedder).channels[0]  # a start
    assert report.lost_thoughts == 16 and not report.repaired

    assert EDITED not in reader.store.timeline(CHANNEL).position_of
