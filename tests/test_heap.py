"""Memory a store's process frees cannot reach disk through an index's unused slots; its threads
share one heap arena.

An embedded Chroma writes its HNSW index block whole, unused slots included, and allocates it
with a plain ``malloc`` (storage/heap.py). The switch is process-wide and stays on, and every
store the suite opens turns it on, so each check runs in a fresh interpreter: a block filled
with a word and freed comes back with the word before the switch, and zeroed after it.
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not hasattr(ctypes.CDLL(None), "gnu_get_libc_version"),
    reason="M_PERTURB is glibc's",
)

ROOT = Path(__file__).resolve().parents[1]
REUSED_BLOCK = """
import ctypes

WORD = b"zeroedheapmarker "  # not the erasure tests' word: they scan this process's memory
BLOCK = 100_000  # under glibc's mmap threshold: served from the heap, where freed bytes stay
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = (ctypes.c_size_t,)
libc.free.argtypes = (ctypes.c_void_p,)


def reused_block():
    first = libc.malloc(BLOCK)
    ctypes.memmove(first, (WORD * (BLOCK // len(WORD) + 1))[:BLOCK], BLOCK)
    libc.free(first)
    second = libc.malloc(BLOCK)  # glibc hands out the same memory again
    try:
        return ctypes.string_at(second, BLOCK)
    finally:
        libc.free(second)
"""


def _in_a_fresh_process(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", REUSED_BLOCK + code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


def test_without_the_switch_freed_bytes_come_back_in_memory_handed_out() -> None:
    """The hazard itself, so the other tests are known to test something."""
    assert _in_a_fresh_process("print(WORD in reused_block())") == "True"


@pytest.mark.slow
def test_an_open_store_has_the_heap_hand_out_zeroed_memory(tmp_path: Path) -> None:
    opened = f"""
from awai_engine.settings import Settings
from storage.store import AwaiStore

assert WORD in reused_block()  # not on yet
store = AwaiStore.open(Settings(data_dir={str(tmp_path / "data")!r}, _env_file=None))
handed_out = reused_block()
store.close()
print(WORD not in handed_out and handed_out == bytes(BLOCK))
"""
    assert _in_a_fresh_process(opened) == "True"


@pytest.mark.slow
def test_every_awai_command_turns_it_on_first() -> None:
    command = """
from bots.terminal.cli import main

try:
    main(["--help"])
except SystemExit:
    pass
print(WORD not in reused_block())
"""
    assert _in_a_fresh_process(command).splitlines()[-1] == "True"


THREAD_ARENAS = """
import ctypes, os, tempfile, threading

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = (ctypes.c_size_t,)
libc.free.argtypes = (ctypes.c_void_p,)
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = (ctypes.c_char_p, ctypes.c_char_p)
libc.fclose.argtypes = (ctypes.c_void_p,)
libc.malloc_info.argtypes = (ctypes.c_int, ctypes.c_void_p)


def arenas():
    path = tempfile.mktemp()
    stream = libc.fopen(path.encode(), b"w")
    libc.malloc_info(0, stream)
    libc.fclose(stream)
    with open(path) as report:
        text = report.read()
    os.unlink(path)
    return text.count("<heap nr=")


def arenas_four_threads_add():
    before = arenas()
    together = threading.Barrier(4)

    def allocate():
        together.wait()
        for _ in range(2000):
            libc.free(libc.malloc(1000))

    threads = [threading.Thread(target=allocate) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return arenas() - before
"""


def test_without_one_arena_threads_allocate_from_arenas_of_their_own() -> None:
    """Why a long ingest grew (storage.heap.keep_one_arena): what Chroma's threads freed stayed
    in theirs. The hazard itself, so the next test is known to test something."""
    assert int(_in_a_fresh_process(THREAD_ARENAS + "print(arenas_four_threads_add())")) > 0


@pytest.mark.slow
def test_an_open_store_has_every_thread_allocate_from_one_arena(tmp_path: Path) -> None:
    opened = f"""
from awai_engine.settings import Settings
from storage.store import AwaiStore

store = AwaiStore.open(Settings(data_dir={str(tmp_path / "data")!r}, _env_file=None))
print(arenas_four_threads_add())
store.close()
"""
    assert _in_a_fresh_process(THREAD_ARENAS + opened) == "0"
