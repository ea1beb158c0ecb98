"""The question put to the speaker since their last message, against their own message: which
one a reply answers on the dev logs, and the bar from which the headline names the question.

Why: a reviewer found answers headlined "Continues what <speaker> said" where another person had
asked the speaker a question since (``awai_engine.reply_target.scorer.question_put_first``).
On the dev logs only (Kummerfeld et al., ACL 2019, CC BY 4.0), for each annotated message whose
speaker has a message among its candidates and another speaker asked after the latest of them:
is the gold parent that question, the speaker's own message, or something else; and what does
the scorer's best name. Then, over every annotated message, the scorer's headline (its
confident best, association's far recalls left out) with the rule at each bar: accuracy,
precision and far precision per file, all in one run. The engine's own headline with the chosen
bar is measured by :mod:`bench.eval_headline`.

    .venv/bin/python -m bench.question_since --data-dir bench/.cache/headline-store
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence

import numpy as np

from awai_engine.cues.answers import opens_as_answer
from awai_engine.reply_target.agreement import through_agreements
from awai_engine.reply_target.features import FEATURE_NAMES
from awai_engine.reply_target.model import reply_model
from awai_engine.reply_target.regime import model_features
from awai_engine.reply_target.scorer import (
    QUESTION_BETWEEN_BAR,
    QUESTION_PUT_BAR,
    question_put_first,
)
from bench.eval_headline import FAR_BACK, Tally
from bench.eval_reply_links import annotated_messages, ingested, load, log_arguments

BARS = (None, 0.0, 0.1, 0.2, 0.3, 0.4, 0.45, 0.5, 0.55, 0.6)
BETWEEN_BARS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4)
_ASKS = FEATURE_NAMES.index("candidate_asks")
_ADDRESSES_ANOTHER = FEATURE_NAMES.index("candidate_addresses_another")
VARIANTS = ("put to the speaker", "any question", "between", "answer opening")
ANSWER_BARS = (0.0, 0.05, 0.1, 0.2, 0.35, 0.5)


def main(argv: Sequence[str] | None = None) -> int:
    args = log_arguments(__doc__.split("\n\n")[0]).parse_args(argv)
    logs = load(args.files)
    model = reply_model()
    tallies: dict[tuple[str, str, float | None], Tally] = {}
    shape: dict[tuple[str, str], Counter[str]] = {}
    with ingested(logs, args.data_dir, "awai-question-since-") as bench:
        for log, timeline, position, parents in annotated_messages(bench, logs):
            candidates = model_features(timeline, position, ())
            if not candidates.positions:
                for variant in VARIANTS:
                    for bar in _bars(variant):
                        tallies.setdefault((log.file, variant, bar), Tally()).count(
                            None, parents, position, ""
                        )
                continue
            positions = np.asarray(candidates.positions)
            probabilities = through_agreements(
                timeline,
                position,
                model,
                candidates.positions,
                model.probabilities(candidates.features),
            )
            asks = candidates.features[:, _ASKS]
            order = np.lexsort((-positions, -probabilities))
            best = order[0]
            far = position - positions[best] > model.far_back
            confident = probabilities[best] >= (model.far_confident if far else model.confident)
            speaker = timeline.speaker_ids[position]
            own = np.array([timeline.speaker_ids[q] == speaker for q in positions])
            if own.any():
                since = (positions > positions[own].max()) & ~own & (asks > 0)
                to_speaker = since & (candidates.features[:, _ADDRESSES_ANOTHER] == 0)
                between = to_speaker & (positions == position - 1)
                if positions[own].max() != position - 2:
                    between[:] = False
                shapes = (("any", since), ("to speaker", to_speaker), ("between", between))
                for shape_name, held in shapes:
                    if not held.any():
                        continue
                    questions = set(positions[held].tolist())
                    counts = shape.setdefault((log.file, shape_name), Counter())
                    picked = _kind({int(positions[best])}, questions, positions[own])
                    counts["messages"] += 1
                    counts["gold " + _kind(parents, questions, positions[own])] += 1
                    counts["best " + picked] += 1
                    if picked == "own":
                        counts["best own, gold " + _kind(parents, questions, positions[own])] += 1
            for variant in VARIANTS:
                table = candidates.features.copy()
                if variant == "any question":
                    table[:, _ADDRESSES_ANOTHER] = 0
                for bar in _bars(variant):
                    bars: tuple[float, float] | None = None
                    if bar is None:
                        pass
                    elif variant == "answer opening":
                        # The shipped bars, and ``bar`` for a message opening as an answer.
                        answering = opens_as_answer(timeline.messages[position].text)
                        bars = (bar, bar) if answering else (QUESTION_PUT_BAR, QUESTION_BETWEEN_BAR)
                    else:
                        bars = (0.5, bar) if variant == "between" else (bar, bar)
                    ranked = (
                        order
                        if bars is None
                        else question_put_first(
                            timeline,
                            position,
                            positions,
                            probabilities,
                            table,
                            order,
                            *bars,
                        )
                    )
                    named = int(positions[ranked[0]]) if confident else None
                    tallies.setdefault((log.file, variant, bar), Tally()).count(
                        named, parents, position, ""
                    )
    for (file, shape_name), counts in shape.items():
        print(f"\n### {file}, question {shape_name}: {counts['messages']} messages of the shape")
        for key in sorted(k for k in counts if k != "messages"):
            print(f"- {key}: {counts[key]} ({counts[key] / counts['messages']:.3f})")
    print(
        f"\n| file | bar | accuracy | precision | coverage | far precision (named, >{FAR_BACK}) |"
    )
    print("|---|---|---:|---:|---:|---:|")
    for (file, variant, bar), found in tallies.items():
        name = "off" if bar is None else f"{variant} {bar:.2f}"
        print(found.line(f"{file} | {name}"))
    return 0


def _bars(variant: str) -> tuple[float | None, ...]:
    """The bars tried: the question's alone between the speaker's message and this one (the
    others' at 0.5) for ``between``; a message opening as an answer's (the shipped bars for the
    rest) for ``answer opening``; every question's for the others."""
    if variant == "answer opening":
        return ANSWER_BARS
    return BETWEEN_BARS if variant == "between" else BARS


def _kind(parents: frozenset[int] | set[int], questions: set[int], own: np.ndarray) -> str:
    """Which of the shape's messages ``parents`` holds: the question, the own message, other."""
    if parents & questions:
        return "question"
    if parents & set(own.tolist()):
        return "own"
    return "other" if parents else "none"


if __name__ == "__main__":
    sys.exit(main())
