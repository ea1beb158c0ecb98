"""Which sentence of an earlier message a reply is about: what its headline quotes.

Why: a headline reads *answers Ben: “…”*, and a person checks the quote against the thread. An
earlier message of several sentences ("Odd. The build passed yesterday. Did anyone change the
cache key?") quoted by its first one ("Odd.") says nothing about what the reply answers. The
sentence is one of the earlier message's thoughts (the offline extraction's thoughts are its
sentences, in English and Japanese alike): the question it asks when the reply answers it, else
the one closest to the reply in meaning and in words. Reads the two messages only, so it is as
causal as the scorer.
"""

from __future__ import annotations

import numpy as np

from awai_engine.cues.answers import opens_as_answer
from awai_engine.cues.questions import is_question
from awai_engine.lexical import terms
from awai_engine.timeline import Timeline


def quoted_sentence(timeline: Timeline, position: int, earlier: int) -> str:
    """The thought of the message at ``earlier`` that the message at ``position`` is about:
    among its questions when it asks and the message, by someone else, does not ask or opens as
    an answer does (an answer),
    else among all of them, the one whose best cosine to a thought of the message plus their share of words is
    highest (ties: the first)."""
    said = timeline.messages[earlier].thoughts
    if len(said) == 1:
        return said[0].text
    reply = timeline.messages[position].thoughts
    asking = [k for k, thought in enumerate(said) if is_question(thought.text)]
    text = timeline.messages[position].text
    # An answer may ask in turn ("Not that I know of. Can you file it?"): its opening says it.
    answered = (
        opens_as_answer(text) or not any(is_question(thought.text) for thought in reply)
    ) and (
        timeline.speaker_ids[earlier] != timeline.speaker_ids[position]  # one goes on, not answers
    )
    among = asking if asking and answered else list(range(len(said)))
    if len(among) == 1:
        return said[among[0]].text
    vectors = timeline.vectors
    mine = vectors[np.asarray(timeline.rows_of(position))]
    rows = np.asarray(timeline.rows_of(earlier))[among]
    meaning = (vectors[rows] @ mine.T).max(axis=1)
    words = set(terms(text))
    overlap = np.array([_shared(set(terms(said[k].text)), words) for k in among])
    return said[among[int(np.argmax(meaning + overlap))]].text


def _shared(these: set[str], those: set[str]) -> float:
    """The share of the two sets' words they have in common (Jaccard; 0 when both are empty)."""
    union = these | those
    return len(these & those) / len(union) if union else 0.0
