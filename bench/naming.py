"""Naming a re-clustering's preconception versions: prefix counts against counting from scratch.

Run: ``nice -n 10 .venv/bin/python -m bench.naming [--thoughts 2500 10000] [--versions 100]
[--members 60]``.

A version numbered ``v`` is named by the c-TF-IDF of its members against the speaker's first ``v``
thoughts (:mod:`awai_engine.schemas.naming`). The plain way counts those ``v`` thoughts for every
version, so a re-clustering costs versions × thoughts; ``version_keyphrases`` keeps the speaker's
term counts for every prefix and pays for each version's members only. Both are timed here on the
same real chat lines (``bench.corpus``) and the same versions (``v`` spread over the speaker's
history, each with the same number of members drawn from its first ``v`` thoughts, so any growth
with the history is the contrast class's), each from a cold term cache, in CPU time; the table also
checks that both give the same names. The one pass that tokenises each thought once is in both.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from rich.console import Console
from rich.table import Table

from awai_engine.schemas import naming
from awai_engine.text_caches import forget_cached_texts
from bench.corpus import chat_lines

Version = tuple[int, list[str]]


def from_scratch(texts: tuple[str, ...], keys: tuple[str, ...], versions: list[Version]) -> list:
    """Each version's first ``v`` thoughts split into members and the rest, counted anew."""
    named = []
    for version, members in versions:
        chosen = set(members)
        inside = [texts[row] for row in range(version) if keys[row] in chosen]
        outside = [texts[row] for row in range(version) if keys[row] not in chosen]
        named.append(naming.keyphrases(inside, outside))
    return named


def by_prefix(texts: tuple[str, ...], keys: tuple[str, ...], versions: list[Version]) -> list:
    return [naming.version_keyphrases(texts, keys, members, v) for v, members in versions]


def timed(
    method: Callable[[tuple[str, ...], tuple[str, ...], list[Version]], list],
    texts: tuple[str, ...],
    keys: tuple[str, ...],
    versions: list[Version],
) -> tuple[float, list]:
    forget_cached_texts()  # each method starts cold: no word or term counted before
    naming._PREFIXES = naming._PrefixCache()
    start = time.process_time()
    named = method(texts, keys, versions)
    return time.process_time() - start, named


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--thoughts", type=int, nargs="+", default=[2500, 10_000])
    parser.add_argument("--versions", type=int, default=100, help="Versions named per size.")
    parser.add_argument("--members", type=int, default=60, help="Members of each version.")
    args = parser.parse_args()
    lines = chat_lines(max(args.thoughts))
    naming.keyphrases(["warm up"], ["the imports"])  # scikit-learn's import is no part of either
    table = Table(title="Naming versions of one speaker's thoughts (CPU seconds, one run)")
    for column in ("thoughts", "versions", "from scratch", "prefix counts", "ratio", "same names"):
        table.add_column(column, justify="right")
    rng = random.Random(5)
    for size in args.thoughts:
        texts = tuple(lines[:size])
        keys = tuple(f"m{row:07d}#0" for row in range(size))
        versions = []
        for n in range(args.versions):
            v = size // 10 + (size - size // 10) * (n + 1) // args.versions
            versions.append((v, rng.sample(keys[:v], min(v, args.members))))
        plain, expected = timed(from_scratch, texts, keys, versions)
        prefix, named = timed(by_prefix, texts, keys, versions)
        table.add_row(
            f"{size:,}",
            str(len(versions)),
            f"{plain:.2f}",
            f"{prefix:.2f}",
            f"{prefix / plain:.3f}",
            "yes" if named == expected else "NO",
        )
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
