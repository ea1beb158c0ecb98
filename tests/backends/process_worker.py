"""One bot process of ``test_several_processes.py``: runs the same work as its peers, at once.

Run as ``python -m tests.backends.process_worker WORKDIR NAME PEERS``; the storage settings come
from the environment (``AWAI_DATABASE_URL``, ``AWAI_CHROMA_URL``), as a deployed bot's do. Before
each step every process waits for the others (files in WORKDIR), so the steps really overlap:
start the scheduler on the shared job store, ingest the same transcript, store three edits of
its last message (in opposite orders), claim the same reading requests, fire the scheduled re-clustering, fire the scheduled digest. It prints one JSON line
saying what this process did.
"""

from __future__ import annotations

import json
import sys
import time
from datetime import UTC, timedelta
from pathlib import Path

CHANNEL = "terminal:local:shared"
READING_KEYS = tuple(f"slack:reading:C1:{n}.000100:U{n % 3}" for n in range(20))
POSTER = "test-poster"
BARRIER_TIMEOUT_SECONDS = 120.0
EDITS = 3


def edited(text: str, n: int) -> str:
    return f"{text} (edit {n})"


def barrier(workdir: Path, step: str, name: str, peers: int) -> None:
    """Wait until every peer has reached ``step``."""
    (workdir / f"{step}.{name}").touch()
    deadline = time.monotonic() + BARRIER_TIMEOUT_SECONDS
    while len(list(workdir.glob(f"{step}.*"))) < peers:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the other processes never reached {step}")
        time.sleep(0.01)


def main(workdir: Path, name: str, peers: int) -> None:
    from apscheduler.schedulers.background import BackgroundScheduler

    from awai_engine.samples import SAMPLES
    from awai_engine.settings import load_settings
    from bots.runtime import open_runtime
    from bots.scheduler import SchedulerService, digest_job, recluster_job
    from bots.terminal.transcript import read_transcript

    runtime = open_runtime(load_settings())
    utterances = read_transcript(SAMPLES["en"].path, "shared", 10**9).utterances
    done = {"name": name, "reclustered": 0, "posted": 0}

    barrier(workdir, "start", name, peers)
    service = SchedulerService(runtime, BackgroundScheduler(timezone=UTC), name="worker")
    service.start(paused=True)
    service.schedule_digest(CHANNEL, POSTER, every=timedelta(hours=1))
    recluster_now = service.recluster_now

    def counted_recluster():  # type: ignore[no-untyped-def]
        done["reclustered"] += 1
        return recluster_now()

    service.recluster_now = counted_recluster  # type: ignore[method-assign]
    service.add_digest_poster(POSTER, lambda channel, digest: done.update(posted=1))

    barrier(workdir, "ingest", name, peers)
    runtime.engine.ingest(utterances)

    barrier(workdir, "versions", name, peers)
    last = utterances[-1]
    versions = [
        last.model_copy(update={"text": edited(last.text, n), "edited_ts": last.ts + n})
        for n in range(1, EDITS + 1)
    ]
    for version in versions if name == "one" else reversed(versions):
        runtime.engine.ingest([version])

    barrier(workdir, "claims", name, peers)
    done["won"] = [key for key in READING_KEYS if runtime.store.claims.claim(key, 60)]

    barrier(workdir, "recluster", name, peers)
    recluster_job("worker")  # what the stored job calls when each process's scheduler fires it

    barrier(workdir, "digest", name, peers)
    digest_job("worker", POSTER, CHANNEL)

    barrier(workdir, "end", name, peers)
    service.shutdown(wait=False)
    runtime.close()
    print(json.dumps(done), flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]))
