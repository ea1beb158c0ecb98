"""The engine's two outward interfaces: where data is kept, and who writes language.

The engine depends on these protocols only, so it imports neither a database library nor an HTTP
client; ``storage/`` and ``awai_engine.backends`` provide the implementations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from awai_engine.errors import AwaiError
from awai_engine.timeline import Timeline
from awai_engine.values import (
    Extraction,
    Interpretation,
    ReadingContext,
    ReadingNote,
    TokenUsage,
    Utterance,
)


@dataclass(frozen=True)
class PreparedUtterance:
    """An utterance with everything derived from it, ready to be written in one step."""

    utterance: Utterance
    extraction: Extraction
    vectors: np.ndarray  # one unit-length float32 row per thought


@dataclass(frozen=True)
class ExtractionTarget:
    """One utterance to extract, with the earlier utterances of its line it may be read with.

    ``before`` (oldest first) holds only messages said before ``utterance``, so its thoughts and
    summary depend on the past alone (see :mod:`awai_engine.extraction_window`).
    """

    utterance: Utterance
    before: tuple[Utterance, ...] = ()


@dataclass(frozen=True)
class ChannelInfo:
    key: str
    embedding_model: str | None
    dimension: int | None


class Store(Protocol):
    """Durable storage of channels, utterances (with edit history), thoughts and vectors."""

    def ensure_channel(self, channel: str, embedding_model: str, dimension: int) -> ChannelInfo:
        """Create the channel on first use; refuse a model that differs from the channel's own."""
        ...

    def channels(self) -> list[str]: ...

    def stored_texts(self, channel: str, message_ids: Sequence[str]) -> dict[str, str]:
        """Current text of the given messages that are stored (absent ids are new)."""
        ...

    def stored_edit_times(
        self, channel: str, message_ids: Sequence[str]
    ) -> dict[str, float | None]:
        """The platform edit time of each stored message's text (``None``: never edited)."""
        ...

    def tombstones(self, channel: str, message_ids: Sequence[str]) -> dict[str, float | None]:
        """The deleted among ``message_ids``: they must not come back, but for a withdrawal (its
        edit time, else ``None``) that a later edit undoes (:meth:`Utterance.brings_back`)."""
        ...

    def fallback_utterances(self, channel: str) -> list[Utterance]:
        """Stored messages whose thoughts are an offline fallback, in channel order."""
        ...

    def save(self, channel: str, items: Sequence[PreparedUtterance]) -> None:
        """Insert new utterances and replace edited ones (thoughts and vectors with them); a
        model's extraction also replaces a stored fallback of the same text, in place."""
        ...

    def delete(self, channel: str, message_id: str, withdrawn_ts: float | None = None) -> bool:
        """Remove a message from every store; ``False`` if it was not there. ``withdrawn_ts``:
        its words were edited off the platform then, and a later edit may bring it back."""
        ...

    def timeline(self, channel: str) -> Timeline:
        """The channel's current read model (cheap: cached, rebuilt only after changes)."""
        ...

    def write_under_way(self, channel: str, message_id: str) -> str | None:
        """The message's scope if a writer is between the steps of storing it (its row is
        written, readers do not see it yet); ``None`` otherwise."""
        ...

    def removal_mark(self) -> str:
        """A token that changes whenever a message is removed or a channel dropped, by any
        process sharing the database."""
        ...

    def drop_outdated_timelines(self) -> list[str]:
        """Drop the read models this process holds (in memory and on disk) that hold a row
        changed since other than by an append (another process removed or edited a message);
        the channels dropped."""
        ...

    def holds_timeline(self, channel: str) -> bool:
        """Whether this process holds the channel's read model in memory (never builds it)."""
        ...

    def on_timeline_released(self, listener: Callable[[str], None]) -> None:
        """Have ``listener(channel)`` called whenever a read model of the channel is let go of
        (evicted under ``read_model.max_mb``, rebuilt, forgotten or dropped as outdated), so
        whatever was derived from it goes too."""
        ...

    def thread_scopes(self, channel: str) -> dict[str, frozenset[str]]:
        """Each thread with stored messages, and the visibility scopes its messages carry."""
        ...

    def rescope_thread(self, channel: str, thread_root: str, scope: str) -> int:
        """Give one thread's stored messages another scope; returns how many changed."""
        ...

    def rebuild_vectors(self, channel: str, encode: Callable[[list[str]], np.ndarray]) -> int:
        """Build the channel's vector index anew from the thoughts it keeps (the index could not
        be read: :class:`~awai_engine.reconcile.DamagedVectorsError`); returns how many."""
        ...


class ContextTooLargeError(AwaiError, ValueError):
    """A reading's context does not fit the language model's budget even when trimmed: the
    reading is offline, and says it was over budget (not that the model failed)."""


class LanguageBackend(Protocol):
    """Writes language: thoughts and summaries at ingest, schema summaries, the reading.

    The offline backend is extractive and honest about it; the Anthropic backend writes.
    """

    name: str
    offline: bool

    def extract(self, targets: Sequence[ExtractionTarget]) -> list[Extraction]:
        """Thoughts and a one-line summary for each target utterance, in order, each written
        from that utterance and the earlier ones it comes with only."""
        ...

    def summarise_schema(self, speaker_name: str, thoughts: Sequence[str]) -> str:
        """A short summary of one preconception; ``thoughts`` are most central first.

        Raises when no model-written summary can be had (the caller falls back without keeping
        the fallback as final)."""
        ...

    def interpret(
        self, context: ReadingContext
    ) -> tuple[Interpretation | None, TokenUsage | None, tuple[ReadingNote, ...]]:
        """The written reading (or ``None`` offline), token usage, and notes for the user.

        Raises :class:`ContextTooLargeError` when the context cannot be sent at all.

        The reading's ``schema_bearings`` are the stances of the recalled schemas: one call
        decides both, so the two cannot disagree."""
        ...
