"""A process to be killed: ingests, edits and deletes a channel, resuming where it stopped.

Loading the embedding model costs seconds, so this runs as a zygote: it loads the model once
(single-threaded, so forking after use is safe), then for each job read from stdin it forks a
worker, reports ``CHILD <pid>``, and ``EXIT <pid> <status>`` when it ends. A worker is a
real AWAI process on its own data folder: :func:`bots.runtime.open_runtime` (which reconciles
the stores), then the job's operations from the last one a cursor in SQL says was finished, as a
bot resumes after a restart (an operation running when the process died is done again).

``pause_at`` names the moment a worker stops and waits to be killed, written
``<operation>:<vector-store method>:<before|after>`` (``_open_segment``: a roll-over; ``drop``:
a collection dropped, as a forget's compaction drops the old one; operation
``start`` is the start-up reconciliation) or ``<operation>:done`` (finished, not yet recorded in
the cursor). A worker prints ``<pid> PAUSED <point>`` there, ``<pid> STARTED clean`` once open
(or ``dirty`` and what a full audit still finds after the start-up repair), and ``<pid> DONE`` at
the end.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from typing import Any

from tests.fork_server import say, serve

CURSOR = "crash-test-job"
VECTOR_METHODS = (
    "upsert",
    "_open_segment",
    "delete_messages",
    "delete_thoughts_from",
    "delete_ids",
    "drop",
)
# Vectors per Chroma segment in a worker: a few, so the job's writes roll over into new segments
# again and again and the kills land around a roll-over too (storage.vectors, SEGMENT_VECTORS).
SEGMENT_VECTORS = 4
# Messages per ingest chunk in a worker: fewer than a job's ingest holds, so each ingest spans
# chunks and the kills land while the next chunk's thoughts are embedded ahead on the encoder's
# own thread (Embedder.encode_ahead) as well.
INGEST_CHUNK = 2


def main() -> None:
    # One encoder thread: a forked child inherits no thread pool, so none may exist. Set in the
    # environment, so the workers' own settings name the same (already loaded) encoder.
    os.environ["AWAI_EMBEDDING__THREADS"] = "1"
    from awai_engine.settings import load_settings

    settings = load_settings(_env_file=None)
    from awai_engine.embedding import Embedder

    Embedder(settings.embedding).encode_uncached(["warm the model up before forking"])
    import chromadb.api.rust  # noqa: F401  (import what the workers use, once)

    import bots.runtime  # noqa: F401

    serve(_work)


def _work(job: dict[str, Any]) -> None:
    from awai_engine import engine as engine_module
    from awai_engine.reconcile import audit
    from awai_engine.settings import Settings
    from awai_engine.values import Utterance
    from bots.runtime import open_runtime
    from storage.vectors import ChromaVectors

    me = os.getpid()
    state = {"operation": "start"}
    pause_at = job.get("pause_at")

    def pause(point: str) -> None:
        if point == pause_at:
            say(f"{me} PAUSED {point}")
            while True:
                time.sleep(60)

    ChromaVectors.segment_vectors = SEGMENT_VECTORS
    engine_module.INGEST_CHUNK = INGEST_CHUNK
    for name in VECTOR_METHODS:
        setattr(ChromaVectors, name, _paused(getattr(ChromaVectors, name), name, state, pause))

    runtime = open_runtime(Settings(data_dir=job["data_dir"], _env_file=None))  # type: ignore[call-arg]
    found = audit(runtime.store)
    say(f"{me} STARTED {'clean' if found.clean else 'dirty: ' + found.summary()}")
    cursor = runtime.store.cursors.get(CURSOR)
    first = int(cursor.cursor) if cursor and cursor.cursor else 0
    for number in range(first, len(job["operations"])):
        state["operation"] = str(number)
        operation = job["operations"][number]
        if operation["kind"] == "ingest":
            runtime.engine.ingest(Utterance(**item) for item in operation["utterances"])
        elif operation["kind"] == "edit":
            runtime.engine.edit(Utterance(**operation["utterance"]))
        elif operation["kind"] == "forget":
            runtime.schemas.forget_speaker(operation["channel"], operation["speaker_id"])
        else:
            runtime.engine.delete(operation["channel"], operation["message_id"])
        pause(f"{number}:done")
        runtime.store.cursors.save(CURSOR, str(number + 1), number + 1)
    runtime.close()
    say(f"{me} DONE")


def _paused(
    method: Callable[..., Any], name: str, state: dict[str, str], pause: Callable[[str], None]
) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        pause(f"{state['operation']}:{name}:before")
        result = method(*args, **kwargs)
        pause(f"{state['operation']}:{name}:after")
        return result

    return wrapped


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    main()
