"""The fitted reply-target model: a small feed-forward network read with numpy alone.

Why a file of numbers and no library: a fresh ``awai read`` must not import scikit-learn (it costs
seconds; tests/test_read_imports.py), and the network is a few matrix products. The file is
``model.json`` beside this module, written by ``bench/fit_reply_target.py`` from the annotated
#ubuntu training logs (see that script for how to rebuild it). It is read once per
process, when the engine is built; a missing or damaged file is a :class:`ReplyModelError` that
says which file and what is wrong, never a traceback.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from awai_engine.errors import AwaiError
from awai_engine.fitted_file import read_fitted
from awai_engine.reply_target.regime import MODEL_FEATURES

MODEL_FILE = Path(__file__).resolve().with_name("model.json")
FORMAT = "awai-reply-target/1"


class ReplyModelError(AwaiError, RuntimeError):
    """The reply-target model file is missing or damaged."""


@dataclass(frozen=True)
class ReplyModel:
    """ReLU hidden layers on the features and one logistic output; the fitted standardisation
    of the features is folded into the first layer (one matrix product less per reading).

    ``confident`` is the probability from which the headline names a candidate (``far_confident``
    for one more than ``far_back`` lines back, ``own_confident`` for the speaker's own line), all
    chosen on the dev logs by the fitting script. ``built_with``: the Python, numpy and
    scikit-learn versions and the feature tables' key it was fitted with (empty in a file made
    before they were recorded), see :mod:`awai_engine.reply_target.built_with`.
    """

    layers: tuple[tuple[np.ndarray, np.ndarray], ...]
    confident: float
    far_confident: float
    far_back: int
    own_confident: float = 0.0
    built_with: tuple[tuple[str, str], ...] = ()

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """P(this candidate is what the message responds to), one per row of ``features``."""
        if not len(features):
            return np.empty(0, dtype=np.float64)
        hidden = np.asarray(features, dtype=np.float64)
        *inner, (weights, bias) = self.layers
        for w, b in inner:
            hidden = np.maximum(hidden @ w + b, 0.0)
        logits = (hidden @ weights + bias)[:, 0]
        return 1.0 / (1.0 + np.exp(-np.clip(logits, -40.0, 40.0)))


_loaded: dict[Path, ReplyModel] = {}
_lock = threading.Lock()


def reply_model(path: Path | None = None) -> ReplyModel:
    """The model in ``path`` (default :data:`MODEL_FILE`), read once per process."""
    path = path or MODEL_FILE
    with _lock:
        model = _loaded.get(path)
        if model is None:
            model = _loaded[path] = _read(path)
        return model


def _read(path: Path) -> ReplyModel:
    return read_fitted(
        path,
        "reply-target model file",
        "bench.fit_reply_target",
        (FORMAT, MODEL_FEATURES),
        fitted_model,
        ReplyModelError,
    )


def fitted_model(raw: dict[str, Any], width: int = len(MODEL_FEATURES)) -> ReplyModel:
    """The model of a fitted file's JSON (what the fitting script writes) on ``width`` features;
    ``ValueError`` when its numbers do not fit together."""
    mean = np.asarray(raw["mean"], dtype=np.float64)
    scale = np.asarray(raw["scale"], dtype=np.float64)
    if mean.shape != (width,) or scale.shape != (width,) or not np.all(scale > 0):
        raise ValueError("its standardisation does not fit the features")
    layers = []
    for layer in raw["layers"]:
        weights = np.asarray(layer["weights"], dtype=np.float64)
        bias = np.asarray(layer["bias"], dtype=np.float64)
        if weights.ndim != 2 or weights.shape[0] != width or bias.shape != weights.shape[1:]:
            raise ValueError("a layer's shape does not fit the one before it")
        layers.append((weights, bias))
        width = weights.shape[1]
    if not layers or width != 1:
        raise ValueError("it has no single output")
    values = [mean, scale, *(a for layer in layers for a in layer)]
    if not all(np.all(np.isfinite(a)) for a in values):
        raise ValueError("it holds a value that is not a finite number")
    confident, far_confident = float(raw["confident"]), float(raw["far_confident"])
    own_confident = float(raw.get("own_confident", 0.0))
    if not all(0.0 <= bar <= 1.0 for bar in (confident, far_confident, own_confident)):
        raise ValueError("a confidence bar is outside [0, 1]")
    built_with = raw.get("built_with", {})
    if not isinstance(built_with, dict) or not all(isinstance(v, str) for v in built_with.values()):
        raise ValueError("its build versions are not a table of names and versions")
    (first, first_bias), *rest = layers
    folded = (first / scale[:, None], first_bias - (mean / scale) @ first)
    return ReplyModel(
        layers=(folded, *rest),
        confident=confident,
        far_confident=far_confident,
        far_back=int(raw["far_back"]),
        own_confident=own_confident,
        built_with=tuple(built_with.items()),
    )
