"""Text from chat made safe for a terminal: every control character is shown, none is obeyed.

A speaker's name, a channel name or a message can hold ESC and the sequences it starts (CSI
colours and cursor moves, OSC titles and links), their 8-bit C1 forms, a carriage return or
backspace that overwrites what came before, and bidirectional overrides that reverse what
follows: printed raw, any of them lets a chat participant recolour, hide or rewrite what the
operator sees. Each is written instead as the escape Python would write (``\\x1b``, ``\\u202e``),
so it stays visible and says what it was.

Kept as they are: newlines and tabs in multi-line text (a message's own lines), and every
printable character, the zero-width joiners and tag characters emoji are written with included.
A name or any other one-line field (:func:`one_line`) shows its newlines and tabs as escapes too,
so it cannot start a line that looks like AWAI's own.
"""

from __future__ import annotations

import json
import re

# Cc (C0, DEL, C1), Zl and Zp, the bidirectional marks, embeddings, overrides and isolates, and
# lone surrogates (which a terminal cannot even be sent: encoding them fails).
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff"
_IN_TEXT = re.compile(f"[{_CONTROLS}]")
_IN_LINE = re.compile(f"[{_CONTROLS}\n\t]")
# What ``json.dumps(..., ensure_ascii=False)`` leaves raw: everything above but C0 (it escapes those).
_IN_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def visible(text: str) -> str:
    """``text`` with every control character written as its escape; newlines and tabs kept."""
    return _IN_TEXT.sub(_escape, text)


def one_line(text: str) -> str:
    """A name or other one-line field: every control character escaped, newlines and tabs too."""
    return _IN_LINE.sub(_escape, text)


def terminal_json(value: object, indent: int | None = None) -> str:
    """``value`` as JSON that is safe to print: the same JSON value, with the characters a
    terminal would obey written as ``\\uXXXX`` escapes (which JSON decodes back to them)."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    return _IN_JSON.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(found: re.Match[str]) -> str:
    character = found.group()
    code = ord(character)
    if character in _NAMED:
        return _NAMED[character]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
