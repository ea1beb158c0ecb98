"""The offline backend: extractive, deterministic, and honest that it writes nothing.

Used when no language-model key is configured (and as the fallback when the model fails). Thoughts
are the message's sentences and list items; a summary is the start of the message as said,
shortened; a schema summary is its most central thought; stances stay undetermined and no
interpretation is invented.
"""

from __future__ import annotations

from collections.abc import Sequence

from awai_engine.ports import ExtractionTarget
from awai_engine.settings import LimitsSettings
from awai_engine.text import as_said, clean, shorten, split_sentences
from awai_engine.values import (
    Extraction,
    Interpretation,
    ReadingContext,
    ReadingNote,
    Thought,
    TokenUsage,
)

SUMMARY_WIDTH = 100
EMPTY_TEXT = "(no text)"


class OfflineBackend:
    name = "offline"
    offline = True

    def __init__(self, limits: LimitsSettings | None = None) -> None:
        self.limits = limits or LimitsSettings()

    def extract(self, targets: Sequence[ExtractionTarget]) -> list[Extraction]:
        """Each utterance's own sentences (the earlier ones are not needed to split it)."""
        return [self.extract_one(target.utterance.text) for target in targets]

    def extract_one(self, text: str) -> Extraction:
        """Split ``text`` into thoughts, bounded in number and length, never empty."""
        sentences = split_sentences(clean(text)) or [clean(text) or EMPTY_TEXT]
        notes: list[str] = []
        pieces: list[str] = []
        width = self.limits.max_thought_chars
        for sentence in sentences:
            pieces.extend(
                sentence[start : start + width] for start in range(0, len(sentence), width)
            )
        limit = self.limits.max_thoughts_per_message
        if len(pieces) > limit:
            notes.append(
                f"The message has {len(pieces)} sentences; the first {limit - 1} are read as"
                " thoughts and the rest as one last thought (the full text is kept)."
            )
            pieces = [*pieces[: limit - 1], " ".join(pieces[limit - 1 :])]
        thoughts = tuple(Thought(index=i, text=piece) for i, piece in enumerate(pieces))
        return Extraction(
            thoughts=thoughts,
            # The message's start as said, cut with "…": a first sentence alone ("Morning all.")
            # read in the flow as if it were all the speaker said.
            summary=shorten(as_said([thought.text for thought in thoughts]), SUMMARY_WIDTH),
            notes=tuple(notes),
        )

    def summarise_schema(self, speaker_name: str, thoughts: Sequence[str]) -> str:
        return shorten(thoughts[0], SUMMARY_WIDTH) if thoughts else ""

    def interpret(
        self, context: ReadingContext
    ) -> tuple[Interpretation | None, TokenUsage | None, tuple[ReadingNote, ...]]:
        return None, None, ()
