"""Where a sentence of a message ends, for the cues that read one sentence rather than the message.

Why: a stance is said in the first sentence, a message asks if any of its sentences does, and
a yes/no question is the last one asked; each needs the message cut into sentences, in English
and Japanese.
"""

from __future__ import annotations

import re

SENTENCE_END = re.compile(r"[。！？!?\n]")
"""Where the first sentence ends for a stance: a question or exclamation mark, 。 or a line break."""

SENTENCES = re.compile(r"[^。！？!?.\n]+[。！？!?.]*")
"""A message's sentences, each with its closing marks (enough to see which of them ask)."""

SENTENCE_BREAK = re.compile(r"(?<=[。！？!?])|(?<=\.)(?=\s)|\n")
"""Where a sentence ends: after a question or exclamation mark or 。, or a full stop before a
space (so "ubuntu 8.10?" stays one sentence)."""
