"""Long id lists cut into slices a single SQL ``IN (...)`` or Chroma call accepts.

SQLite refuses statements with more than a few hundred bound parameters on older builds (999),
and a Chroma write of tens of thousands of rows is one huge request; every place that sends a
caller's list of ids to either goes through :func:`batches`, so the limit is chosen once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol, TypeVar

IN_BATCH = 500  # ids per SQL ``IN (...)``: well under SQLite's oldest limit of 999 parameters


class Sliceable(Protocol):
    """What :func:`batches` cuts: a list, any sequence, or the rows of a numpy array."""

    def __len__(self) -> int: ...
    def __getitem__(self, index: slice, /) -> Any: ...


S = TypeVar("S", bound=Sliceable)


def batches(items: S, size: int = IN_BATCH) -> Iterator[S]:
    """Consecutive slices of ``items``, each at most ``size`` long (none for an empty list)."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
