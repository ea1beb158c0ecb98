"""Clustering in a fresh process loads hdbscan's compiled routines and not scikit-learn.

Why it matters: a bot clusters a speaker on demand as soon as a reading meets new messages;
importing the ``hdbscan`` package whole (its estimator, hence scikit-learn, scipy's stats and
optimizers, joblib, narwhals, rich) kept about 100 MiB in the bot for the rest of its life.
The labels must be those found with the package imported the usual way, and a later
``import hdbscan`` must still give the real package.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TREE = Path(__file__).resolve().parents[1]
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
loaded = [m for m in ("sklearn", "joblib", "narwhals", "rich") if m in sys.modules]
import hdbscan
print(json.dumps({"labels": labels, "loaded": loaded, "estimator": hasattr(hdbscan, "HDBSCAN")}))
"""


def clustered(order: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", CLUSTER_AND_REPORT, order],
        env={**os.environ, "PYTHONPATH": str(TREE)},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_clustering_loads_no_scikit_learn_and_finds_the_labels_the_whole_package_finds() -> None:
    alone, after_package = clustered("alone"), clustered("package first")

    assert alone["loaded"] == []
    assert "sklearn" in after_package["loaded"]  # the control: the package whole brings it
    assert alone["labels"] == after_package["labels"]
    labels = alone["labels"]
    assert isinstance(labels, dict)
    assert all(max(found) >= 2 for found in labels.values())  # topics were found, not all noise
    assert alone["estimator"] and after_package["estimator"]  # a later import is the real one
