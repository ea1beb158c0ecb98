"""Finding the channel and speaker a terminal command names, with a clear message when it cannot.

Users type a channel as they gave it to ``awai ingest`` (a name or a full key) and a speaker by
display name or id; a name two speakers share is refused with their ids, never guessed.
"""

from __future__ import annotations

from bots.runtime import Runtime
from bots.terminal.say import fail
from bots.terminal.transcript import channel_key
from bots.terminal.visible import one_line


def find_channel(runtime: Runtime, name: str) -> str | None:
    """The stored channel key for ``name``; ``None`` (after saying which exist) if there is none."""
    key = channel_key(name)
    known = runtime.channels()
    if key in known:
        return key
    listed = ", ".join(one_line(channel) for channel in known) or "none yet"
    fail(f"no channel {key!r} is stored (known: {listed}).")
    return None


def find_speaker(runtime: Runtime, channel: str, name: str, quiet: bool = False) -> str | None:
    """The speaker id for an id or display name (case-insensitive) in the channel, else ``None``
    (said on stderr unless ``quiet``)."""
    speakers = runtime.schemas.speakers(channel)
    if name in speakers:
        return name
    matches = [
        speaker for speaker, shown in speakers.items() if shown.casefold() == name.casefold()
    ]
    if len(matches) == 1:
        return matches[0]
    if matches:
        fail(
            f"several speakers are called {name!r} in {one_line(channel)}; give one id:"
            f" {', '.join(one_line(match) for match in matches)}."
        )
        return None
    if quiet:
        return None
    listed = ", ".join(one_line(shown) for shown in sorted(speakers.values())) or "nobody yet"
    fail(f"nobody called {name!r} speaks in {one_line(channel)} (speakers: {listed}).")
    return None
