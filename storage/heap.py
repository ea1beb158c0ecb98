"""The process's heap hands out zeroed memory and overwrites what it frees (glibc's M_PERTURB).

Why: an embedded Chroma keeps each collection's HNSW index in one block allocated with a plain
``malloc`` on its own worker threads, and writes the block's whole capacity to disk
(``chroma/<segment>/data_level0.bin``: about 1.7 KB a slot, 100 slots for a new collection, most
of them unused). Whatever the process had freed in that memory went to disk with it: text of
messages a thread of this process had handled, deleted ones included, after their erasure had
finished (seen in the erasure test, about one run in 25 of the whole suite; the block comes from
the heap rather than fresh zeroed pages once glibc has raised its mmap threshold). With glibc's
``M_PERTURB`` every block it takes back is filled with one byte value and every block it hands
out with that byte's complement (zero here), so an unused slot holds only zeros. What it does
not cover: blocks small enough for a thread's cache (about 1 KB; no index block is that small),
and the part a ``realloc`` adds by growing a block in place over memory freed *before* the
switch was on. That is why it is turned on first thing in every ``awai`` command
(:mod:`bots.terminal.cli`) as well as when a store opens, before any message is read.

The same switch for a Chroma server's process is ``MALLOC_PERTURB_=255`` in its environment
(deploy/README.md). Elsewhere than glibc (macOS, musl) there is no such switch, and
:func:`overwrite_freed_memory` says so by returning ``False``.
"""

from __future__ import annotations

import ctypes
import logging
import sys
from collections.abc import Callable
from typing import cast

log = logging.getLogger(__name__)

M_PERTURB = -6  # glibc's malloc.h
M_ARENA_MAX = -8
FREED_BYTE = 0xFF
"""Freed memory is set to this byte; memory handed out is set to its complement, zero."""


def overwrite_freed_memory() -> bool:
    """Have this process's C heap zero the memory it hands out and overwrite the memory it
    frees; ``False`` where the C library offers no such switch. Safe to call again."""
    mallopt = _mallopt()
    if mallopt is None or mallopt(M_PERTURB, FREED_BYTE) != 1:  # musl's accepts nothing
        log.info("the C library does not overwrite freed memory (no M_PERTURB)")
        return False
    return True


def keep_one_arena() -> bool:
    """Have every thread of this process allocate from the C heap's one arena; ``False`` where
    the C library offers no such switch. To be called before threads start (an arena a thread
    made already stays).

    Why: glibc gives threads arenas of their own (up to 8 a core), and memory freed in one is
    reused only by the threads that allocate from it. An embedded Chroma writes from its own
    worker threads, so a long ``awai ingest`` grew by 2.3 MiB per 1,000 vectors written even with
    the heap trimmed after each chunk (``awai_engine.heap_trim``); with one arena, what Chroma
    frees is reused. Measured (``awai ingest`` of 10,000 and 30,000 lines into an empty folder,
    one run each): peak RSS 407 → 512 MiB with glibc's arenas, 403 → 430 MiB with one, two
    arenas 406 → 454; random vectors written alone through ``ChromaVectors`` stay at 122–134 MiB
    from 5,000 to 40,000 with one arena and the trim. The ingest's rate changed by 1–2%, within
    the spread of three runs in turns. The same for a Chroma server's process is
    ``MALLOC_ARENA_MAX=1`` in its environment."""
    mallopt = _mallopt()
    return mallopt is not None and mallopt(M_ARENA_MAX, 1) == 1


def _mallopt() -> Callable[[int, int], int] | None:
    """The C library's ``mallopt``, on Linux (none elsewhere, or where the library has none)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except AttributeError:
        return None
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return cast(Callable[[int, int], int], mallopt)
