"""A process to be killed while it writes a channel's read-model file, at any step of the write.

Run as ``python -m tests.append_worker`` and driven like :mod:`tests.crash_worker` (the same
lines: ``READY``, ``CHILD <pid>``, ``<pid> PAUSED <point>``, ``<pid> DONE <steps>``,
``EXIT <pid> <status>``), so ``tests.test_crash_safety.Zygote`` drives it. It imports what a
write needs once, then forks a worker per job read from stdin.

A job names two read-model folders of one channel: ``target``, whose file holds a prefix of the
channel (or none), and ``source``, whose file holds the whole of it. The worker loads both,
appends the messages the target lacks to the target's timeline as the read model does when it
catches up, and saves it (:meth:`storage.read_model_files.ReadModelFiles.save`: an append to
the target's file, or a whole new one if it has none). A job with ``cut`` instead cuts the
target's file to that many messages (:meth:`storage.read_model_files.ReadModelFiles.cut`, as a
change other than an append does: a new generation of the kept messages, the old one shredded),
saying they were checked at ``revision``. Every call that changes the disk in that save or cut
(``os.write``, ``pwrite``, ``copy_file_range``, ``ftruncate``, ``fsync``, ``replace``) is a step; the worker stops after step
``pause_at`` and waits to be killed. No SQL and no vector store are involved: what is under test
is the file's write path alone, every step of it.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from tests.fork_server import say, serve

if TYPE_CHECKING:
    from awai_engine.timeline import Timeline

STEPS = ("write", "ftruncate", "fsync", "replace", "copy_file_range", "pwrite")


def main() -> None:
    import storage.read_model_files  # noqa: F401  (import once, before forking)

    serve(_work)


def _work(job: dict[str, Any]) -> None:
    from awai_engine import mapped_rows
    from awai_engine.recall_index import RecallIndexRules, RecallIndexSettings
    from storage import read_model_files
    from storage.read_model_files import ReadModelFiles, Snapshot

    me = os.getpid()
    index = RecallIndexSettings(rules=RecallIndexRules(**job["index"]))
    if "cut" in job:
        _cut(job, index, me)
        return
    source = ReadModelFiles(Path(job["source"])).load(job["channel"], index)
    target_files = ReadModelFiles(Path(job["target"]))
    target = target_files.load(job["channel"], index)
    assert source is not None
    timeline = target.timeline if target is not None else None
    if timeline is None:
        from awai_engine.timeline import Timeline

        timeline = Timeline(dimension=source.timeline.dimension, index=index)
    whole = source.timeline
    loaded = len(timeline.messages) if target is not None else 0
    append_rest(timeline, whole, loaded)
    timeline.revision = whole.revision
    if loaded and len(timeline.messages) > loaded:
        # What a loaded channel holds once appended to: the file's rows still mapped from it,
        # the appended ones in memory after them (awai_engine.mapped_rows); that is what is saved.
        assert mapped_rows.file_backing(timeline.vectors) is not None
    steps = _Pauses(job["pause_at"], me)
    read_model_files.os = _Counted(os, steps)  # type: ignore[attr-defined]
    snapshot = Snapshot(
        timeline, source.last_id, source.fingerprint, source.text_bytes, source.source
    )
    written = target_files.save(
        job["channel"], snapshot, lambda *_: True, target.written if target else None
    )
    assert written is not None, "the save wrote nothing"
    say(f"{me} DONE {steps.counted}")


def _cut(job: dict[str, Any], index: Any, me: int) -> None:
    """Cut the target's file to the job's first ``cut`` messages, step by step (see above)."""
    from storage import read_model_cut, read_model_files
    from storage.read_model_files import ReadModelFiles
    from storage.read_model_keys import HeldRows, Kept

    def kept(held: HeldRows, source: str) -> Kept:
        return Kept(job["cut"], job["revision"], int(held.keys.ids[job["cut"] - 1]), "cut")

    steps = _Pauses(job["pause_at"], me)
    read_model_files.os = read_model_cut.os = _Counted(os, steps)  # type: ignore[attr-defined]
    written = ReadModelFiles(Path(job["target"])).cut(job["channel"], index, kept)
    assert written is not None and written.messages == job["cut"], "the cut kept nothing"
    say(f"{me} DONE {steps.counted}")


class _Pauses:
    """Counts the steps; stops after step ``pause_at`` until killed."""

    def __init__(self, pause_at: int, me: int) -> None:
        self.pause_at, self.me, self.counted = pause_at, me, 0

    def __call__(self) -> None:
        self.counted += 1
        if self.counted == self.pause_at:
            say(f"{self.me} PAUSED {self.counted}")
            while True:
                time.sleep(60)


class _Counted(ModuleType):
    """The ``os`` module as the file writer sees it: each step counted, then ``pause()``."""

    def __init__(self, real: ModuleType, pause: Callable[[], None]) -> None:
        super().__init__("os")
        self._real, self._pause = real, pause

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._real, name)
        if name not in STEPS:
            return found

        def step(*args: Any, **kwargs: Any) -> Any:
            result = found(*args, **kwargs)
            self._pause()
            return result

        return step


def append_rest(timeline: Timeline, whole: Timeline, start: int) -> None:
    """Append ``whole``'s messages from position ``start`` on to ``timeline``, one by one, as
    the read model appends the rows it catches up with."""
    for position in range(start, len(whole.messages)):
        message = whole.messages[position]
        rows = whole.rows_of(position)
        timeline.append(
            message.ref,
            message.text,
            message.summary,
            message.thoughts,
            whole.vectors[rows.start : rows.stop],
            message.addressees,
        )


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    main()
