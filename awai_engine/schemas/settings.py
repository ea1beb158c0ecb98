"""The schemas' settings: what an operator may turn, and the clustering rules fitted on chat.

Two values, as association has (``awai_engine/association/settings.py``). :class:`SchemaSettings`
is the ``schemas`` section of the one AWAI settings object (``AWAI_SCHEMAS__MAX_RECALLED``, …):
how many preconceptions a reading recalls and how close they must be, how many clusterings stay
in memory, how many processes re-cluster. :class:`SchemaRules` decide what a preconception is
(HDBSCAN's parameters, the cohesion and joining floors, which thoughts may join, which algorithm,
how often a speaker is re-clustered); each was chosen on real chat (bench/preconceptions.py,
bench/recluster.py, bench/fixed_points.py; docs/evaluation.md) and a deployment has no reason to
turn them, so they are set in code only: by a test, or a bench (``schemas.rules.FIELD=VALUE`` in
``bench/variants.py``). A rule set in the environment is refused with that explanation.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from awai_engine.association.settings import Similarity
from awai_engine.fitted_rules import refuse_rules


class SchemaRules(BaseModel):
    """What counts as a preconception and when it is clustered: fitted, not configured.

    ``algorithm`` (see ``awai_engine/schemas/clustering.py`` and ``bench/recluster.py``): ``exact``
    is HDBSCAN itself on the full vectors, with one float32 n×n matrix (n²·4 bytes: 100 MB at 5k
    thoughts); ``knn-graph`` builds the same tree on each thought's nearest neighbours only
    (memory n·k, agreement with exact ARI ≈ 0.96 on real chat); ``auto`` is exact up to
    ``exact_max_thoughts`` and knn-graph above. PCA to 10 dimensions first, though fastest, merged
    noise into clusters on topic data and collapsed real chat into 2 clusters, so it is not offered.
    """

    model_config = ConfigDict(frozen=True)

    min_cluster_size: int = Field(3, ge=2, le=1000)
    min_samples: int = Field(
        2,
        ge=1,
        le=1000,
        description=(
            "HDBSCAN's neighbours for a core distance. 2, not min_cluster_size: with a few dozen"
            " thoughts, 3 left most of a recurring concern as noise (bench/preconceptions.py)."
        ),
    )
    min_cohesion: Similarity = Field(
        0.2,
        ge=-1,
        le=1,
        description=(
            "Mean similarity a thought needs to the rest of its cluster, and a cluster among its"
            " members, to count as a schema (else it is noise)."
        ),
    )
    concern_margin: float = Field(
        0.25,
        ge=0,
        le=1,
        description=(
            "Share of the gap between the speaker's mean similarity and 1 that a cluster's"
            " cohesion must close to be one concern; a looser one is a mixture and is clustered"
            " again on its own (bench/preconceptions.py). A share, not a cosine: it is not put"
            " on a model's scale."
        ),
    )
    join_similarity: Similarity = Field(
        0.25,
        ge=-1,
        le=1,
        description=(
            "A thought HDBSCAN left as noise joins the schema whose members it is closest to on"
            " average, when it reaches this; a lone cluster (nothing else formed) needs it too."
        ),
    )
    min_words: int = Field(
        3,
        ge=0,
        le=50,
        description="Thoughts with fewer words ('ok', 'yes please', '了解です') join no schema.",
    )
    min_content_words: int = Field(
        2,
        ge=0,
        le=50,
        description=(
            "Thoughts with fewer content words (not stop words, reactions or the name addressed:"
            " 'Totally agree, Mel.', 'Wow, great pic!') join no schema."
        ),
    )
    algorithm: Literal["auto", "exact", "knn-graph"] = "auto"
    exact_max_thoughts: int = Field(
        6000, ge=10, le=40_000, description="Above this many thoughts, auto uses knn-graph."
    )
    knn_neighbours: int = Field(
        24, ge=2, le=500, description="Neighbours per thought in the knn-graph algorithm."
    )
    fixed_point_bits: int = Field(
        3,
        ge=1,
        le=6,
        description=(
            "A reading uses the clustering of the speaker's first F(n) thoughts, F(n) keeping the"
            " leading binary digits of n (awai_engine/schemas/fixed_points.py): 3 clusters at"
            " 1-8, 10, 12, 14, 16, 20, 24..., so a schema lags under a quarter of what was said."
            " Each more bit halves the lag and doubles the clusterings stored per speaker (about"
            " 48 at 10,000 thoughts with 3; catching up an import clusters each of them)."
        ),
    )


FITTED_SCHEMA_RULES = SchemaRules()
"""The rules every re-clustering in production uses."""


class SchemaSettings(BaseModel):
    """Per-speaker preconceptions (HDBSCAN clusters of the speaker's own thoughts): recalled
    before a message when close enough. ``rules`` are the fitted :class:`SchemaRules`, set in
    code only."""

    recall_threshold: Similarity = Field(
        0.45, ge=-1, le=1, description="Centroid similarity to recall."
    )
    max_recalled: int = Field(3, ge=0, le=20, description="R: schemas recalled per reading.")
    summary_thoughts: int = Field(
        8, ge=1, le=100, description="Most central thoughts handed to the schema summariser."
    )
    on_demand_cache: int = Field(
        128,
        ge=1,
        le=100_000,
        description="Runs readings used (made for them or loaded) kept in memory (LRU).",
    )
    recluster_processes: int = Field(
        0,
        ge=0,
        le=64,
        description=(
            "Worker processes re-clustering a channel's speakers (awai_engine/schemas/chains.py):"
            " 0 is one per core, at most 8; 1 re-clusters in the job's own process. Each worker"
            " holds one speaker's clustering (up to 150 MB at 6,000 thoughts)."
        ),
    )
    rules: SchemaRules = Field(
        FITTED_SCHEMA_RULES,
        description="The fitted clustering rules; not read from the environment (see the module).",
    )

    @model_validator(mode="before")
    @classmethod
    def _rules_are_not_settings(cls, values: object) -> object:
        return refuse_rules(
            values,
            SchemaRules,
            "schemas",
            "a test sets SchemaSettings(rules=SchemaRules(...)), a bench variant"
            " schemas.rules.FIELD=VALUE (awai_engine/schemas/settings.py, bench/variants.py)",
        )
