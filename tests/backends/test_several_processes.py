"""Two bot processes on one PostgreSQL and one Chroma server behave like one.

Two real processes (``process_worker.py``) start their schedulers on the shared job store, then
at the same moments ingest the same transcript, store three versions of one message (one process
oldest first, the other newest first), claim the same twenty reading requests, fire the
scheduled re-clustering and fire the scheduled digest. Every message and vector is stored once,
the newest version wins, each request is answered by exactly one of them, and the re-clustering and the digest run once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from bots.runtime import Runtime
from tests.backends.process_worker import CHANNEL, EDITS, READING_KEYS, edited
from tests.conftest import StorageOverrides
from tests.store_state import assert_stored_once, stored_state

REPO = Path(__file__).resolve().parents[2]
PROCESSES = ("one", "two")
TIMEOUT_SECONDS = 300


@pytest.mark.slow
def test_two_processes_store_once_answer_each_request_once_and_run_each_job_once(
    storage_overrides: StorageOverrides,
    make_runtime: Callable[..., Runtime],
    tmp_path: Path,
) -> None:
    where = storage_overrides("shared")
    env = {
        **os.environ,
        "AWAI_DATA_DIR": str(tmp_path / "shared"),
        "AWAI_CHROMA_URL": str(where["chroma_url"]),
        "OMP_NUM_THREADS": "1",
    }
    if "database_url" in where:  # PostgreSQL; else both share the SQLite file of the folder
        env["AWAI_DATABASE_URL"] = str(where["database_url"])
    worker = [sys.executable, "-m", "tests.backends.process_worker", str(tmp_path)]
    workers = [
        subprocess.Popen(
            [*worker, name, str(len(PROCESSES))],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in PROCESSES
    ]
    outputs = [worker.communicate(timeout=TIMEOUT_SECONDS) for worker in workers]
    for process, (_, err) in zip(workers, outputs, strict=True):
        assert process.returncode == 0, err
    done = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]

    won = [set(report["won"]) for report in done]
    assert won[0].isdisjoint(won[1]) and won[0] | won[1] == set(READING_KEYS)
    assert sum(report["reclustered"] for report in done) == 1
    assert sum(report["posted"] for report in done) == 1

    runtime = make_runtime("shared")
    state = stored_state(runtime.store, runtime.engine, CHANNEL)
    assert_stored_once(state)
    assert len(state["messages"]) == 55 and len(state["readings"]) == 55
    last = runtime.store.timeline(CHANNEL).messages[-1]
    assert last.text.endswith(edited("", EDITS)), "the newest version won in both processes"
    assert runtime.schemas.pending() == []  # the one re-clustering covered everything stored
