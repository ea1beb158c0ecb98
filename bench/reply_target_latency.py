"""What the reply-target scorer costs a reading and a start: with it and without, one run.

Why: ``awai read`` must stay within 1.2× of its latency before the scorer. Absolute times on a
shared two-core machine swing with its load, so the same stored messages are read by the engine
as shipped and by the same engine with the scorer left out (its candidates neither scored nor
added to the context), in alternating turns of ten, each way reading first in turn; the ratio of
their medians is the number to read, on the wall clock and in CPU time (what a busy machine's
other work does not add to). Start-up: a fresh process opening the runtime and reading one
stored message, with the scorer and without it (its model file not read), in alternating turns.

    .venv/bin/python -m bench.reply_target_latency --data-dir bench/.cache/headline-store

The data folder is one :mod:`bench.eval_headline` filled (the IRC dev logs, stored).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from unittest import mock

from awai_engine import engine as engine_module
from awai_engine.reply_target.scorer import NO_SCORES
from awai_engine.settings import load_settings
from awai_engine.visibility import EVERYTHING
from bots.runtime import open_runtime

TURN = 10


def _timed(read: Callable[[str], object], ids: Sequence[str]) -> list[tuple[float, float]]:
    """Wall-clock and CPU seconds (of this thread: a reading runs in one) of each reading."""
    times = []
    for message_id in ids:
        started, cpu = time.perf_counter(), time.thread_time()
        read(message_id)
        times.append((time.perf_counter() - started, time.thread_time() - cpu))
    return times


def _fresh_process(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return time.perf_counter() - started


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--reads", type=int, default=400)
    parser.add_argument("--starts", type=int, default=5)
    args = parser.parse_args(argv)
    with open_runtime(load_settings(data_dir=args.data_dir)) as runtime:
        channel = max(runtime.channels(), key=lambda c: len(runtime.store.timeline(c).messages))
        timeline = runtime.store.timeline(channel)
        ids = [m.message_id for m in timeline.messages][-args.reads :]
        engine = runtime.engine

        def shipped(message_id: str) -> object:
            return engine.read(channel, message_id, EVERYTHING)

        def without(message_id: str) -> object:
            with mock.patch.object(engine_module, "reply_scores", lambda *a, **k: NO_SCORES):
                return engine.read(channel, message_id, EVERYTHING)

        ways = {"with the scorer": shipped, "without it": without}
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
        for turn, start in enumerate(range(0, len(ids), TURN)):
            chunk = ids[start : start + TURN]
            order = list(ways) if turn % 2 == 0 else list(reversed(ways))
            for name in order:
                times[name] += _timed(ways[name], chunk)
    for clock, which in (("wall clock", 0), ("CPU time", 1)):
        found = {name: [t[which] for t in got] for name, got in times.items()}
        median = {name: statistics.median(values) for name, values in found.items()}
        p95 = {name: statistics.quantiles(values, n=20)[-1] for name, values in found.items()}
        for name in ways:
            print(
                f"{name}, {clock}: median {median[name] * 1000:.1f} ms, "
                f"p95 {p95[name] * 1000:.1f} ms"
            )
        ratio = median["with the scorer"] / median["without it"]
        print(f"{clock}: ratio of medians {ratio:.2f}")

    read = (
        "from awai_engine.settings import load_settings; "
        "from awai_engine.visibility import EVERYTHING; "
        "from bots.runtime import open_runtime\n"
        "{switch}"
        f"with open_runtime(load_settings(data_dir={str(args.data_dir)!r})) as r:\n"
        f"    r.engine.read({channel!r}, {ids[-1]!r}, EVERYTHING)"
    )
    # Without the scorer: its model is not read and no candidate is scored.
    switch = (
        "from unittest import mock; from awai_engine import engine as e\n"
        "from awai_engine.reply_target.scorer import NO_SCORES\n"
        "mock.patch.object(e, 'reply_model', lambda: None).start()\n"
        "mock.patch.object(e, 'reply_scores', lambda *a, **k: NO_SCORES).start()\n"
    )
    starts: dict[str, list[float]] = {name: [] for name in ways}
    for turn in range(args.starts):
        order = list(ways) if turn % 2 == 0 else list(reversed(ways))
        for name in order:
            code = read.format(switch="" if name == "with the scorer" else switch)
            starts[name].append(_fresh_process(code))
    started = {name: statistics.median(found) for name, found in starts.items()}
    for name in ways:
        print(f"{name}: a fresh process reading one message, median {started[name] * 1000:.0f} ms")
    print(f"start-up ratio of medians: {started['with the scorer'] / started['without it']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
