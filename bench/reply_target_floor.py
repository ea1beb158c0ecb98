"""The probability floor of the reply-target candidates added to a reading's context.

Why: after recall, the scorer's best candidates that neither the flow nor recall holds are added
to the context (``awai_engine.association.reply_targets``), so the message a headline names is one
the reader and the model are shown. A 2% candidate need not be shown. This measures, on the dev
logs only (Kummerfeld et al., ACL 2019, CC BY 4.0), association's parent-in-context (a gold
parent in flow ∪ recalled ∪ added, as :mod:`bench.eval_association` counts it) and the items
added per message at each floor, in one run; the floor is the highest keeping parent-in-context
at or above 0.95 on both files and within 0.002 of no floor on each (a parent the floor hides is
one the headline may then not name).

    nice -n 10 .venv/bin/python -m bench.reply_target_floor
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import sys
from collections.abc import Sequence

from awai_engine.association.recall import recall
from awai_engine.association.reply_targets import REPLY_FLOOR, REPLY_ITEMS
from awai_engine.context import build_flow
from awai_engine.embedding import Embedder
from awai_engine.reply_target.model import reply_model
from awai_engine.reply_target.scorer import reply_scores
from awai_engine.settings import Settings
from bench.eval_association import VectorCache, build_timeline, prepare
from bench.eval_reply_links import DEFAULT_FILES, load

FLOORS = (0.0, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2)
TARGET = 0.95
LOSS = 0.002


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.parse_args(argv)
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    cache = VectorCache(Embedder(settings.embedding))
    model = reply_model()
    print(f"now: the best {REPLY_ITEMS} from {REPLY_FLOOR}; parent in context, items added/message")
    chosen = []
    for path in DEFAULT_FILES:
        links = 0
        hits = dict.fromkeys(FLOORS, 0)
        added = dict.fromkeys(FLOORS, 0)
        for log in load([path]):
            timeline = build_timeline(prepare(log.utterances, cache), settings)
            for link in log.gold:
                position = link.position
                flow = build_flow(timeline, position, settings.flow)
                items = recall(timeline, position, flow, settings.association, settings.activation)
                held = {*flow.message_ids(), *(item.source.message_id for item in items)}
                scores = reply_scores(timeline, position, model, [i.source.position for i in items])
                best = [s for s in scores[:REPLY_ITEMS] if s.message.message_id not in held]
                links += 1
                for floor in FLOORS:
                    shown = held | {s.message.message_id for s in best if s.probability >= floor}
                    hits[floor] += bool(shown & link.parents)
                    added[floor] += len(shown) - len(held)
        name = path.name.split(".")[0]
        print(
            f"{name} ({links} links): "
            + ", ".join(
                f"{floor}: {hits[floor] / links:.4f} / {added[floor] / links:.2f}"
                for floor in FLOORS
            )
        )
        share = {floor: hits[floor] / links for floor in FLOORS}
        chosen.append(max(f for f in FLOORS if share[f] >= max(TARGET, share[0.0] - LOSS)))
    print(
        f"highest floor keeping parent-in-context >= {TARGET} and within {LOSS} of no floor on"
        f" both files: {min(chosen)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
