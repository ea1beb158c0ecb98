"""The key of a chat platform's channel in AWAI: ``<platform>:<workspace or server>:<channel>``.

Why one module: purges, schedules and catch-ups read keys back (which workspace or server, which
channel), and each platform had its own way of doing it (Discord a parser, Slack splits on
``:`` where it needed a part). Slack's and Discord's keys are made and read here; the terminal's
(``terminal:local:<name>``) keep the same shape.
"""

from __future__ import annotations


def channel_key(platform: str, place: str, channel: str) -> str:
    """The key of ``channel`` of workspace or server ``place`` on ``platform``."""
    return f"{platform}:{place}:{channel}"


def place_prefix(platform: str, place: str) -> str:
    """What every key of one workspace or server starts with (to purge it, never to mix)."""
    return f"{platform}:{place}:"


def parse_key(key: str, platform: str) -> tuple[str, str] | None:
    """``(place, channel)`` of a key of ``platform``; ``None`` for another platform's key or
    one not of this shape."""
    found, _, rest = key.partition(":")
    place, _, channel = rest.partition(":")
    if found != platform or not place or not channel:
        return None
    return place, channel
