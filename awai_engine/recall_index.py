"""The recall index's settings: BLAS threads for the operator, the index's shape fitted in code.

Two values, as association has (``awai_engine/association/settings.py``).
:class:`RecallIndexSettings` is the ``recall_index`` section of the one AWAI settings object: the
operator's ``AWAI_RECALL_INDEX__BLAS_THREADS``. :class:`RecallIndexRules` shape the index itself
(when exact search stops, how many cells and probes, how many recent rows stay exact); they were
measured for speed against agreement with exact search (bench/read_latency.py,
docs/performance.md), and are set in code only: by a test, or a bench
(``recall_index.rules.FIELD=VALUE`` in ``bench/variants.py``). A rule set in the environment is
refused with that explanation.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from awai_engine.fitted_rules import refuse_rules


class RecallIndexRules(BaseModel):
    """How earlier thoughts are searched: exactly while a channel is small, by cells when large.

    While a message lies within a channel's first ``exact_rows`` thought vectors, every earlier
    thought is compared with it. From that size on, thoughts are filed in a tree of cells:
    ``cells`` centroids at the top, each split into at most ``split`` finer ones per level, a new
    level whenever the channel has grown ``split`` times (see ``awai_engine/cells.py``). Each
    level is fitted only on rows that precede every message that will use it, so it never
    depends on what comes after a message. A later message compares its ``recent_rows`` nearest
    earlier thoughts exactly, where θ(d) is low, and older thoughts only in the ``probes`` finest
    cells nearest to its thoughts: far back, only close meanings pass θ_max, and close
    meanings share cells. Reading cost then stays nearly flat as the channel grows.
    """

    model_config = ConfigDict(frozen=True)

    exact_rows: int = Field(
        4096,
        ge=16,
        description="Thoughts a channel holds before recall stops comparing every earlier one; the"
        " first levels of cells are fitted on them.",
    )
    cells: int = Field(128, ge=1, le=65_536, description="Centroids of the coarsest level.")
    split: int = Field(
        8, ge=2, le=64, description="Growth factor between levels of cells, and children per cell."
    )
    probes: int = Field(
        16,
        ge=1,
        le=65_536,
        description="Nearest cells each thought keeps per level; a message's thoughts share this"
        " many finest cells.",
    )
    occurrence_probes: int = Field(
        0,
        ge=0,
        le=65_536,
        description=(
            "Nearest cells scanned for earlier occurrences of a recalled thought (ACT-R), 0 for"
            " its own cell only: occurrences are near-repeats (similarity ≥ τ_rep), which share"
            " the thought's cell (measured: more cells found no more of them)."
        ),
    )
    recent_rows: int = Field(
        256, ge=0, description="Rows just before a message that are always compared exactly."
    )

    @model_validator(mode="after")
    def _cells_fit(self) -> RecallIndexRules:
        if self.cells > self.exact_rows:
            raise ValueError("recall_index.rules.cells must not exceed exact_rows")
        return self


FITTED_INDEX_RULES = RecallIndexRules()
"""The index every channel in production is searched with."""


class RecallIndexSettings(BaseModel):
    """The recall index a timeline searches with: the fitted ``rules``, and how many threads
    numpy's BLAS may use for it (applied to the whole process by ``Engine``)."""

    blas_threads: int | None = Field(
        1,
        ge=1,
        le=256,
        description=(
            "Threads numpy's BLAS may use (None: its own default). A reading multiplies a few"
            " query vectors with a slice of the channel: too small to gain from threads, while"
            " threads oversubscribe the cores when readings and embeddings run side by side"
            " (measured: 0.1 ms single-threaded against 6–10 ms with threads on a busy 2-core"
            " machine for 1,500 rows)."
        ),
    )
    rules: RecallIndexRules = Field(
        FITTED_INDEX_RULES,
        description="The fitted shape of the index; not read from the environment (see the module).",
    )

    @model_validator(mode="before")
    @classmethod
    def _rules_are_not_settings(cls, values: object) -> object:
        return refuse_rules(
            values,
            RecallIndexRules,
            "recall_index",
            "a test sets RecallIndexSettings(rules=RecallIndexRules(...)), a bench variant"
            " recall_index.rules.FIELD=VALUE (awai_engine/recall_index.py, bench/variants.py)",
        )
