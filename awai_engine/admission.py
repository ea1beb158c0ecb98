"""What a message's fields must be before AWAI stores it, as reasons a user can act on.

Every adapter's messages pass through :meth:`awai_engine.engine.Engine.ingest`, which refuses a
message these checks find fault with and stores the others; the terminal's transcript reader uses
the same checks so that it can name the line. Each check returns ``None`` when the value is fine,
else one sentence saying what is wrong.

Why these checks: a lone UTF-16 surrogate (half of an emoji an exporter cut) is a Python ``str``
but not text that any database, Chroma or JSON encoder accepts; ``NaN`` and ``Infinity`` order
nothing; and a time after the year 2100 is a unit mistake (epoch milliseconds read as seconds)
that the platforms' clocks never produce, and that the operating system cannot turn into a date.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

EARLIEST_TS = 0.0
LATEST_TS = datetime(2100, 1, 1, tzinfo=UTC).timestamp()


def ts_problem(ts: float, shown: str | None = None) -> str | None:
    """Why ``ts`` (seconds since the epoch) cannot order a message, or ``None``.

    ``shown`` is the value as the user wrote it (an ISO 8601 string, say); without it the number
    is shown, with a hint when it reads as milliseconds or microseconds.
    """
    given = shown if shown is not None else repr(ts)
    if not math.isfinite(ts):
        return f"'ts' is {given}, not a time (seconds since the epoch or ISO 8601)"
    if EARLIEST_TS <= ts < LATEST_TS:
        return None
    hint = ""
    if shown is None and EARLIEST_TS <= ts / 1000 < LATEST_TS:
        hint = "; it looks like milliseconds: divide by 1,000"
    elif shown is None and EARLIEST_TS <= ts / 1_000_000 < LATEST_TS:
        hint = "; it looks like microseconds: divide by 1,000,000"
    return f"'ts' {given} is not a time between 1970-01-01 and 2100-01-01 UTC{hint}"


def text_problem(field: str, value: str) -> str | None:
    """Why ``value`` is not storable text (it holds a lone UTF-16 surrogate), or ``None``."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        return (
            f"{field!r} holds half of a character (the lone surrogate"
            f" \\u{ord(value[error.start]):04x} at character {error.start + 1}); the exporter"
            " probably cut an emoji in two: fix or remove it"
        )
    return None
