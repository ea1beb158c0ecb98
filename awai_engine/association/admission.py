"""Stage 5: which recalled items recall admits, by a gate learned from human annotation.

Why: the stages before pick by rules (addressing, bars of meaning and words), and a third of what
they picked on the dev logs belonged to another conversation than the message's own. People who
annotated the #ubuntu training logs said which lines belong together; a logistic model over what
recall knows of each item (why and how far back it was recalled, how close in meaning, how
active, whether its line is in the message's inferred conversation or the speaker's exchange)
estimates the chance that the item is in the message's conversation, and an item under
``rules.admission_bar`` is left out, unless recalled for a reason in ``rules.admission_spares``
(the gate judges only the items of a speaker in an exchange, unless ``rules.admission_alone``). It reads only the item and the message's situation, both
functions of the prefix, so the context stays one.

The weights are ``admission.json`` beside this module, fitted by ``bench/fit_admission.py`` on
the training split only; the bar was chosen on the dev files (docs/evaluation.md). A missing or
damaged file is an :class:`AdmissionModelError` naming the file, never a traceback.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from awai_engine.association.query import Situation
from awai_engine.errors import AwaiError
from awai_engine.fitted_file import read_fitted
from awai_engine.timeline import Timeline
from awai_engine.values import Association, RecallReason

MODEL_FILE = Path(__file__).resolve().with_name("admission.json")
FORMAT = "awai-recall-admission/1"
REASONS = ("addressed", "addressed-speaker", "own", "meaning", "words")
FEATURE_NAMES = (
    *(f"reason:{reason}" for reason in REASONS),
    "far",
    "log_distance",
    "similarity",
    "margin",
    "activation",
    "log_occurrences",
    "words_share",
    "in_conversation",
    "in_exchange",
    "alone",
    "asks_past",
    "own_speaker",
)


class AdmissionModelError(AwaiError, RuntimeError):
    """The recall admission model file is missing or damaged."""


def item_features(
    timeline: Timeline, position: int, situation: Situation, items: tuple[Association, ...]
) -> np.ndarray:
    """One row of :data:`FEATURE_NAMES` per recalled item (float64)."""
    speaker = timeline.messages[position].ref.speaker_id
    conversation, exchange = situation.conversation, situation.exchange
    rows = []
    for item in items:
        source = item.source.position
        rows.append(
            [
                *(float(item.reason == reason) for reason in REASONS),
                float(item.reach == "far"),
                math.log1p(item.distance),
                item.similarity,
                item.similarity - item.threshold,
                item.activation,
                math.log(item.occurrences),
                item.words_share or 0.0,
                float(conversation is not None and source in conversation),
                float(exchange is not None and exchange.includes(timeline, source)),
                float(situation.alone),
                float(situation.asks_past),
                float(item.source.speaker_id == speaker),
            ]
        )
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), len(FEATURE_NAMES))


@dataclass(frozen=True)
class AdmissionModel:
    """Logistic regression on standardised features: P(the item is in the message's
    conversation)."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        logits = ((features - self.mean) / self.scale) @ self.weights + self.bias
        return 1.0 / (1.0 + np.exp(-np.clip(logits, -40.0, 40.0)))


def admitted(
    timeline: Timeline,
    position: int,
    situation: Situation,
    items: tuple[Association, ...],
    bar: float,
    spares: tuple[RecallReason, ...] = (),
) -> tuple[Association, ...]:
    """The items whose estimated chance of being in the message's conversation reaches ``bar``,
    and those recalled for a reason in ``spares``, in their order."""
    if not items:
        return items
    chance = admission_model().probabilities(item_features(timeline, position, situation, items))
    return tuple(
        item for item, p in zip(items, chance, strict=True) if p >= bar or item.reason in spares
    )


_loaded: dict[Path, AdmissionModel] = {}
_lock = threading.Lock()


def admission_model(path: Path = MODEL_FILE) -> AdmissionModel:
    """The model in ``path``, read once per process."""
    with _lock:
        if path not in _loaded:
            _loaded[path] = _read(path)
        return _loaded[path]


def _read(path: Path) -> AdmissionModel:
    return read_fitted(
        path,
        "recall admission model",
        "bench.fit_admission",
        (FORMAT, FEATURE_NAMES),
        _model,
        AdmissionModelError,
    )


def _model(raw: dict[str, Any]) -> AdmissionModel:
    mean, scale, weights = (
        np.asarray(raw[key], dtype=np.float64) for key in ("mean", "scale", "weights")
    )
    bias = float(raw["bias"])
    values = (mean, scale, weights)
    if (
        not all(v.shape == (len(FEATURE_NAMES),) for v in values)
        or not all(np.all(np.isfinite(v)) for v in values)
        or not math.isfinite(bias)
        or not np.all(scale > 0)
    ):
        raise ValueError("its numbers do not fit its features")
    return AdmissionModel(mean=mean, scale=scale, weights=weights, bias=bias)
