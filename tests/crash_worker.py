"""A process to be killed: ingests, edits and deletes a channel, resuming where it stopped.

Loading the embedding model costs seconds, so this runs as a zygote: it loads the model once
(single-threaded, so forking after use is safe), then for each job read from stdin it forks a
worker, reports ``CHILD <pid>``, and ``EXIT <pid> <status>`` when it ends. A worker is a
real AWAI process on its own data folder: :func:`bots.runtime.open_runtime` (which reconciles
the stores), then the job's operations from the last one a cursor in SQL says was finished, as a
bot resumes after a restart (an operation running when the process died is done again).

``pause_at`` names the moment a worker stops and waits to be killed, written
``<operation>:<vector-store method>:<before|after>`` (operation ``start`` is the start-up
reconciliation) or ``<operation>:done`` (finished, not yet recorded in the cursor). A worker
prints ``<pid> PAUSED <point>`` there, ``<pid> STARTED clean`` once open (or ``dirty`` and what a
full audit still finds after the start-up repair), and ``<pid> DONE`` at the end.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

CURSOR = "crash-test-job"
VECTOR_METHODS = ("upsert", "delete_messages", "delete_thoughts_from", "delete_ids")


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

    _say("READY")
    for line in sys.stdin:
        job = json.loads(line)
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                _work(job)
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                os._exit(code)
        _say(f"CHILD {pid}")
        threading.Thread(target=_reap, args=(pid,), daemon=True).start()


def _reap(pid: int) -> None:
    _, status = os.waitpid(pid, 0)
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    _say(f"EXIT {pid} {code}")


def _work(job: dict[str, Any]) -> None:
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
            _say(f"{me} PAUSED {point}")
            while True:
                time.sleep(60)

    for name in VECTOR_METHODS:
        setattr(ChromaVectors, name, _paused(getattr(ChromaVectors, name), name, state, pause))

    runtime = open_runtime(Settings(data_dir=job["data_dir"], _env_file=None))  # type: ignore[call-arg]
    found = audit(runtime.store)
    _say(f"{me} STARTED {'clean' if found.clean else 'dirty: ' + found.summary()}")
    cursor = runtime.store.cursors.get(CURSOR)
    first = int(cursor.cursor) if cursor and cursor.cursor else 0
    for number in range(first, len(job["operations"])):
        state["operation"] = str(number)
        operation = job["operations"][number]
        if operation["kind"] == "ingest":
            runtime.engine.ingest(Utterance(**item) for item in operation["utterances"])
        elif operation["kind"] == "edit":
            runtime.engine.edit(Utterance(**operation["utterance"]))
        else:
            runtime.engine.delete(operation["channel"], operation["message_id"])
        pause(f"{number}:done")
        runtime.store.cursors.save(CURSOR, str(number + 1), number + 1)
    runtime.close()
    _say(f"{me} DONE")


def _paused(
    method: Callable[..., Any], name: str, state: dict[str, str], pause: Callable[[str], None]
) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        pause(f"{state['operation']}:{name}:before")
        result = method(*args, **kwargs)
        pause(f"{state['operation']}:{name}:after")
        return result

    return wrapped


def _say(line: str) -> None:
    os.write(sys.stdout.fileno(), f"{line}\n".encode())


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    main()
