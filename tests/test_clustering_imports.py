"""Clustering loads hdbscan's compiled routines and not scikit-learn: in a fresh process, and
in the re-clustering workers.

Why it matters: a bot clusters a speaker on demand as soon as a reading meets new messages;
importing the ``hdbscan`` package whole (its estimator, hence scikit-learn, scipy's stats and
optimizers, joblib, narwhals, rich) kept about 100 MiB in the bot for the rest of its life,
and in the fork server of the re-clustering workers and each worker. The labels must be the
estimator's own, and a later ``import hdbscan`` must still give the real package.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TREE = Path(__file__).resolve().parents[1]
WHOLE_PACKAGE = ("sklearn", "joblib", "narwhals", "rich")
CLUSTER_AND_REPORT = """
import json, sys
import numpy as np
if sys.argv[1] == "package first":
    import hdbscan
from awai_engine.schemas.clustering import cluster_labels
from awai_engine.schemas.settings import SchemaRules, SchemaSettings

rng = np.random.default_rng(5)
centres = rng.normal(size=(5, 384))
points = np.vstack([c + 0.6 * rng.normal(size=(40, 384)) for c in centres]
                   + [1.5 * rng.normal(size=(30, 384))])
points = (points / np.linalg.norm(points, axis=1, keepdims=True)).astype(np.float32)
labels = {
    algorithm: cluster_labels(points, SchemaSettings(rules=SchemaRules(algorithm=algorithm))).tolist()
    for algorithm in ("exact", "knn-graph")
}
# Without the cohesion floor and joining, the exact algorithm is hdbscan's "generic" estimator.
plain = SchemaSettings(rules=SchemaRules(algorithm="exact", min_cohesion=-1, join_similarity=1.0))
ours = cluster_labels(points, plain).tolist()
loaded = [m for m in %r if m in sys.modules]
import hdbscan
from sklearn.metrics import adjusted_rand_score
estimator = hdbscan.HDBSCAN(
    min_cluster_size=3, min_samples=plain.rules.min_samples, algorithm="generic"
).fit_predict(points.astype(np.float64)).tolist()
print(json.dumps({"labels": labels, "loaded": loaded,
                  "estimator agrees": adjusted_rand_score(estimator, ours) == 1.0
                  and [e == -1 for e in estimator] == [o == -1 for o in ours]}))
"""
WORKER_REPORT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from awai_engine.schemas import chains
import probe
with chains.pool(1, 1) as executor:
    print(json.dumps(executor.submit(probe.loaded).result()))
"""
PROBE = """
import sys
def loaded():
    return sorted(m for m in sys.modules if m.split(".")[0] in ("hdbscan",) + %r)
"""


def run(script: str, *args: str) -> object:
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        env={**os.environ, "PYTHONPATH": str(TREE)},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_clustering_loads_no_scikit_learn_and_finds_the_labels_of_hdbscan_itself() -> None:
    alone = run(CLUSTER_AND_REPORT % (WHOLE_PACKAGE,), "alone")
    after_package = run(CLUSTER_AND_REPORT % (WHOLE_PACKAGE,), "package first")
    assert isinstance(alone, dict) and isinstance(after_package, dict)

    assert alone["loaded"] == []
    assert "sklearn" in after_package["loaded"]  # the control: the package whole brings it
    assert alone["estimator agrees"]  # and a later ``import hdbscan`` is the real package
    assert alone["labels"] == after_package["labels"]
    assert all(max(found) >= 2 for found in alone["labels"].values())  # topics, not all noise


@pytest.mark.slow
def test_re_clustering_workers_have_the_compiled_routines_and_no_scikit_learn(
    tmp_path: Path,
) -> None:
    (tmp_path / "probe.py").write_text(PROBE % (WHOLE_PACKAGE,), encoding="utf-8")

    loaded = run(WORKER_REPORT, str(tmp_path))

    assert isinstance(loaded, list)
    assert {"hdbscan._hdbscan_linkage", "hdbscan._hdbscan_tree"} <= set(loaded)  # preloaded
    assert not [m for m in loaded if m == "hdbscan" or m.split(".")[0] in WHOLE_PACKAGE]
