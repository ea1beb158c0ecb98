"""Why lexical recall is not SQLite FTS5's ``bm25()``: the invariant and the cost, measured.

A reading of message ``i`` may depend only on messages ``<= i``. This bench fills an FTS5 table
and the engine's :class:`~awai_engine.lexical.LexicalIndex` with the same real chat lines, then
for messages of an early part of the channel asks both for their 20 best earlier matches
(``rowid < i``) twice: with only the prefix in the table, and after the rest of the channel is
added.

- **changed by later rows**: the share of queries whose FTS5 scores (or order) differ between
  the two; the engine's index must stay at 0;
- **per query**: mean time of FTS5's ``MATCH … AND rowid < ? ORDER BY bm25()``, of the
  ``count(*)`` per term that prefix document frequencies would cost through FTS5 (the least a
  prefix-exact BM25 in SQL needs, before any scoring), and of the engine's index.

PostgreSQL is not measured: its ``ts_rank``/``ts_rank_cd`` use no document frequencies at all
(they rank by term counts and proximity in the one document), so they are prefix-pure but are
not BM25, and the rare-word weighting that lexical recall is for would be lost.

    nice -n 10 .venv/bin/python -m bench.lexical_fulltext [--size 100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import time
from collections.abc import Sequence

from awai_engine.lexical import LexicalIndex, terms
from bench.eval_reply_links import shared_data

LIMIT = 20


def chat_lines() -> list[str]:
    path = shared_data() / "irc-disentangle" / "ubuntu-dev.jsonl"
    lines = []
    with path.open(encoding="utf-8") as handle:
        for raw in handle:
            record = json.loads(raw)
            if not record["is_system"] and record["text"].strip():
                lines.append(record["text"])
    return lines


def fts_query(text: str) -> str:
    """The message's words as an FTS5 OR query (each quoted, so no word is an operator)."""
    return " OR ".join(f'"{term}"' for term in sorted(set(terms(text))))


def fts_top(db: sqlite3.Connection, text: str, before: int) -> list[tuple[int, float]]:
    return db.execute(
        "SELECT rowid, round(bm25(lines), 9) FROM lines WHERE lines MATCH ? AND rowid < ?"
        " ORDER BY bm25(lines), rowid DESC LIMIT ?",
        (fts_query(text), before, LIMIT),
    ).fetchall()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args(argv)
    source = chat_lines()
    texts = [source[n % len(source)] for n in range(args.size)]
    cut = args.size // 10  # queries read messages in the first tenth of the channel
    worded = [p for p in range(1, cut) if terms(texts[p])]  # FTS5 refuses an empty query
    chosen = random.Random(7).sample(worded, args.queries)

    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE lines USING fts5(text, tokenize='unicode61')")
    db.executemany("INSERT INTO lines(rowid, text) VALUES (?, ?)", enumerate(texts[:cut]))
    index = LexicalIndex()
    for position, text in enumerate(texts):
        index.add(position, text)
    prefix_index = LexicalIndex()
    for position, text in enumerate(texts[:cut]):
        prefix_index.add(position, text)

    before = [fts_top(db, texts[p], p) for p in chosen]
    db.executemany("INSERT INTO lines(rowid, text) VALUES (?, ?)", enumerate(texts[cut:], cut))
    started = time.perf_counter()
    after = [fts_top(db, texts[p], p) for p in chosen]
    fts_seconds = (time.perf_counter() - started) / len(chosen)
    started = time.perf_counter()
    for p in chosen:
        for term in sorted(set(terms(texts[p]))):
            db.execute(
                "SELECT count(*) FROM lines WHERE lines MATCH ? AND rowid < ?", (f'"{term}"', p)
            ).fetchone()
    count_seconds = (time.perf_counter() - started) / len(chosen)
    started = time.perf_counter()
    ours_after = [index.matches(texts[p], p, LIMIT) for p in chosen]
    ours_seconds = (time.perf_counter() - started) / len(chosen)
    ours_before = [prefix_index.matches(texts[p], p, LIMIT) for p in chosen]

    fts_changed = sum(a != b for a, b in zip(before, after, strict=True)) / len(chosen)
    ours_changed = sum(a != b for a, b in zip(ours_before, ours_after, strict=True)) / len(chosen)
    print(f"{args.size:,} real chat lines; {len(chosen)} queries on messages of the first tenth.\n")
    print("| lexical search | changed by later rows | per query |\n|---|---:|---:|")
    print(f"| SQLite FTS5 bm25(), rowid < i | {fts_changed:.0%} | {fts_seconds * 1e3:.2f} ms |")
    print(
        f"| FTS5 prefix document frequencies (count per term, no scoring yet) | – |"
        f" {count_seconds * 1e3:.2f} ms |"
    )
    print(
        f"| engine LexicalIndex (prefix statistics) | {ours_changed:.0%} |"
        f" {ours_seconds * 1e3:.2f} ms |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
