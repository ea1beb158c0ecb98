"""Finding the channel and speaker a terminal command names, with a clear message when it cannot.

Users type a channel as they gave it to ``awai ingest`` (a name or a full key) and a speaker by
display name or id; a name that could be two speakers is refused with their ids, never guessed.
"""

from __future__ import annotations

import unicodedata

from bots.runtime import Runtime
from bots.terminal.say import fail
from bots.terminal.transcript import channel_key, channel_name
from bots.terminal.visible import one_line


def find_channel(runtime: Runtime, name: str) -> str | None:
    """The stored channel key for ``name``; ``None`` (after saying which exist) if there is none."""
    key = channel_key(name)
    known = runtime.channels()
    if key in known:
        return key
    listed = ", ".join(channel_name(channel) for channel in known) or "none yet"
    fail(f'No channel "{channel_name(key)}" is stored (known: {listed}).')
    return None


def find_speaker(
    runtime: Runtime, channel: str, name: str, quiet: bool = False, by_id: bool = False
) -> str | None:
    """The one speaker of the channel that ``name`` names, else ``None`` (said on stderr unless
    ``quiet``).

    ``name`` may be an id or a display name, compared after Unicode NFC normalisation and
    casefolding (``José`` typed precomposed or decomposed, ``ann`` for ``Ann``). It must name
    exactly one speaker: when it is one person's id and another's name, or the name of several,
    the candidates are listed with their ids and nothing is chosen, since a forget cannot be
    undone. ``by_id``: ``name`` is an id, matched exactly (how one of the candidates is named).
    """
    speakers = runtime.schemas.speakers(channel)
    if by_id:
        if name in speakers:
            return name
        if not quiet:
            fail(
                f"no speaker has the id {_shown(name)} in {channel_name(channel)} (ids: {_ids(speakers)})."
            )
        return None
    wanted = _folded(name)
    candidates = sorted(
        speaker
        for speaker, shown in speakers.items()
        if wanted in (_folded(speaker), _folded(shown))
    )
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        listed = "; ".join(f"{_shown(speakers[c])} (id {_shown(c)})" for c in candidates)
        fail(
            f"{name!r} could be any of {len(candidates)} speakers in {channel_name(channel)}: {listed}."
            " Name one by its id with --speaker-id."
        )
        return None
    if not quiet:
        listed = ", ".join(one_line(shown) for shown in sorted(speakers.values())) or "nobody yet"
        fail(f"nobody called {name!r} speaks in {channel_name(channel)} (speakers: {listed}).")
    return None


def _folded(text: str) -> str:
    """How a typed name is compared: one Unicode form, no case."""
    return unicodedata.normalize("NFC", text).casefold()


def _shown(text: str) -> str:
    """A name or id as typed at a prompt; escaped when its Unicode form would hide how it
    differs from a look-alike (a decomposed ``é``) or when it holds what does not print."""
    plain = text.isprintable() and unicodedata.normalize("NFC", text) == text
    return repr(text) if plain else ascii(text)


def _ids(speakers: dict[str, str]) -> str:
    return ", ".join(_shown(speaker) for speaker in sorted(speakers)) or "none yet"
