"""Giving the C heap's freed memory back to the system after a large, passing piece of work.

Why: clustering a speaker on demand (the neighbour search's tiles, HDBSCAN's trees, the
cohesion passes) allocates and frees tens of megabytes. Once a large block is freed, glibc
raises its trim threshold (up to 64 MiB) and keeps what is freed at its heaps' tops and in
their middles, so a bot holding a channel whose readings cluster its speakers kept memory it
no longer used (27 MiB of its 404 after 401 readings of a 100k channel). ``malloc_trim`` returns the free pages of every arena (the
pool threads' too) once, after such work, without the cost a fixed low threshold has on every
allocation (a mapping of its own for each block of 128 KiB or more: readings 1.22× slower).
An ingest's chunks do the same (token batches, the encoder's outputs, the store's write
batches): it gives the heap back after each chunk, so its peak does not grow chunk by chunk.

A no-op where the C library has no ``malloc_trim`` (not glibc).
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any


def _trim() -> Any:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.restype = ctypes.c_int
    trim.argtypes = [ctypes.c_size_t]
    return trim


_TRIM = _trim()


def give_back() -> None:
    """Return the C heap's free pages to the system (they are faulted in again when reused)."""
    if _TRIM is not None:
        _TRIM(0)
