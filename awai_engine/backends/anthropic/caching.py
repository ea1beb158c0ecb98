"""The prompt-caching floor: below a model's minimum cacheable length nothing is cached.

Why it matters: the API caches a marked prefix only if it is at least this long, silently (the
request is billed in full and both cache counters stay zero). The backend checks its stable
prefixes against the floor at start-up and warns when one is too short. Figures from Anthropic's
prompt-caching page; where sources disagree the higher one is used, and an unknown model gets the
highest, so the check never passes by accident.
"""

from __future__ import annotations

# Longest prefix first: "claude-opus-4-5" must not be read as "claude-opus-4".
# Sonnet 5 and 5.5: 1024 (third-party tables give 512 for Sonnet 5.5; the higher is kept).
MINIMUM_CACHEABLE_TOKENS: tuple[tuple[str, int], ...] = (
    ("claude-sonnet-5", 1024),
    ("claude-opus-4-7", 2048),
    ("claude-opus-4-6", 4096),
    ("claude-opus-4-5", 4096),
    ("claude-haiku-4-5", 4096),
    ("claude-sonnet-4-6", 2048),
    ("claude-sonnet-4-5", 1024),
    ("claude-opus-4-1", 1024),
    ("claude-opus-4", 1024),
    ("claude-sonnet-4", 1024),
    ("claude-3-7-sonnet", 1024),
    ("claude-3-5-haiku", 2048),
    ("claude-3-haiku", 2048),
)
UNKNOWN_MODEL_MINIMUM = 4096


def minimum_cacheable_tokens(model: str) -> int:
    """The smallest prefix, in tokens, the API caches for ``model``."""
    for prefix, tokens in MINIMUM_CACHEABLE_TOKENS:
        if model.startswith(prefix):
            return tokens
    return UNKNOWN_MODEL_MINIMUM
