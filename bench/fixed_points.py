"""Readings that cluster on demand, the re-clustering job's cost, and stored runs per speaker,
against an older checkout, in one run.

Run: ``.venv/bin/python -m bench.fixed_points --baseline /tmp/base [--size 10000] [--repeat 1]``
(``git worktree add /tmp/base <commit>`` first). ``--size 0`` uses the shipped English sample.

A reading of message ``i`` needs the speaker's schemas as of before ``i``. Until this change it
used the clustering of exactly the speaker's thoughts before ``i``: stored only when the job had
clustered that very prefix, so most readings clustered on demand (importing hdbscan and costing
up to seconds). Now it uses the run at the fixed point below (``awai_engine/schemas/runs.py``),
which the job stores at every point it reaches. What is measured, per checkout, each in a fresh
process (``bench/fixed_points_worker.py``) on a copy of the same data folder:

- the job catching up over an imported channel (the first 90% of its messages): wall and CPU
  seconds, clusterings made, and new versions (with a language model, one summary each);
- the live messages (the last 10%), each read as it arrives, a re-clustering every ``--tick``
  of them: readings that clustered on demand, clusterings made, the median reading, and the
  ticks' cost;
- 150 earlier messages spread over the import, read after that: readings that clustered;
- stored runs per speaker at the end.

The channel is ``bench/corpus.py``'s: real chat lines with their MiniLM vectors, 40 speakers.
Counts don't depend on the machine; times are ratios of one run (the load average is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

HERE = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).resolve().parent / "fixed_points_worker.py"
IMPORTED = 0.9


def prepare(folder: Path, size: int) -> None:
    """A data folder holding the import, and the live messages pickled beside it."""
    from awai_engine.backends.offline import OfflineBackend
    from awai_engine.embedding import Embedder
    from awai_engine.ports import PreparedUtterance
    from awai_engine.samples import SAMPLES
    from awai_engine.settings import load_settings
    from bench.corpus import chat_lines, synthetic_channel
    from bots.runtime import open_runtime
    from bots.terminal.transcript import read_transcript

    settings = load_settings(data_dir=folder)
    embedder = Embedder(settings.embedding)
    if size:
        channel = f"bench:local:fixed-points-{size}"
        items = synthetic_channel(channel, size, embedder, chat_lines(12_000))(0, size)
    else:
        channel = SAMPLES["en"].channel
        said = read_transcript(SAMPLES["en"].path, channel, 10**9).utterances
        backend = OfflineBackend()
        items = []
        for utterance in said:
            extraction = backend.extract_one(utterance.text)
            vectors = embedder.encode([thought.text for thought in extraction.thoughts])
            items.append(PreparedUtterance(utterance, extraction, vectors))
    split = int(len(items) * IMPORTED)
    with open_runtime(settings) as runtime:
        runtime.store.ensure_channel(channel, embedder.model_name, embedder.dimension)
        for start in range(0, split, 500):
            runtime.store.save(channel, items[start : min(split, start + 500)])
    with (folder / "fixed_points_live.pkl").open("wb") as handle:
        pickle.dump(items[split:], handle)


def measured(tree: Path, template: Path, batch: int, tick: int) -> dict:
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "data"
        shutil.copytree(template, data)
        done = subprocess.run(
            [sys.executable, str(WORKER), str(tree), str(data), str(batch), str(tick)],
            capture_output=True,
            text=True,
            cwd=tree,
            env={**os.environ, "PYTHONPATH": str(tree)},
        )
    if done.returncode:
        raise SystemExit(f"{tree}: worker failed\n{done.stderr[-3000:]}")
    found = json.loads(done.stdout.strip().splitlines()[-1])
    if not found["engine"].startswith(str(tree)):
        raise SystemExit(f"{tree}: the worker imported {found['engine']}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, required=True)
    parser.add_argument("--size", type=int, default=10_000, help="messages; 0: the sample")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--batch", type=int, help="live messages saved at once")
    parser.add_argument("--tick", type=int, help="live messages between re-clusterings")
    parser.add_argument("--data", type=Path, help="keep the prepared folder here (reused)")
    args = parser.parse_args()
    batch = args.batch or (20 if args.size else 1)
    tick = args.tick or (200 if args.size else 3)
    baseline = args.baseline.resolve()
    with tempfile.TemporaryDirectory() as scratch:
        template = args.data or Path(scratch) / "template"
        if not (template / "fixed_points_live.pkl").exists():
            template.mkdir(parents=True, exist_ok=True)
            prepare(template, args.size)
        runs: dict[Path, list[dict]] = {baseline: [], HERE: []}
        for turn in range(args.repeat):
            for tree in (baseline, HERE) if turn % 2 == 0 else (HERE, baseline):
                runs[tree].append(measured(tree, template, batch, tick))
    report(runs[baseline], runs[HERE], args, baseline)


def report(base: list[dict], today: list[dict], args: argparse.Namespace, tree: Path) -> None:
    def median(found: list[dict], pick) -> float:
        return statistics.median(pick(item) for item in found)

    rows = [
        ("catch-up: wall s", lambda f: f["catch_up"]["wall"], ".2f"),
        ("catch-up: CPU s", lambda f: f["catch_up"]["cpu"], ".2f"),
        ("catch-up: clusterings", lambda f: f["catch_up_runs"], ".0f"),
        ("catch-up: new versions (model summaries)", lambda f: f["catch_up"]["versions"], ".0f"),
        ("live readings", lambda f: f["live_readings"], ".0f"),
        ("live: readings clustering on demand", lambda f: f["live_on_demand"], ".0f"),
        ("live: clusterings on demand", lambda f: f["live_clusterings"], ".0f"),
        ("live: median reading ms", lambda f: 1000 * f["live_read_median"], ".1f"),
        ("ticks", lambda f: len(f["ticks"]), ".0f"),
        ("ticks: CPU s in all", lambda f: sum(t["cpu"] for t in f["ticks"]), ".2f"),
        ("ticks: clusterings", lambda f: f["tick_runs"], ".0f"),
        ("ticks: new versions", lambda f: sum(t["versions"] for t in f["ticks"]), ".0f"),
        ("earlier readings", lambda f: f["earlier_readings"], ".0f"),
        ("earlier: readings clustering on demand", lambda f: f["earlier_on_demand"], ".0f"),
        ("earlier: median reading ms", lambda f: 1000 * f["earlier_read_median"], ".1f"),
        ("stored runs per speaker: median", lambda f: f["runs_per_speaker"]["median"], ".1f"),
        ("stored runs per speaker: max", lambda f: f["runs_per_speaker"]["max"], ".0f"),
        ("speakers with runs", lambda f: f["runs_per_speaker"]["speakers"], ".0f"),
    ]
    size = f"{args.size:,} messages" if args.size else "the English sample"
    table = Table(
        "",
        "baseline",
        "today",
        "today / baseline",
        title=f"Schemas at fixed points: {size}, {tree} against {HERE}, {len(today)} run(s)",
    )
    for name, pick, form in rows:
        before, after = median(base, pick), median(today, pick)
        ratio = f"{after / before:.2f}" if before else "—"
        table.add_row(name, format(before, form), format(after, form), ratio)
    console = Console(width=120)
    console.print(table)
    console.print(
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", highlight=False
    )


if __name__ == "__main__":
    main()
