"""What ``awai read`` of an ingested, re-clustered channel loads in a fresh process.

Start-up is most of what a person waits for on a read: torch and the clustering libraries
(hdbscan, hence scikit-learn) take seconds to import. After a re-clustering, a reading of any
message finds the clustering in force (at the fixed point below what its speaker had said)
stored, so it imports neither. Nor does it
open Chroma (about a second to import) or load the encoder: the channel's read model, written
when the last command closed, is current, so it vouches for the start-up check's count and
holds every vector the reading needs, and a stored message needs nothing embedded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from awai_engine.samples import SAMPLES
from bots.terminal.cli import main

TREE = Path(__file__).resolve().parents[1]
NOT_ON_A_READ = (
    "torch",
    "transformers",
    "sentence_transformers",
    "hdbscan",
    "hdbscan._hdbscan_tree",  # what clustering loads (without the package: schemas/hdbscan_core)
    "sklearn",
    "alembic",
    "chromadb",
    "onnxruntime",
)
READ_AND_LIST_MODULES = """
import json, sys
from awai_engine.settings import load_settings
from awai_engine.visibility import EVERYTHING
from bots.runtime import open_runtime
with open_runtime(load_settings(data_dir=sys.argv[1])) as runtime:
    (channel,) = runtime.channels()
    schemas = [len(runtime.engine.read(channel, m, EVERYTHING).context.schemas)
               for m in sys.argv[2:]]
print(json.dumps({"schemas": schemas, "loaded": [m for m in %r if m in sys.modules]}))
"""


@pytest.mark.slow
def test_reading_any_message_after_a_re_clustering_imports_no_torch_clustering_or_chroma(
    tmp_path: Path,
) -> None:
    sample = SAMPLES["en"].path
    every = [json.loads(line)["id"] for line in sample.read_text(encoding="utf-8").splitlines()]
    data = tmp_path / "data"
    assert main(["--data-dir", str(data), "ingest", str(sample)]) == 0
    assert main(["--data-dir", str(data), "recluster"]) == 0

    done = subprocess.run(
        [
            sys.executable,
            "-c",
            READ_AND_LIST_MODULES % (NOT_ON_A_READ,),
            str(data),
            *every,
        ],
        env={**os.environ, "PYTHONPATH": str(TREE)},
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["loaded"] == []
    assert len(result["schemas"]) == len(every)
    assert sum(map(bool, result["schemas"])) >= len(every) // 4  # preconceptions were used
