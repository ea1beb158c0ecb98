"""Making a speaker's runs up their fixed points, in this process or in worker processes.

Why processes: re-clustering a whole channel is one chain of runs per speaker, independent of
the others, and most of a chain's time is Python (HDBSCAN's tree, Prim's loop, the cohesion
floors), which threads do not run in parallel. A worker gets only what its chain needs: the
speaker's thoughts at the last point to make (one :class:`Basis`: vectors, keys, texts), the
points, the run below the first of them and the neighbours the job kept (:class:`ChainMemo`).
It opens nothing (no database, no read model) and stores nothing: the runs come back to the
job, which stores them. So a worker's memory is the interpreter, the libraries and one
speaker's clustering, not the runtime's; and a worker that dies leaves nothing half-written.

The same :func:`walk` runs in the job's own process when a pool would not pay (one speaker to
do, or ``recluster_processes`` = 1), so both ways make the same runs bit for bit.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from multiprocessing.context import BaseContext

from awai_engine.schemas.basis import Basis
from awai_engine.schemas.build import cluster_run
from awai_engine.schemas.clustering import ChainMemo
from awai_engine.schemas.fixed_points import is_fixed_point
from awai_engine.schemas.model import SchemaRun
from awai_engine.settings import SchemaSettings

GROUP_THOUGHTS = 256  # thoughts of the chains handed to a worker at once (see grouped)
MAX_PROCESSES = 8  # the default's bound: each worker holds a speaker's n² matrix (144 MB at 6k)
# Imported once by the fork server and inherited by every worker it forks: the clustering's
# libraries take seconds to import, which each worker would pay again.
PRELOAD = ["__main__", __name__, "awai_engine.schemas.clustering_libraries"]


@dataclass(frozen=True)
class Point:
    """One run to make: the speaker's first ``count`` thoughts, their fingerprint, and the
    speaker's name as of the last of them (a basis carries it; a speaker may rename)."""

    count: int
    digest: str
    speaker_name: str


@dataclass(frozen=True)
class ChainWork:
    """A speaker's runs to make, in order, each taking its ids from the fixed point below
    (``before`` for the first); ``basis`` holds the thoughts of the last point."""

    basis: Basis
    points: tuple[Point, ...]
    before: SchemaRun | None
    memo: ChainMemo | None
    settings: SchemaSettings


@dataclass(frozen=True)
class ChainDone:
    """The runs made, in order, and the memo to keep for the job's next run (``None`` for a
    speaker clustered exactly, which needs no neighbours)."""

    runs: tuple[SchemaRun, ...]
    memo: ChainMemo | None


def walk(work: ChainWork) -> ChainDone:
    """Cluster each point of ``work`` in order; each point's thoughts extend the last's, so the
    memo carries the neighbours up (the speed, never the labels, changes with it)."""
    before = work.before
    memo = work.memo or ChainMemo()
    runs = []
    for point in work.points:
        run = cluster_run(_head(work.basis, point), before, work.settings, memo)
        runs.append(run)
        if is_fixed_point(point.count, work.settings.rules.fixed_point_bits):
            before = run  # the next point's ids come from this one
    return ChainDone(tuple(runs), memo if memo.neighbours is not None else None)


def walk_all(works: Sequence[ChainWork]) -> list[ChainDone]:
    """:func:`walk` each of a group of chains (what a worker is handed: :func:`grouped`)."""
    return [walk(work) for work in works]


def grouped(
    chains: Iterable[tuple[str, ChainWork]], thoughts: int = GROUP_THOUGHTS
) -> Iterator[list[tuple[str, ChainWork]]]:
    """The chains in order, in groups that close once they hold ``thoughts`` thoughts.

    Why: most speakers of a real channel say a few messages, and each chain handed to a worker
    alone cost a round trip through the job's process (a result to take, the next chain to
    pickle and send) that took as long as clustering it: a channel of 8,455 speakers kept its
    two workers waiting a third of the time. The thoughts sent are the last point's."""
    group: list[tuple[str, ChainWork]] = []
    held = 0
    for item in chains:
        group.append(item)
        held += item[1].points[-1].count
        if held >= thoughts:
            yield group
            group, held = [], 0
    if group:
        yield group


def _head(basis: Basis, point: Point) -> Basis:
    """The basis of the speaker's first ``point.count`` thoughts: what
    :meth:`.basis.SpeakerRows.head` cuts for them (the vectors' prefix, same bits)."""
    count = point.count
    return replace(
        basis,
        speaker_name=point.speaker_name,
        keys=basis.keys[:count],
        texts=basis.texts[:count],
        message_ids=basis.message_ids[:count],
        positions=basis.positions[:count].copy(),
        rows=basis.rows.head(count),
        digest=point.digest,
    )


def processes(setting: int, chains: int) -> int:
    """Worker processes for ``chains`` speakers' chains: ``setting``, or for 0 one per core
    (at most :data:`MAX_PROCESSES`); never more than the chains. 1 means none: the job's own
    process walks them."""
    wanted = setting or min(MAX_PROCESSES, os.cpu_count() or 1)
    return max(1, min(wanted, chains))


def pool(workers: int, blas_threads: int | None) -> ProcessPoolExecutor:
    """Worker processes forked from a server that has the clustering's libraries imported.

    A fork server, not ``fork``: the job's process has other threads (a bot's, Chroma's), and
    forking them is unsafe; not ``spawn``: each worker would import numpy, scipy and hdbscan
    again (1.6 s of CPU each here). BLAS is capped as in the job's process (``Engine``): the
    neighbour search's many small products on a BLAS thread pool spin on a shared machine.
    """
    context: BaseContext = multiprocessing.get_context("spawn")
    if "forkserver" in multiprocessing.get_all_start_methods():  # not on Windows
        server = multiprocessing.get_context("forkserver")
        server.set_forkserver_preload(PRELOAD)
        context = server
    return ProcessPoolExecutor(
        workers, mp_context=context, initializer=_limit_blas, initargs=(blas_threads,)
    )


def _limit_blas(threads: int | None) -> None:
    from awai_engine.engine import limit_blas_threads

    limit_blas_threads(threads)
