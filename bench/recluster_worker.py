"""One process timing ``cluster_run`` of one checkout on saved vectors (driven by bench/recluster).

Run as a script, never imported: ``python bench/recluster_worker.py TREE VECTORS.npy REPEAT``.
``TREE`` goes first on ``sys.path``, so the engine timed is that checkout's (an older commit for
the baseline, this one for today's); the script uses only what both share (``Basis``,
``cluster_run``, default ``SchemaSettings``). The predecessor run (90% of the thoughts, as a
re-clustering has) is made first and not timed, which also pays every import. Prints one JSON
line: the engine's path, the wall and CPU seconds of each timed run and the number of schemas
(CPU time is what a loaded machine disturbs least).
"""

import json
import sys
import time

import numpy as np


def main() -> None:
    tree, vectors_path, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sys.path.insert(0, tree)
    import awai_engine
    from awai_engine.schemas.basis import Basis
    from awai_engine.schemas.build import cluster_run
    from awai_engine.settings import SchemaSettings, Settings

    try:  # as every AWAI process does; a baseline from before the setting has no such helper
        from awai_engine.engine import limit_blas_threads

        limit_blas_threads(Settings(_env_file=None).recall_index.blas_threads)
    except ImportError:
        pass

    vectors = np.load(vectors_path)

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
            vectors=rows,
            digest=f"bench-{count}",
        )

    settings = SchemaSettings()
    previous = cluster_run(basis_of(vectors[: int(len(vectors) * 0.9)]), None, settings)
    basis = basis_of(vectors)
    seconds, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        run = cluster_run(basis, previous, settings)
        seconds.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    found = {"seconds": seconds, "cpu": cpu, "schemas": len(run.states)}
    print(json.dumps({"engine": awai_engine.__file__, **found}))


if __name__ == "__main__":
    main()
