"""The loop of a test worker that is killed on purpose: fork a child per job read from stdin.

Why: the crash tests SIGKILL writers at chosen moments; a worker that imports (and warms) what the
writers use once, then forks a child per job, starts each writer in milliseconds, so the kill
lands in the write and not in start-up. The parent says ``READY``, ``CHILD pid`` per job and
``EXIT pid code`` when a child ends (``-signal`` when killed); a child's own lines go through
:func:`say` too, unbuffered, so the test reads them as they happen.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any


def serve(work: Callable[[dict[str, Any]], None]) -> None:
    """Run ``work`` in a forked child for each JSON job on stdin, until stdin closes."""
    say("READY")
    for line in sys.stdin:
        job = json.loads(line)
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                work(job)
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                os._exit(code)
        say(f"CHILD {pid}")
        threading.Thread(target=_reap, args=(pid,), daemon=True).start()


def say(line: str) -> None:
    """One line to the test, written at once (a killed child leaves no buffered line behind)."""
    os.write(sys.stdout.fileno(), f"{line}\n".encode())


def _reap(pid: int) -> None:
    _, status = os.waitpid(pid, 0)
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    say(f"EXIT {pid} {code}")
