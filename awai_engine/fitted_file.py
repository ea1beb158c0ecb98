"""Reading a fitted model shipped as a JSON file in the package (the reply-target scorer, recall's
admission gate).

Both are read once per process, at the first reading that needs them, so a missing, unreadable
or damaged file must say which file, what is wrong with it and how to get it back, in the same
words for each: an :class:`~awai_engine.errors.AwaiError` the terminal and ``awai doctor`` print
as one line, never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from awai_engine.errors import AwaiError

Model = TypeVar("Model")


def read_fitted(
    path: Path,
    name: str,
    rebuilt_by: str,
    shape: tuple[str, tuple[str, ...]],
    build: Callable[[dict[str, Any]], Model],
    error: type[AwaiError],
) -> Model:
    """``build`` applied to the JSON in ``path``, once its ``format`` and ``features`` are the
    ``shape`` this version of AWAI writes and computes. ``build`` raises ``ValueError`` (or a
    ``KeyError``, ``TypeError``, ``IndexError`` of a missing or malformed field) for numbers
    that do not fit, and that is reported as damage. ``name`` names the file in the message
    ("the reply-target model file"); ``rebuilt_by`` is the bench module that fits it."""
    fix = f"reinstall AWAI, or rebuild it with `python -m {rebuilt_by}`"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"The {name} {path} is missing; {fix}.") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as problem:
        raise error(f"The {name} {path} cannot be read ({problem}); {fix}.") from None
    try:
        fitted_format, features = shape
        if raw.get("format") != fitted_format:
            raise ValueError(f"format {raw.get('format')!r}, expected {fitted_format!r}")
        if tuple(raw["features"]) != features:
            raise ValueError("its features are not the ones this version of AWAI computes")
        return build(raw)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as problem:
        raise error(f"The {name} {path} is damaged ({problem}); {fix}.") from None
