"""Names made from a channel key: a readable slug of it, then a hash of the whole key.

A slug alone is not unique (two keys that differ only in characters a name cannot hold slug
alike), so a name that had to change the key ends with a hash of all of it. Chroma collection
names (``storage.vectors``) and the terminal's file names (``bots.terminal.outputs``) are both
made so; their slugs differ by what their names may hold.
"""

from __future__ import annotations

import hashlib


def key_digest(key: str, chars: int) -> str:
    """The first ``chars`` hex digits of the SHA-256 of ``key``; a key that is not valid UTF-8
    (lone surrogates) hashes its code points."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:chars]


def slug_with_digest(slug: str, key: str, chars: int) -> str:
    """``slug-digest``, or the digest alone when nothing of the key made a slug."""
    digest = key_digest(key, chars)
    return f"{slug}-{digest}" if slug else digest
