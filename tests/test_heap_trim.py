"""Freed C heap memory goes back to the system after clustering and after each chunk of an
ingest (awai_engine/heap_trim.py).

A bot whose readings cluster speakers on demand kept about a hundred MiB that glibc held on to
after each clustering; giving it back once per walk up a speaker's chain keeps a held 100k
channel under its bar without a low fixed trim threshold's cost on every allocation. An ingest
kept its chunks' freed buffers the same way, so its peak grew with the messages it stored.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import pytest

from awai_engine import engine as engine_module
from awai_engine import heap_trim
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from tests.schema_topics import CHATTER, said, topic_sentences

CHANNEL = "local:trim"


def anonymous_kib() -> int:
    with open("/proc/self/status") as status_file:
        status = dict(line.split(":", 1) for line in status_file)
    return int(status["RssAnon"].split()[0])


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or heap_trim._TRIM is None, reason="glibc only"
)
def test_heap_pages_freed_below_a_live_block_go_back_to_the_system() -> None:
    # 64 KiB blocks come from the heap (below glibc's mmap threshold); the one allocated after
    # them keeps their freed space from being the heap's top, which glibc would trim itself.
    blocks = [bytearray(b"x" * (64 << 10)) for _ in range(1024)]
    guard = bytearray(b"y" * (64 << 10))
    del blocks
    held = anonymous_kib()
    heap_trim.give_back()
    assert held - anonymous_kib() > 32 << 10  # most of the 64 MiB freed
    assert guard[0] == ord("y")


def test_a_reading_that_clusters_on_demand_gives_the_heap_back_and_a_cached_one_does_not(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = make_runtime()
    battery = [sentence for sentence, _ in topic_sentences(["battery"], 8)]
    runtime.engine.ingest(
        said(CHANNEL, "ann", battery[:8] + CHATTER[:6], 1) + said(CHANNEL, "bob", CHATTER[6:9], 50)
    )
    given_back: list[int] = []
    monkeypatch.setattr(heap_trim, "give_back", lambda: given_back.append(1))
    made = runtime.schemas.runs._made
    first = runtime.engine.read(CHANNEL, "m0014", EVERYTHING)
    # Nothing stored: her chain's runs were clustered for the reading, up its fixed points,
    # and the heap given back once for the walk, not once per run.
    assert runtime.schemas.runs._made - made > 1
    assert len(given_back) == 1
    given_back.clear()
    again = runtime.engine.read(CHANNEL, "m0014", EVERYTHING)
    assert not given_back  # the runs were kept: nothing clustered, nothing freed
    assert again.context.schemas == first.context.schemas


def test_an_ingest_gives_the_heap_back_after_each_chunk(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = make_runtime()
    given_back: list[int] = []
    monkeypatch.setattr(heap_trim, "give_back", lambda: given_back.append(1))
    monkeypatch.setattr(engine_module, "INGEST_CHUNK", 3)
    report = runtime.engine.ingest(said(CHANNEL, "ann", CHATTER, 1))
    # Eight messages in chunks of three: each chunk's freed encoding and write buffers go back
    # before the next, so an ingest's peak does not grow with the number of chunks.
    assert report.added == len(CHATTER) == 8
    assert len(given_back) == 3
