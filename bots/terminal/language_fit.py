"""Warning, once per command, when a transcript's language is one the embedding model reads badly.

Why: the default model (all-MiniLM-L6-v2) reads English well and Japanese barely; a Japanese
channel read with it loses what association finds by meaning (a return to a message 30 lines
back reads as a reply to the line before), and nothing in the reading says why. The setting that
fixes it exists (``AWAI_EMBEDDING__BACKEND=multilingual-use``); this names it where the user is.
"""

from __future__ import annotations

from collections.abc import Sequence

from awai_engine.embedding_backends.sentence_model import PACKAGED_MINILM
from awai_engine.settings import EmbeddingSettings
from awai_engine.text import detect_language

SAMPLE = 200
"""Messages looked at: the language of a channel shows in far fewer; the cost stays flat."""


def english_model_warning(embedding: EmbeddingSettings, texts: Sequence[str]) -> str | None:
    """What to tell the user when most of ``texts`` are Japanese and the configured model is
    the English default; ``None`` otherwise (another model is the operator's informed choice)."""
    if embedding.backend != "sentence-transformers" or embedding.model != PACKAGED_MINILM:
        return None
    step = max(1, len(texts) // SAMPLE)
    sample = texts[::step]
    japanese = sum(detect_language(text) == "ja" for text in sample)
    if not sample or japanese * 2 < len(sample):
        return None
    return (
        f"{japanese} of {len(sample)} messages looked at are Japanese, but the embedding model"
        " (all-MiniLM-L6-v2, the default) reads English: what AWAI finds by meaning will be"
        " weak. For Japanese or mixed channels set AWAI_EMBEDDING__BACKEND=multilingual-use"
        " (it ships with AWAI and works offline), then run `awai reembed CHANNEL` for a channel"
        " already stored."
    )
