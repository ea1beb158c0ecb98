"""The stable order of small non-negative integer codes: cells, terms, speakers, tiles.

Why its own function: grouping rows by a code (a cell, a term, a speaker) is a stable argsort,
and numpy's stable sort of 16-bit integers is a radix sort, linear in their number, where that
of 32- or 64-bit ones is a merge sort: 6.6 → 1.3 ms for the 121,509 rows of one cell level of a
100,000-message channel, paid at every start that opens it; grouping a re-clustering's
neighbour candidates by row was a tenth of its search at 20,000 thoughts.
"""

from __future__ import annotations

import numpy as np


def stable_order(codes: np.ndarray) -> np.ndarray:
    """``np.argsort(codes, kind="stable")`` of non-negative integer ``codes``, computed as
    16-bit integers when every code fits in them."""
    small = codes.astype(np.uint16) if codes.max(initial=0) < 1 << 16 else codes
    return np.argsort(small, kind="stable")
