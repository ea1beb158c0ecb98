"""Read latency and start-up against the code from before the reply-target scorer, one run.

Why: ``awai read`` must stay within 1.2× of its latency before the scorer landed (issue 31).
:mod:`bench.reply_target_latency` leaves the scorer out of today's engine; this compares with
the engine as it was (``git archive`` of ``--before``, the commit before the scorer, unpacked in
a scratch folder: nothing is added to the repository's worktrees). Each version runs in its own process on its own data folder holding the same
IRC dev log (the longest), and they read the same last ``--reads`` messages in alternating turns of ten, each
going first in turn, so a busy moment of a shared machine falls on both alike. Wall clock and
CPU time per reading (the CPU time of the reading thread, which other work on the machine does
not add to); start-up is a fresh process opening the runtime and reading one stored message.

    .venv/bin/python -m bench.reply_target_before
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench.eval_reply_links import DATA, read_logs

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "dac1db4"  # the commit before 622d6fa, where the reply-target scorer landed
TURN = 10
DEV_FILES = ("ubuntu-dev.jsonl", "channel-two-dev.jsonl")  # the longest log of them is read

# Run in each version's tree: ingest the log (from a JSON file), then read the messages named on
# stdin, one line per turn, answering with each reading's wall-clock and CPU seconds.
WORKER = """
import json, sys, time
from pathlib import Path
import awai_engine
assert Path(awai_engine.__file__).resolve().is_relative_to(Path.cwd().resolve()), awai_engine.__file__
from awai_engine.settings import load_settings
from awai_engine.values import Utterance
from awai_engine.visibility import EVERYTHING
from bots.runtime import open_runtime
data, log = sys.argv[1], sys.argv[2]
lines = json.loads(Path(log).read_text())
with open_runtime(load_settings(data_dir=Path(data))) as runtime:
    if sys.argv[3] == "ingest":
        runtime.engine.ingest(Utterance(**line) for line in lines)
    channel = lines[0]["channel"]
    runtime.engine.read(channel, lines[-1]["message_id"], EVERYTHING)
    print("ready", flush=True)
    for request in sys.stdin:
        times = []
        for message_id in json.loads(request):
            started, cpu = time.perf_counter(), time.thread_time()
            runtime.engine.read(channel, message_id, EVERYTHING)
            times.append((time.perf_counter() - started, time.thread_time() - cpu))
        print(json.dumps(times), flush=True)
"""


def _worker(tree: Path, data: Path, log: Path, mode: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(data), str(log), mode],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    if process.stdout.readline().strip() != "ready":
        raise SystemExit(f"the worker in {tree} did not start")
    return process


def _ask(process: subprocess.Popen[str], ids: Sequence[str]) -> list[tuple[float, float]]:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(list(ids)) + "\n")
    process.stdin.flush()
    return [tuple(t) for t in json.loads(process.stdout.readline())]  # type: ignore[misc]


def _started(tree: Path, data: Path, log: Path) -> float:
    began = time.perf_counter()
    process = _worker(tree, data, log, "read")
    elapsed = time.perf_counter() - began
    assert process.stdin is not None
    process.stdin.close()
    process.wait()
    return elapsed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=BEFORE, help="the commit to compare with")
    parser.add_argument("--reads", type=int, default=400)
    parser.add_argument("--starts", type=int, default=5)
    args = parser.parse_args(argv)
    logs = [log for name in DEV_FILES for log in read_logs(DATA / name)]
    log = max(logs, key=lambda log: len(log.utterances))
    lines = [
        {
            "channel": "terminal:local:latency",
            "message_id": u.message_id,
            "speaker_id": u.speaker_id,
            "speaker_name": u.speaker_name or u.speaker_id,
            "text": u.text,
            "ts": u.ts,
            "addressees": list(u.addressees),
        }
        for u in log.utterances
    ]
    ids = [line["message_id"] for line in lines][-args.reads :]
    with tempfile.TemporaryDirectory(prefix="awai-before-") as scratch:
        folder = Path(scratch)
        old = folder / "tree"
        old.mkdir()
        archive = subprocess.run(
            ["git", "archive", args.before], cwd=ROOT, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        source = folder / "log.json"
        source.write_text(json.dumps(lines))
        trees = {"before the scorer": old, "today": ROOT}
        workers = {
            name: _worker(tree, folder / name.replace(" ", "-"), source, "ingest")
            for name, tree in trees.items()
        }
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
        for turn, start in enumerate(range(0, len(ids), TURN)):
            order = list(trees) if turn % 2 == 0 else list(reversed(trees))
            for name in order:
                times[name] += _ask(workers[name], ids[start : start + TURN])
        for process in workers.values():
            assert process.stdin is not None
            process.stdin.close()
            process.wait()
        starts: dict[str, list[float]] = {name: [] for name in trees}
        for turn in range(args.starts):
            order = list(trees) if turn % 2 == 0 else list(reversed(trees))
            for name in order:
                data = folder / name.replace(" ", "-")
                starts[name].append(_started(trees[name], data, source))
    print(f"{len(ids)} readings of {log.channel} ({len(lines)} lines), {args.before} against today")
    for clock, which in (("wall clock", 0), ("CPU time", 1)):
        median = {name: statistics.median(t[which] for t in got) for name, got in times.items()}
        shown = ", ".join(f"{name} {value * 1000:.1f} ms" for name, value in median.items())
        ratio = median["today"] / median["before the scorer"]
        print(f"read, {clock}, median: {shown}; ratio {ratio:.2f}")
    started = {name: statistics.median(found) for name, found in starts.items()}
    shown = ", ".join(f"{name} {value * 1000:.0f} ms" for name, value in started.items())
    print(
        f"start-up (fresh process, runtime opened, one reading), median: {shown}; "
        f"ratio {started['today'] / started['before the scorer']:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
