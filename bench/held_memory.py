"""The memory of a bot that holds a large channel and keeps reading it: RSS after 1 … 401 readings.

Run: ``.venv/bin/python -m bench.held_memory --kept FOLDER [--readings 400] [--tree CHECKOUT]
[--trace 15]``.

Why: issue 32's goal is a bot holding a 100k channel in ≤ 400 MiB, and a bot is not measured
after one reading but after it has served many. Caches that fill as readings touch the channel's
speakers (their schema bases, the naming index, far recall's rows, built messages) stay for the
life of the process, so the RSS after one reading says little. A fresh process opens the runtime
on a copy of ``FOLDER`` (a kept data folder of one channel, see ``bench.kept_channel``; the
copy because a reading may bring the read-model file up to date) as a bot does, reads the
channel's latest message, then ``--readings`` random messages (seed 5, the same in every run),
and reports its RSS, anonymous and file-backed, after 1, 41, 101 and 401 readings, and the
readings' wall-clock and CPU seconds (the process's, all threads: on a shared machine the CPU
time is the one to compare).

``--tree`` runs the same process with another checkout's engine (``git archive COMMIT | tar -x
-C DIR``) first, on its own copy, for a before/after in one run. ``--trace N`` also lists the N
source lines holding the most memory traced at the end (``tracemalloc``, which slows the
readings and adds its own memory: the RSS of a traced run is not the figure to report).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

HERE = Path(__file__).resolve().parents[1]
MARKS = (1, 41, 101, 401)

_HOLD = """
import json, random, sys, time, tracemalloc
channel, count, trace = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
marks = {int(mark) for mark in sys.argv[4].split(",")}
if trace:
    tracemalloc.start(1)
import awai_engine
from awai_engine.settings import load_settings
from awai_engine.visibility import EVERYTHING
from bots.runtime import open_runtime

def rss():
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    return {key: int(status[key].split()[0]) // 1024 for key in ("VmRSS", "RssAnon", "RssFile")}

runtime = open_runtime(load_settings())
if not channel:
    (channel,) = runtime.store.channels()  # a kept folder holds one
ids = runtime.message_ids(channel)
began, cpu = time.perf_counter(), time.process_time()
order = [ids[-1], *random.Random(5).sample(ids, min(count, len(ids)))]
found = {}
for done, message_id in enumerate(order, 1):
    runtime.engine.read(channel, message_id, EVERYTHING)
    if done in marks:
        found[done] = rss()
top = []
if trace:
    snapshot = tracemalloc.take_snapshot()
    top = [
        [str(stat.traceback[0]), stat.size // 1024]
        for stat in snapshot.statistics("lineno")[:trace]
    ]
print(json.dumps({
    "engine": awai_engine.__file__,
    "channel": channel,
    "seconds": time.perf_counter() - began,
    "cpu": time.process_time() - cpu,
    "rss": found,
    "built": runtime.store.timeline(channel).messages.built,
    "top": top,
}))
"""


def held(
    tree: Path, kept: Path, channel: str, readings: int, trace: int, work: Path
) -> dict[str, object]:
    """One fresh process of ``tree``'s engine holding a copy of ``kept``: what it reported."""
    copy = work / "copy"
    shutil.copytree(kept, copy)
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                _HOLD,
                channel,
                str(readings),
                str(trace),
                ",".join(str(mark) for mark in MARKS),
            ],
            capture_output=True,
            text=True,
            check=True,
            cwd=tree,
            env={**os.environ, "AWAI_DATA_DIR": str(copy), "PYTHONPATH": str(tree)},
        )
    finally:
        shutil.rmtree(copy)
    found: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    if not str(found["engine"]).startswith(str(tree)):
        raise SystemExit(f"{tree}: the process imported {found['engine']}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kept", type=Path, required=True, help="a kept data folder")
    parser.add_argument("--channel", default="", help="the channel (default: the folder's one)")
    parser.add_argument("--readings", type=int, default=400)
    parser.add_argument("--tree", type=Path, help="another checkout to measure first")
    parser.add_argument("--trace", type=int, default=0, help="list the N lines holding most")
    args = parser.parse_args()
    if not (args.kept / "awai.sqlite3").is_file():
        raise SystemExit(f"{args.kept}: not a data folder (no awai.sqlite3 in it)")
    trees = [tree.resolve() for tree in (args.tree, HERE) if tree is not None]
    table = Table(
        "tree",
        *(f"after {mark}: RSS (anon + file) MiB" for mark in MARKS),
        "built",
        "seconds (CPU)",
        title=f"A process holding a channel ({args.readings} random readings after the latest)",
    )
    console = Console(width=160)
    with tempfile.TemporaryDirectory(prefix="held-memory-") as folder:
        for tree in trees:
            found = held(tree, args.kept, args.channel, args.readings, args.trace, Path(folder))
            rss: dict[str, dict[str, int]] = found["rss"]  # type: ignore[assignment]
            table.add_row(
                f"{tree} ({found['channel']})",
                *(
                    f"{r['VmRSS']} ({r['RssAnon']} + {r['RssFile']})"
                    if (r := rss.get(str(mark)))
                    else "—"
                    for mark in MARKS
                ),
                str(found["built"]),
                f"{found['seconds']:.1f} ({found['cpu']:.1f})",
            )
            for where, kib in found["top"]:  # type: ignore[attr-defined]
                console.print(f"{tree.name}: {kib / 1024:8.1f} MiB  {where}", highlight=False)
    console.print(table)
    console.print(
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", highlight=False
    )


if __name__ == "__main__":
    main()
