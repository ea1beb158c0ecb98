"""Re-clustering one speaker: time and peak memory at 200, 1k, 5k and 20k thoughts.

Run: ``.venv/bin/python -m bench.recluster [--sizes 200 1000 5000 20000] [--repeat 3]``.

Against an older commit: ``git worktree add /tmp/base <commit>`` then ``.venv/bin/python -m
bench.recluster --baseline /tmp/base --sizes 5000 20000 --repeat 5``. Each repeat runs the
baseline's and this checkout's ``cluster_run`` in fresh processes (``bench/recluster_worker.py``)
one after the other on the same saved vectors, alternating which goes first, so a busy machine
slows both alike; the table gives each side's median and the median of the per-repeat ratios, of
wall time and of CPU time (both sides run this checkout's worker file, each with its own engine),
the same with the memo the job keeps from the run at 90%, each side's peak memory, and how well
the two sides' clusters agree (adjusted Rand index of every thought's cluster, noise as one).

What is measured is :func:`awai_engine.schemas.build.cluster_run`, the whole of a re-clustering
but the SQL writes: HDBSCAN, the cohesion floor, ids inherited from the previous run (the same
speaker at 90% of the thoughts) and centres. Vectors are synthetic, 384-d and unit length like
MiniLM's: topics around random centres (a topic per 50 thoughts) plus 30% scattered lines. Time
is the median of ``--repeat`` runs; peak memory is what ``tracemalloc`` saw allocated during one
more run (numpy's arrays included), on top of the input. Reference rows show the hdbscan package
itself: ``generic`` and PCA to 10 dimensions then its default algorithm (the options the issue
measured); ARI is agreement with the synthetic topics (scattered lines as noise). The *memo kept*
row is the re-clustering job's case: it keeps a long speaker's knn neighbours from its last run
(here the one at 90%) and extends them by the thoughts said since; same labels as the default. Target from the
issue: ≤ 1 s and ≤ 300 MB at 5k with the default. The ``before`` row is the clustering as it was
before small speakers were fixed (``min_samples`` 3, floor 0.3, no border thoughts joining, no
word filter; its lone-cluster floor is 1.0 instead of 0.45, which only matters when nothing else
forms), so the cost of the fix is read in the same run. All rows come from one run on one
machine, so compare them with each other; the load average is printed with the table.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path

import hdbscan
import numpy as np
from rich.console import Console
from rich.table import Table
from sklearn.decomposition import PCA
from sklearn.metrics import adjusted_rand_score

from awai_engine.engine import limit_blas_threads
from awai_engine.schemas.basis import Basis, RowVectors
from awai_engine.schemas.build import cluster_run
from awai_engine.schemas.clustering import ChainMemo, method_for
from awai_engine.schemas.settings import SchemaRules, SchemaSettings
from awai_engine.settings import Settings

DIMENSION = 384
# Memory the reference algorithms would need, beyond what this bench should ask of a shared box.
GENERIC_LIMIT = 6_000  # hdbscan generic: several float64 n×n matrices (6.3 GB at 20k)
EXACT_LIMIT = 12_000  # one float32 n×n matrix (1.6 GB at 20k)


def synthetic(count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors: topics of about 50 thoughts each, and 30% lines on no topic (label −1)."""
    rng = np.random.default_rng(seed)
    topics = max(2, count // 70)
    on_topic = int(count * 0.7)
    labels = rng.integers(0, topics, size=on_topic)
    centres = rng.normal(size=(topics, DIMENSION))
    vectors = np.vstack(
        [
            centres[labels] + 0.7 * rng.normal(size=(on_topic, DIMENSION)),
            1.5 * rng.normal(size=(count - on_topic, DIMENSION)),
        ]
    )
    truth = np.concatenate([labels, np.full(count - on_topic, -1)])
    order = rng.permutation(count)  # topics interleave in time, as in a conversation
    vectors, truth = vectors[order], truth[order]
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.astype(np.float32), truth


def basis_of(vectors: np.ndarray) -> Basis:
    count = len(vectors)
    ids = [f"m{i:06d}" for i in range(count)]
    return Basis(
        channel="bench:local:recluster",
        speaker_id="ann",
        speaker_name="Ann",
        keys=tuple(f"{m}#0" for m in ids),
        texts=tuple(f"thought number {i} said here" for i in range(count)),
        message_ids=tuple(ids),
        positions=np.arange(count, dtype=np.int64),
        rows=RowVectors(vectors),
        digest=f"bench-{count}",
    )


def labels_of(run_states: tuple, count: int) -> np.ndarray:
    labels = np.full(count, -1)
    for number, state in enumerate(run_states):
        labels[[int(key[1:].split("#")[0]) for key in state.members]] = number
    return labels


def candidates(vectors: np.ndarray) -> list[tuple[str, Callable[[], np.ndarray] | None]]:
    """The algorithms to time on these vectors; ``None`` where one would need n² memory."""
    count = len(vectors)
    basis = basis_of(vectors)
    kept = ChainMemo()  # what the job keeps of the speaker from its run at 90% of the thoughts
    previous = cluster_run(basis_of(vectors[: int(count * 0.9)]), None, SchemaSettings(), kept)

    def ours(settings: SchemaSettings) -> Callable[[], np.ndarray]:
        return lambda: labels_of(cluster_run(basis, previous, settings).states, count)

    def as_the_job() -> np.ndarray:
        memo = copy.copy(kept)  # a run replaces the memo's fields: each repeat starts alike
        return labels_of(cluster_run(basis, previous, SchemaSettings(), memo).states, count)

    def generic() -> np.ndarray:
        return hdbscan.HDBSCAN(min_cluster_size=3, algorithm="generic").fit_predict(
            vectors.astype(np.float64)
        )

    def pca_then_best() -> np.ndarray:
        reduced = PCA(10, svd_solver="full").fit_transform(vectors)
        return hdbscan.HDBSCAN(min_cluster_size=3).fit_predict(reduced)

    before = SchemaSettings(
        rules=SchemaRules(min_samples=3, min_cohesion=0.3, join_similarity=1.0, min_words=0)
    )
    return [
        (f"default (auto: {_algorithm(count)})", ours(SchemaSettings())),
        (f"default, memo kept from the job's run at 90% ({_algorithm(count)})", as_the_job),
        (f"before: ms3, floor 0.3, no joining ({_algorithm(count)})", ours(before)),
        (
            "exact",
            ours(SchemaSettings(rules=SchemaRules(algorithm="exact")))
            if count <= EXACT_LIMIT
            else None,
        ),
        ("knn-graph", ours(SchemaSettings(rules=SchemaRules(algorithm="knn-graph")))),
        ("ref: hdbscan generic (float64)", generic if count <= GENERIC_LIMIT else None),
        ("ref: PCA-10 then hdbscan best", pca_then_best),
    ]


def _algorithm(count: int) -> str:
    return method_for(count, SchemaSettings()).split("/")[0].removeprefix("hdbscan-")


def measure(action: Callable[[], np.ndarray], repeat: int) -> tuple[float, float, np.ndarray]:
    """Median seconds over ``repeat`` runs, then peak MB of one traced run, and its labels."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    labels = action()
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return statistics.median(times), peak, labels


HERE = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).resolve().parent / "recluster_worker.py"


def timed_in(tree: Path, vectors: Path) -> dict:
    """One fresh process of ``tree``'s engine: seconds of one re-clustering and its schemas."""
    done = subprocess.run(
        [sys.executable, str(WORKER), str(tree), str(vectors), "1"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tree,
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    if not found["engine"].startswith(str(tree)):
        raise SystemExit(f"{tree}: the worker imported {found['engine']}")
    return found


def compare(baseline: Path, sizes: list[int], repeat: int) -> None:
    """Baseline against this checkout, interleaved in one run (see the top of this file)."""
    table = Table(
        "thoughts",
        "baseline (s)",
        "today (s)",
        "today / baseline",
        "ratio range",
        "CPU today / baseline",
        "memo kept: baseline / today (s)",
        "peak MB base / today",
        "schemas base / today",
        "ARI base vs today",
        title=f"Re-clustering one speaker: {baseline} against {HERE}, {repeat} interleaved repeats",
    )
    with tempfile.TemporaryDirectory() as folder:
        for count in sizes:
            path = Path(folder) / f"vectors-{count}.npy"
            np.save(path, synthetic(count)[0])
            base_times, today_times, ratios, cpu_ratios = [], [], [], []
            memo_times: tuple[list[float], list[float]] = ([], [])
            for turn in range(repeat):
                trees = (baseline, HERE) if turn % 2 == 0 else (HERE, baseline)
                found = {tree: timed_in(tree, path) for tree in trees}
                base, today = found[baseline], found[HERE]
                base_times.append(base["seconds"][0])
                today_times.append(today["seconds"][0])
                ratios.append(today["seconds"][0] / base["seconds"][0])
                cpu_ratios.append(today["cpu"][0] / base["cpu"][0])
                memo_times[0].append(base["memo_seconds"][0])
                memo_times[1].append(today["memo_seconds"][0])
            table.add_row(
                str(count),
                f"{statistics.median(base_times):.2f}",
                f"{statistics.median(today_times):.2f}",
                f"{statistics.median(ratios):.2f}",
                f"{min(ratios):.2f}–{max(ratios):.2f}",
                f"{statistics.median(cpu_ratios):.2f}",
                " / ".join(f"{statistics.median(times):.2f}" for times in memo_times),
                f"{base['peak_mb']:.0f} / {today['peak_mb']:.0f}",
                f"{base['schemas']} / {today['schemas']}",
                f"{adjusted_rand_score(base['labels'], today['labels']):.3f}",
            )
    console = Console(width=120)
    console.print(table)
    console.print(
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", highlight=False
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 1000, 5000, 20000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--baseline", type=Path, help="checkout of an older commit to time against, interleaved"
    )
    args = parser.parse_args()
    # As every AWAI process does (Engine): BLAS single-threaded. With its own threads, the many
    # small products of the neighbour search oversubscribed this 2-core machine (60 s at 20k).
    limit_blas_threads(Settings(_env_file=None).recall_index.blas_threads)  # type: ignore[call-arg]
    warnings.filterwarnings("ignore", category=FutureWarning)  # sklearn, inside hdbscan
    if args.baseline is not None:
        compare(args.baseline.resolve(), args.sizes, args.repeat)
        return

    table = Table(
        "thoughts",
        "algorithm",
        "time (s)",
        "peak MB",
        "schemas",
        "noise %",
        "ARI vs topics",
        title="Re-clustering one speaker (synthetic 384-d vectors)",
    )
    for count in args.sizes:
        vectors, truth = synthetic(count)

        rows = candidates(vectors)
        for name, action in rows:
            if action is None:
                table.add_row(str(count), name, "—", "—", "—", "—", "skipped: n² memory")
                continue
            seconds, peak, labels = measure(action, args.repeat)
            table.add_row(
                str(count),
                name,
                f"{seconds:.2f}",
                f"{peak:.0f}",
                str(int(labels.max()) + 1),
                f"{np.mean(labels == -1):.0%}",
                f"{adjusted_rand_score(truth, labels):.3f}",
            )
        table.add_section()
    console = Console(width=120)
    console.print(table)
    threads = {
        name: os.environ.get(name, "unset") for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
    }
    console.print(
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; threads: {threads}",
        highlight=False,
    )


if __name__ == "__main__":
    main()
