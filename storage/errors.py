"""What storage raises when it cannot do what was asked; the message says what to change."""

from __future__ import annotations

from awai_engine.errors import AwaiError


class StorageError(AwaiError, RuntimeError):
    """Storage cannot be used as configured; the message says what to change."""


class EmbeddingMismatchError(StorageError):
    """The channel's vectors were made by another model than the one configured now."""
