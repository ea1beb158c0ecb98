"""What one page of vectors costs as a Chroma collection grows: by offset against by id.

Run: ``.venv/bin/python -m bench.vector_pages [--size 300000] [--chroma FOLDER]``. Without
``--chroma`` a collection of ``--size`` random unit vectors (MiniLM's 384 dimensions) is written
to a temporary folder; with it, the largest collection of an existing embedded Chroma folder is
read (a copy: Chroma is not opened by two processes at once).

A read model used to read a whole collection in pages by offset (``get(limit, offset)``), and
a page far into a large collection costs several times the first. It now reads the ids of its
rows' thoughts, a page of ids at a time (``ChromaVectors.vectors_of``). For a few offsets the
table times one page of ``--page`` vectors both ways, the same vectors each time, and the ratio
to the first offset in the same run.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import chromadb
import numpy as np
from chromadb.config import Settings as ChromaSettings
from rich.console import Console
from rich.progress import track
from rich.table import Table

from storage.vectors import PAGE

DIMENSION = 384
WRITE_BATCH = 5000


def _written(folder: Path, size: int) -> chromadb.Collection:
    client = chromadb.PersistentClient(
        path=str(folder), settings=ChromaSettings(anonymized_telemetry=False)
    )
    collection = client.get_or_create_collection(
        "pages", metadata={"hnsw:space": "cosine"}, embedding_function=None
    )
    rng = np.random.default_rng(7)
    for start in track(range(0, size, WRITE_BATCH), description=f"writing {size:,} vectors"):
        part = rng.standard_normal((min(WRITE_BATCH, size - start), DIMENSION), dtype=np.float32)
        part /= np.linalg.norm(part, axis=1, keepdims=True)
        ids = [f"m{start + n:09d}#0" for n in range(len(part))]
        collection.add(ids=ids, embeddings=part, metadatas=[{"thought": 0}] * len(part))
    return collection


def _largest(folder: Path) -> chromadb.Collection:
    client = chromadb.PersistentClient(
        path=str(folder), settings=ChromaSettings(anonymized_telemetry=False)
    )
    return max(client.list_collections(), key=lambda collection: collection.count())


def _seconds(call) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=300_000)
    parser.add_argument("--chroma", type=Path, help="an embedded Chroma folder to read instead")
    parser.add_argument("--page", type=int, default=PAGE)
    args = parser.parse_args()
    console = Console()
    with tempfile.TemporaryDirectory() as scratch:
        collection = _largest(args.chroma) if args.chroma else _written(Path(scratch), args.size)
        count = collection.count()
        table = Table(title=f"One page of {args.page:,} vectors, collection of {count:,}")
        for column in ("offset", "by offset s", "÷ first", "by id s", "÷ first"):
            table.add_column(column, justify="right")
        first: tuple[float, float] | None = None
        for offset in (0, count // 4, count // 2, max(0, count - args.page)):
            page = collection.get(include=[], limit=args.page, offset=offset)
            ids = page["ids"]
            by_offset = _seconds(
                lambda o=offset: collection.get(include=["embeddings"], limit=args.page, offset=o)
            )
            by_id = _seconds(lambda i=ids: collection.get(ids=i, include=["embeddings"]))
            first = first or (by_offset, by_id)
            table.add_row(
                f"{offset:,}",
                f"{by_offset:.2f}",
                f"{by_offset / first[0]:.2f}",
                f"{by_id:.2f}",
                f"{by_id / first[1]:.2f}",
            )
        console.print(table)


if __name__ == "__main__":
    main()
