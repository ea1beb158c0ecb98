"""A crontab line in the settings (a digest schedule), checked where it is read, for every
platform: the same check, the same message, whichever section names it."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator


def _five_fields(crontab: str) -> str:
    if len(crontab.split()) != 5:
        raise ValueError(
            f"{crontab!r} is not a crontab of five fields (minute hour day month weekday)"
        )
    return crontab


Crontab = Annotated[str, AfterValidator(_five_fields)]
"""Five crontab fields in UTC, e.g. ``0 9 * * mon``."""
