"""A tokenizer-free estimate of how many input tokens a text costs.

Why an estimate: Claude's tokenizer is not published and counting through the API would cost a
call per reading. The estimate errs high so a budget enforced with it holds: about one token per
3.5 characters of English, code and JSON, and one per character of Japanese or Chinese script
(Claude spends roughly 1–1.5 characters per token there).
"""

from __future__ import annotations

import math
import unicodedata

CHARS_PER_TOKEN = 3.5


def estimate_tokens(text: str) -> int:
    """Estimated tokens of ``text``: wide (CJK) characters count one each, others 1/3.5."""
    wide = sum(1 for char in text if unicodedata.east_asian_width(char) in "WF")
    return math.ceil(wide + (len(text) - wide) / CHARS_PER_TOKEN)
