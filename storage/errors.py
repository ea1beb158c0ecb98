"""What storage raises when it cannot do what was asked; the message says what to change."""

from __future__ import annotations

import re

from awai_engine.errors import AwaiError

_BACKGROUND = re.compile(r"\(Background on this error at: [^)]*\)")


class StorageError(AwaiError, RuntimeError):
    """Storage cannot be used as configured; the message says what to change."""


class DiskFullError(StorageError):
    """The data folder's disk is full: named with the folder, whichever write met it first (the
    writer lock's line, the database, a vector file)."""

    def __init__(self, folder: object, reason: str | None) -> None:
        super().__init__(
            f"The disk of the data directory {folder} is full ({reason or 'no space left'}):"
            " nothing was changed. Free some space and run the same command again."
        )


class EmbeddingMismatchError(StorageError):
    """The channel's vectors were made by another model than the one configured now."""


def driver_words(error: BaseException) -> str:
    """What a database driver said, on one line: SQLAlchemy's wrapper (the exception class in
    brackets, the SQL, the link to its error catalogue) is not for the person who must act."""
    said = str(getattr(error, "orig", None) or error)
    return " ".join(_BACKGROUND.sub("", said).split())
