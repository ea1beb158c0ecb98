"""Loading a Chroma index where a crash cannot hurt: a child process with a memory limit.

Used when :mod:`storage.hnsw_files` cannot tell whether an index is whole (a layout it does
not know). The child loads the collection from a copy of the folder (so nothing it does touches
the real one, nor meets this process's open client) and reads every vector back; a segfault,
an allocation past the limit or any error there means "damaged", and this process lives on.
"""

from __future__ import annotations

import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

# Address space the child may use beyond the index's own size: Python, chromadb and its Rust
# library map about 1.5 GB before loading anything.
BASE_ADDRESS_SPACE = 3 << 30
TIMEOUT_SECONDS = 300

_CHILD = """
import sys
import chromadb
from chromadb.config import Settings
client = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))
collection = client.get_collection(sys.argv[2])
offset = 0
while True:
    page = collection.get(include=["embeddings"], limit=5000, offset=offset)["ids"]
    if not page:
        break
    offset += len(page)
"""


def probe_index(chroma: Path, collection: str) -> str | None:
    """Why the collection cannot be loaded and read, or ``None`` when it can."""
    segments = [child for child in chroma.iterdir() if child.is_dir()]
    size = sum(f.stat().st_size for folder in segments for f in folder.iterdir() if f.is_file())
    limit = BASE_ADDRESS_SPACE + 8 * size
    with tempfile.TemporaryDirectory(prefix="awai-probe-") as scratch:
        copy = Path(scratch) / "chroma"
        shutil.copytree(chroma, copy)
        try:
            done = subprocess.run(
                [sys.executable, "-c", _CHILD, str(copy), collection],
                capture_output=True,
                text=True,
                timeout=TIMEOUT_SECONDS,
                preexec_fn=lambda: _limit_memory(limit),  # setrlimit only: safe after fork
                check=False,
            )
        except subprocess.TimeoutExpired:
            return f"loading it took over {TIMEOUT_SECONDS} s"
    if done.returncode == 0:
        return None
    if done.returncode < 0:
        return f"loading it killed the process ({signal.Signals(-done.returncode).name})"
    said = [line for line in done.stderr.splitlines() if line.strip()]
    return f"loading it failed: {said[-1] if said else f'exit status {done.returncode}'}"


def _limit_memory(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
