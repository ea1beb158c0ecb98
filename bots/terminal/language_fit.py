"""Warning, once per command, when a transcript's language is one the embedding model reads badly.

Why: the default model (all-MiniLM-L6-v2) reads English well and Japanese barely; a Japanese
channel read with it loses what association finds by meaning (a return to a message 30 lines
back reads as a reply to the line before), and nothing in the reading says why. The setting that
fixes it exists (``AWAI_EMBEDDING__BACKEND=multilingual-use``); this names it where the user is.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from awai_engine.embedding_backends.sentence_model import PACKAGED_MINILM
from awai_engine.settings import EmbeddingSettings
from awai_engine.text import detect_language
from awai_engine.values import Utterance

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


class TextSample:
    """Texts taken evenly from a stream of messages whose length is not known in advance.

    Why: a transcript is stored as it is read, never held whole, and the check above looks at
    an even spread of it. Every ``step``-th text is kept; past ``2 × SAMPLE`` kept, every other
    one is let go and ``step`` doubles, so what is kept stays evenly spaced and bounded.
    """

    def __init__(self) -> None:
        self.texts: list[str] = []
        self._step = 1
        self._seen = 0

    def taking(self, utterances: Iterable[Utterance]) -> Iterator[Utterance]:
        """``utterances`` as they are, each text looked at on the way."""
        for utterance in utterances:
            if self._seen % self._step == 0:
                self.texts.append(utterance.text)
                if len(self.texts) > 2 * SAMPLE:
                    del self.texts[1::2]
                    self._step *= 2
            self._seen += 1
            yield utterance
