"""Does the headline name the speaker's own earlier line when they answer someone else, and the
reverse, by how many people spoke in the last ten lines: one table per dev file.

Why: a reviewer found team-chat headlines reading "Continues what <speaker> said" over a reply
to another person's line just above. The reply-target model was fitted on #ubuntu, where many
conversations interleave; whether it names the own line too often where few people talk is
measured here, on the annotated dev logs only (Kummerfeld et al., ACL 2019, CC BY 4.0), with the
engine's headline (``Engine.read``, as ``bench.eval_headline`` reads it). Per regime (speakers
among the message's speaker and the ten lines before it):

- *gold other*: messages whose gold parents are all another person's lines; *own named*: of
  them, the headline names the speaker's own line (wrong by definition);
- *gold own*: messages with a gold parent by the speaker themselves; *other named, wrong*: of
  them, the headline names another person's line that is no gold parent;
- the headline's accuracy (names a gold parent, over messages with one) in the regime.

Only totals are printed.

    .venv/bin/python -m bench.own_line_regime --data-dir bench/.cache/headline-store
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sys
from collections import Counter
from collections.abc import Sequence

from bench.eval_headline import headline_namer
from bench.eval_reply_links import annotated_messages, ingested, load, log_arguments

RECENT = 10
REGIMES = ((1, 2, "1–2"), (3, 3, "3"), (4, 5, "4–5"), (6, 11, "6+"))
"""Speakers in the last ten lines and the message: (least, most, label)."""


def regime(count: int) -> str:
    """The label of the regime holding ``count`` speakers."""
    return next(label for low, high, label in REGIMES if low <= count <= high)


def main(argv: Sequence[str] | None = None) -> int:
    args = log_arguments(__doc__.split("\n\n")[0]).parse_args(argv)
    logs = load(args.files)
    counts: dict[str, Counter[tuple[str, str]]] = {log.file: Counter() for log in logs}
    with ingested(logs, args.data_dir, "awai-own-line-") as bench:
        name = headline_namer(bench.engine(bench.settings))
        for log, timeline, position, parents in annotated_messages(bench, logs):
            tally = counts[log.file]
            speaker = timeline.speaker_ids[position]
            _, recent = timeline.line_before(position, RECENT)
            label = regime(len({timeline.speaker_ids[q] for q in recent} | {speaker}))
            named, _ = name(log, timeline, position)
            own_named = named is not None and timeline.speaker_ids[named] == speaker
            gold_own = any(timeline.speaker_ids[q] == speaker for q in parents)
            tally[label, "messages"] += 1
            if not parents:
                continue
            tally[label, "with parent"] += 1
            tally[label, "right"] += named in parents
            if gold_own:
                tally[label, "gold own"] += 1
                tally[label, "other named, wrong"] += (
                    named is not None and not own_named and named not in parents
                )
            else:
                tally[label, "gold other"] += 1
                tally[label, "own named"] += own_named
    for file, tally in counts.items():
        print(f"\n### {file}\n")
        print(
            "| speakers in the last 10 | messages | accuracy | gold other | own named "
            "| gold own | other named, wrong |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|")
        for _, _, label in (*REGIMES, (0, 0, "all")):
            keys = [label] if label != "all" else [r for _, _, r in REGIMES]

            def total(what: str, keys: list[str] = keys, tally: Counter = tally) -> int:
                return sum(tally[k, what] for k in keys)

            print(
                f"| {label} | {total('messages')} | {_share(total('right'), total('with parent'))} "
                f"| {total('gold other')} | {total('own named')} "
                f"({_share(total('own named'), total('gold other'))}) "
                f"| {total('gold own')} | {total('other named, wrong')} "
                f"({_share(total('other named, wrong'), total('gold own'))}) |"
            )
    return 0


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.3f}" if whole else "—"


if __name__ == "__main__":
    sys.exit(main())
