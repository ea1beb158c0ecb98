"""Work done after Slack has been acknowledged, off Bolt's own threads.

Why not Bolt's lazy listeners: they share Bolt's small listener pool with the ``ack()`` functions,
so a few slow readings would delay the next request's acknowledgement past Slack's 3 seconds.
Here acknowledgements stay on Bolt's pool and the slow work runs on two of ours: one thread for
ingest, so a channel's messages, edits and deletes apply in the order Slack sent them, and a
small pool for readings, digests and backfills. A task that fails is logged; it never takes the
app down.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

log = logging.getLogger(__name__)


class Workers:
    def __init__(self, pool_size: int, ack_threads: int) -> None:
        self._ordered = ThreadPoolExecutor(1, thread_name_prefix="awai-slack-ingest")
        self._pool = ThreadPoolExecutor(pool_size, thread_name_prefix="awai-slack-work")
        self._pending = 0
        self._idle = threading.Condition()
        self.listener_executor = _CountedExecutor(self, ack_threads)
        """For Bolt's listeners: counted too, so :meth:`wait_idle` sees work not yet queued."""

    def in_order(self, task: Callable[[], object], name: str) -> None:
        """Run ``task`` after every task queued in order before it (ingest, edits, deletes)."""
        self._start(self._ordered, task, name)

    def soon(self, task: Callable[[], object], name: str) -> None:
        """Run ``task`` on the pool (readings, digests, backfills)."""
        self._start(self._pool, task, name)

    def wait_idle(self, timeout: float) -> bool:
        """Block until no task is queued or running; ``False`` if ``timeout`` passed first."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def shutdown(self) -> None:
        self.listener_executor.shutdown(wait=True)
        self._ordered.shutdown(wait=True, cancel_futures=False)
        self._pool.shutdown(wait=True, cancel_futures=False)

    def _start(self, executor: ThreadPoolExecutor, task: Callable[[], object], name: str) -> None:
        self._begin()
        executor.submit(self._run, task, name)

    def _run(self, task: Callable[[], object], name: str) -> None:
        try:
            task()
        except Exception:
            log.exception("Slack task %s failed", name)
        finally:
            self._end()

    def _begin(self) -> None:
        with self._idle:
            self._pending += 1

    def _end(self) -> None:
        with self._idle:
            self._pending -= 1
            self._idle.notify_all()


class OnePerKey:
    """At most one run per key at a time in this process (a channel's backfill, a workspace's
    catch-up): a run asked for while one goes on is not doubled, and other keys run meanwhile."""

    def __init__(self) -> None:
        self._running: set[str] = set()
        self._lock = threading.Lock()

    def running(self, key: str) -> bool:
        with self._lock:
            return key in self._running

    @contextmanager
    def run(self, key: str) -> Iterator[bool]:
        """Whether this run goes ahead (``False``: one of ``key`` is running already)."""
        with self._lock:
            if key in self._running:
                yield False
                return
            self._running.add(key)
        try:
            yield True
        finally:
            with self._lock:
                self._running.discard(key)


class _CountedExecutor(ThreadPoolExecutor):
    """Bolt's listener pool; its tasks count as pending work of :class:`Workers`."""

    def __init__(self, workers: Workers, threads: int) -> None:
        super().__init__(threads, thread_name_prefix="awai-slack-ack")
        self._workers = workers

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self._workers._begin()
        try:
            future = super().submit(fn, *args, **kwargs)
        except BaseException:
            self._workers._end()
            raise
        future.add_done_callback(lambda _: self._workers._end())
        return future
