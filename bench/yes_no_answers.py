"""A yes or a no against the yes/no question still open to its speaker, on the dev logs: how far
back the question may be (``awai_engine.reply_target.yes_no.NEAR``).

Why: a message opening with a yes or a no and going on with a statement answers the latest
yes/no question still open to its speaker (:mod:`awai_engine.reply_target.yes_no`); how many
lines back that rule may look is chosen here, on the dev logs only (Kummerfeld et al., ACL 2019,
CC BY 4.0). For each value, in one run: over every annotated message, the scorer's headline (its
confident best, association's far recalls left out) — accuracy, precision and far precision per
file — and, over the messages the rule names a question for, how often that question is a gold
parent against how often the scorer's best without the rule was. The engine's own headline with
the chosen value is measured by :mod:`bench.eval_headline`.

    .venv/bin/python -m bench.yes_no_answers --data-dir bench/.cache/headline-store
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence

from awai_engine.reply_target.model import reply_model
from awai_engine.reply_target.scorer import reply_scores
from bench.eval_headline import Tally
from bench.eval_reply_links import annotated_messages, ingested, load, log_arguments

NEARS = (0, 1, 2, 3, 5, 8, 12)


def main(argv: Sequence[str] | None = None) -> int:
    args = log_arguments(__doc__.split("\n\n")[0]).parse_args(argv)
    logs = load(args.files)
    model = reply_model()
    tallies: dict[tuple[str, int], Tally] = {}
    fired: dict[tuple[str, int], Counter[str]] = {}
    with ingested(logs, args.data_dir, "awai-yes-no-") as bench:
        for log, timeline, position, parents in annotated_messages(bench, logs):
            off = reply_scores(timeline, position, model, yes_no_near=0)
            off_best = int(off.positions[0]) if len(off) else None
            for near in NEARS:
                scores = off if near == 0 else reply_scores(timeline, position, model, (), near)
                confident = bool(len(scores)) and scores[0].confident
                named = int(scores.positions[0]) if confident else None
                tallies.setdefault((log.file, near), Tally()).count(named, parents, position, "")
                if near and named is not None and (named != off_best or not off[0].confident):
                    counts = fired.setdefault((log.file, near), Counter())
                    counts["changed"] += 1
                    counts["now right"] += named in parents
                    counts["was right"] += bool(off[0].confident) and off_best in parents
    print("| file | lines back | accuracy | precision | coverage | far precision (named, >10) |")
    print("|---|---|---:|---:|---:|---:|")
    for (file, near), found in tallies.items():
        print(found.line(f"{file} | {near or 'off'}"))
    print("\n| file | lines back | headlines changed | right now | right before |")
    print("|---|---|---:|---:|---:|")
    for (file, near), counts in fired.items():
        print(
            f"| {file} | {near} | {counts['changed']} | {counts['now right']} "
            f"| {counts['was right']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
