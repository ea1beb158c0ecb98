"""Long id lists cut into slices a single SQL ``IN (...)`` or Chroma call accepts.

SQLite refuses statements with more than a few hundred bound parameters on older builds (999),
and a Chroma write of tens of thousands of rows is one huge request; every place that sends a
caller's list of ids to either goes through :func:`batches`, so the limit is chosen once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

IN_BATCH = 500  # ids per SQL ``IN (...)``: well under SQLite's oldest limit of 999 parameters

T = TypeVar("T")


def batches(items: Sequence[T], size: int = IN_BATCH) -> Iterator[Sequence[T]]:
    """Consecutive slices of ``items``, each at most ``size`` long (none for an empty list)."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
