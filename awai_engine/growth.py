"""How far a column held in memory grows when a message does not fit it any more.

Why a quarter, not double: a channel's columns (times, speakers, name codes, the reply
scorer's derived numbers, the word index's lengths) are appended to one message at a time,
and a live bot's first message after loading a large channel grew every one of them to twice
the channel, half of it unused: 24 MiB of a bot holding 100,000 messages. Growing by a quarter
still copies each element a bounded number of times (amortized constant work per append) and
leaves at most a fifth unused.
"""

from __future__ import annotations

# Small columns grow by at least this much, so a new channel is not copied every few messages.
SMALLEST_STEP = 256


def grown_length(needed: int, held: int) -> int:
    """The new length of a column of ``held`` elements that must hold ``needed``."""
    return max(needed, held + max(held // 4, SMALLEST_STEP))
