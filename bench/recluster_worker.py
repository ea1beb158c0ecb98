"""One process timing ``cluster_run`` of one checkout on saved vectors (driven by bench/recluster).

Run as a script, never imported: ``python bench/recluster_worker.py TREE VECTORS.npy REPEAT``.
``TREE`` goes first on ``sys.path``, so the engine timed is that checkout's (an older commit for
the baseline, this one for today's); the script uses only what both share (``Basis``, its
vectors held as the checkout holds them, ``cluster_run``, default ``SchemaSettings``). The
predecessor run (90% of the thoughts, as a re-clustering has) is made first and not timed, which also pays every import; the neighbours it
found are kept, as the re-clustering job keeps them, for the *memo kept* runs. Prints one JSON
line: the engine's path, the wall and CPU seconds of each timed run afresh and with the memo
kept, the ``tracemalloc`` peak of one more run afresh, the number of schemas and each thought's
cluster (CPU time is what a loaded machine disturbs least).
"""

import copy
import json
import sys
import time
import tracemalloc

import numpy as np


def main() -> None:
    tree, vectors_path, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sys.path.insert(0, tree)
    import awai_engine
    from awai_engine.schemas.basis import Basis
    from awai_engine.schemas.build import cluster_run
    from awai_engine.schemas.clustering import ChainMemo
    from awai_engine.settings import SchemaSettings, Settings

    try:  # as every AWAI process does; a baseline from before the setting has no such helper
        from awai_engine.engine import limit_blas_threads

        limit_blas_threads(Settings(_env_file=None).recall_index.blas_threads)
    except ImportError:
        pass

    vectors = np.load(vectors_path)
    try:  # a basis's vectors are held as RowVectors since session 21; a baseline holds the array
        from awai_engine.schemas.basis import RowVectors

        def held(rows: np.ndarray) -> dict:
            return {"rows": RowVectors(rows)}
    except ImportError:

        def held(rows: np.ndarray) -> dict:
            return {"vectors": rows}

    def basis_of(rows: np.ndarray) -> Basis:
        count = len(rows)
        ids = [f"m{i:06d}" for i in range(count)]
        return Basis(
            channel="bench:local:recluster",
            speaker_id="ann",
            speaker_name="Ann",
            keys=tuple(f"{m}#0" for m in ids),
            texts=tuple(f"thought number {i} said here" for i in range(count)),
            message_ids=tuple(ids),
            positions=np.arange(count, dtype=np.int64),
            digest=f"bench-{count}",
            **held(rows),
        )

    settings = SchemaSettings()
    kept = ChainMemo()
    previous = cluster_run(basis_of(vectors[: int(len(vectors) * 0.9)]), None, settings, kept)
    basis = basis_of(vectors)
    found: dict = {"seconds": [], "cpu": [], "memo_seconds": [], "memo_cpu": []}
    for _ in range(repeat):
        for case, memo in (("", None), ("memo_", kept)):
            start, start_cpu = time.perf_counter(), time.process_time()
            run = cluster_run(basis, previous, settings, copy.copy(memo))
            found[f"{case}seconds"].append(time.perf_counter() - start)
            found[f"{case}cpu"].append(time.process_time() - start_cpu)
    tracemalloc.start()
    run = cluster_run(basis, previous, settings)
    found["peak_mb"] = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    labels = [-1] * len(vectors)
    for number, state in enumerate(run.states):
        for key in state.members:
            labels[int(key[1:].split("#")[0])] = number
    found |= {"schemas": len(run.states), "labels": labels}
    print(json.dumps({"engine": awai_engine.__file__, **found}))


if __name__ == "__main__":
    main()
