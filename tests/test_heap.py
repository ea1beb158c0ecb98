"""Memory a store's process frees cannot reach disk through an index's unused slots.

An embedded Chroma writes its HNSW index block whole, unused slots included, and allocates it
with a plain ``malloc`` (storage/heap.py). These tests show that once a store is open, the C heap
hands out no byte that an earlier use of the same memory left there.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable

import pytest

from bots.runtime import Runtime
from storage.heap import overwrite_freed_memory

WORD = b"quixotrylbeam "
BLOCK = 100_000  # under glibc's mmap threshold: served from the heap, where freed bytes stay

glibc_only = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not hasattr(ctypes.CDLL(None), "gnu_get_libc_version"),
    reason="M_PERTURB is glibc's",
)


def _reused_block_after(text: bytes) -> bytes:
    """Fill a heap block with ``text``, free it, and return what the next block of that size,
    which glibc hands out from the same memory, holds when it is handed out."""
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = (ctypes.c_size_t,)
    libc.free.argtypes = (ctypes.c_void_p,)
    first = libc.malloc(BLOCK)
    ctypes.memmove(first, (text * (BLOCK // len(text) + 1))[:BLOCK], BLOCK)
    libc.free(first)
    second = libc.malloc(BLOCK)
    try:
        return ctypes.string_at(second, BLOCK)
    finally:
        libc.free(second)


@glibc_only
def test_an_open_store_has_the_heap_hand_out_zeroed_memory(
    make_runtime: Callable[..., Runtime],
) -> None:
    make_runtime()  # opening a store turns it on, before any message is read
    handed_out = _reused_block_after(WORD)
    assert WORD not in handed_out
    assert handed_out == bytes(BLOCK)


@glibc_only
def test_turning_it_on_again_is_harmless() -> None:
    assert overwrite_freed_memory() is True
    assert overwrite_freed_memory() is True
    assert WORD not in _reused_block_after(WORD)
