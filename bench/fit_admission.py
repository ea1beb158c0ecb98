"""Fit the recall admission gate (awai_engine/association/admission.json) on the training logs.

What is learned: for each item recall brings back for an annotated message of the #ubuntu
training logs (``../shared/data/irc-disentangle/ubuntu-train.jsonl.gz``, Kummerfeld et al. 2019,
CC BY 4.0), whether it belongs to the message's own conversation (the connected component of the
annotated reply links), from :data:`awai_engine.association.admission.FEATURE_NAMES`. Recall
runs with the fitted rules and no gate, over timelines built as the reply-target data builds
them (offline thoughts, MiniLM vectors cached under ``bench/.cache/reply_target``), and a
logistic regression (scikit-learn) is fitted on items whose source line is annotated too.

The bar the gate uses is not fitted here: it is chosen on the dev files with
``bench/eval_association.py --variant 'NAME:rules.admission_bar=P'`` (docs/evaluation.md). The
dev and test files are never read here. Rebuild bit for bit:

    nice -n 10 .venv/bin/python -m bench.fit_admission
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import sys
import time
from collections.abc import Sequence

import numpy as np
from sklearn.linear_model import LogisticRegression

from awai_engine.association.admission import FEATURE_NAMES, FORMAT, MODEL_FILE, item_features
from awai_engine.association.recall import recall, situation_of
from awai_engine.context import build_flow
from awai_engine.embedding import Embedder
from awai_engine.settings import Settings
from bench.eval_reply_links import DATA, ChannelLog, read_logs
from bench.reply_target_data import timeline_of
from bench.variants import varied


def conversations(log: ChannelLog) -> dict[int, int]:
    """Position → its gold conversation (a root position), for annotated lines and their
    parents: the connected components of the annotated reply links."""
    root: dict[int, int] = {}

    def find(node: int) -> int:
        while root.setdefault(node, node) != node:
            root[node] = root[root[node]]
            node = root[node]
        return node

    position_of = {u.message_id: p for p, u in enumerate(log.utterances)}
    for position in log.annotated:
        find(position)
    for link in log.gold:
        for parent in link.parents:
            root[find(position_of[parent])] = find(link.position)
    return {node: find(node) for node in root}


def examples(logs: Sequence[ChannelLog], settings: Settings, embedder: Embedder):
    """Features and labels (same conversation) of every judged recalled item."""
    features, labels = [], []
    for n, log in enumerate(logs, 1):
        timeline = timeline_of(log, embedder)
        gold = conversations(log)
        for position in log.annotated:
            flow = build_flow(timeline, position, settings.flow)
            items = recall(timeline, position, flow, settings.association, settings.activation)
            judged = tuple(item for item in items if item.source.position in gold)
            if not judged:
                continue
            situation = situation_of(timeline, position, settings.association)
            features.append(item_features(timeline, position, situation, judged))
            labels.extend(gold[item.source.position] == gold[position] for item in judged)
        print(f"{n}/{len(logs)} {log.channel}: {len(labels):,} items", file=sys.stderr)
    return np.concatenate(features), np.asarray(labels, dtype=bool)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--every", type=int, default=4, help="every K-th training log, by date (1: all 153)"
    )
    parser.add_argument("--out", type=str, default=str(MODEL_FILE))
    args = parser.parse_args(argv)
    started = time.perf_counter()
    base = Settings(_env_file=None)  # type: ignore[call-arg]
    settings = varied(base, [("rules.admission_bar", None)])  # what recall picks, ungated
    logs = sorted(read_logs(DATA / "ubuntu-train.jsonl.gz"), key=lambda log: log.channel)
    logs = logs[:: args.every]
    x, y = examples(logs, settings, Embedder(base.embedding))
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0  # a feature constant on the training items carries no weight
    model = LogisticRegression(C=1.0, max_iter=1000).fit((x - mean) / scale, y)
    chance = model.predict_proba((x - mean) / scale)[:, 1]
    print(
        f"{len(y):,} judged items from {len(logs)} logs, {y.mean():.1%} in their message's"
        f" conversation; {time.perf_counter() - started:.0f} s"
    )
    for bar in (0.3, 0.4, 0.5, 0.6, 0.7):
        kept = chance >= bar
        print(f"  bar {bar}: keeps {kept.mean():.1%}, precision {y[kept].mean():.1%} (training)")
    for name, weight in zip(FEATURE_NAMES, model.coef_[0], strict=True):
        print(f"  {name:>24} {weight:+.3f}")
    fitted = {
        "format": FORMAT,
        "features": list(FEATURE_NAMES),
        "mean": [round(float(v), 8) for v in mean],
        "scale": [round(float(v), 8) for v in scale],
        "weights": [round(float(v), 8) for v in model.coef_[0]],
        "bias": round(float(model.intercept_[0]), 8),
        "fitted_on": f"ubuntu-train.jsonl.gz, {len(logs)} logs, {len(y)} judged items",
    }
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(fitted, handle, indent=1)
        handle.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
