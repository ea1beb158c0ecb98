"""What a schema is about, offline: its keyphrases against the speaker's other thoughts.

Class-based TF-IDF, as BERTopic names its topics: the schema's thoughts are one class, the rest of
what the speaker had said when the version formed is the other; a term scores by its frequency in
the schema times ``log(1 + A / f)``, with ``A`` the mean number of terms per class and ``f`` the
term's count in both. A word the speaker uses everywhere ("we", "launch" in a launch channel)
scores low; what they say only when this concern comes back scores high. Terms are words and
two-word phrases from :func:`awai_engine.text.words` (English and Japanese alike), counted by
scikit-learn's ``CountVectorizer``; a term said in only one thought of the schema ranks after
those that recur.

Terms are counted lower-cased; a name shows each word as the speaker writes it inside a sentence
("Apple Pay", "PR", "Postgres"), so it reads like their words, not like an index.

The contrast set is fixed by the version itself: a version numbered ``v`` was formed on the
speaker's first ``v`` thoughts, so its keyphrases can be recomputed at any time and never change,
and a new name always means a new version.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from awai_engine.text import shorten, words

KEYPHRASES = 5
NAME_PHRASES = 3
NAME_WIDTH = 60
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_SEPARATOR = "\x1e"  # between thoughts in a class document: no phrase spans two thoughts
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+|[。！？]\s*)\W*$")
# Words of talk itself, not of any topic, that scikit-learn's (written English) stop list keeps:
# a name such as "launch weekend, like, rota" reads better without them.
SPOKEN_FILLERS = frozenset(
    [
        "like",
        "just",
        "think",
        "know",
        "really",
        "ask",
        "want",
        "need",
        "instead",
        "maybe",
        "actually",
        "okay",
        "ok",
        "yeah",
        "yes",
        "thing",
        "things",
        "lot",
        "sure",
        "guess",
        "mean",
        "going",
        "got",
        "let",
        "say",
        "said",
        "sounds",
        "good",
        "great",
        "right",
    ]
)


def terms(document: str) -> list[str]:
    """Content words and two-word phrases of each thought of a class document."""
    found: list[str] = []
    for thought in document.split(_SEPARATOR):
        found += _thought_terms(thought)
    return found


@lru_cache(maxsize=65_536)
def _thought_terms(thought: str) -> tuple[str, ...]:
    """The terms of one thought. Cached because every version of a speaker's preconceptions is
    named against all of the speaker's earlier thoughts, so a re-clustering at 10k messages
    tokenised the same thoughts once per version (a pure function of the text, so the names are
    unchanged)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    said = words(thought)
    content = [
        w not in ENGLISH_STOP_WORDS
        and w not in SPOKEN_FILLERS
        and len(w) > 1
        and not w.isdigit()
        and "'" not in w
        for w in said
    ]
    kept = [w for w, keep in zip(said, content, strict=True) if keep]
    pairs = [
        f"{said[i]} {said[i + 1]}" for i in range(len(said) - 1) if content[i] and content[i + 1]
    ]
    return (*kept, *pairs)


def keyphrases(
    members: Sequence[str], others: Sequence[str], count: int = KEYPHRASES
) -> tuple[str, ...]:
    """The terms that set ``members`` apart from ``others``, best first (see the module)."""
    from sklearn.feature_extraction.text import CountVectorizer

    if not members:
        return ()
    vectorizer = CountVectorizer(analyzer=terms)
    try:
        counts = (
            vectorizer.fit_transform([_SEPARATOR.join(members), _SEPARATOR.join(others)])
            .toarray()
            .astype(np.float64)
        )
    except ValueError:  # no term at all (only stop words, digits or emoji)
        return ()
    vocabulary = vectorizer.get_feature_names_out()
    frequency = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
    average = counts.sum() / len(counts)
    score = frequency[0] * np.log(1.0 + average / np.maximum(counts.sum(axis=0), 1.0))
    counter = CountVectorizer(analyzer=terms, vocabulary=vocabulary, binary=True)
    recurring = np.asarray(counter.transform(members).sum(axis=0)).ravel() >= 2
    order = np.lexsort((vocabulary, -score, ~recurring))
    chosen: list[tuple[str, set[str], float]] = []
    for index in order:
        term, tokens, said = (
            str(vocabulary[index]),
            set(str(vocabulary[index]).split()),
            counts[0, index],
        )
        if said == 0:
            continue
        held = [n for n, kept in enumerate(chosen) if _overlaps(term, tokens, kept[0], kept[1])]
        if not held:
            if len(chosen) < count:
                chosen.append((term, tokens, said))
        elif len(held) == 1 and tokens > chosen[held[0]][1] and said >= chosen[held[0]][2]:
            chosen[held[0]] = (term, tokens, said)  # "idempotency key" wherever "idempotency"
    return tuple(as_written(term, members) for term, _, _ in chosen)


def as_written(term: str, texts: Sequence[str]) -> str:
    """``term`` with each Latin word spelled as ``texts`` spell it most often mid-sentence.

    A capital at the start of a sentence says nothing about the word, so those are not counted,
    except an all-capital spelling ("PR"). Words never written mid-sentence stay lower-case.
    """
    return " ".join(_spelled(word, texts) for word in term.split())


def _spelled(word: str, texts: Sequence[str]) -> str:
    if not re.search("[a-z]", word):
        return word
    # Latin letters and digits bound a word: Japanese around it ("DCの移行") is no part of it.
    pattern = re.compile(rf"(?<![a-z0-9']){re.escape(word)}(?![a-z0-9'])", re.IGNORECASE)
    inside: Counter[str] = Counter()
    capitals: Counter[str] = Counter()
    for text in texts:
        for match in pattern.finditer(text):
            form = match.group(0)
            if _SENTENCE_START.search(text[: match.start()]):
                if len(form) > 1 and form.isupper():
                    capitals[form] += 1
            else:
                inside[form] += 1
    seen = inside or capitals
    if not seen:
        return word
    return min(seen, key=lambda form: (-seen[form], form != word, form))


def _overlaps(term: str, tokens: set[str], other: str, other_tokens: set[str]) -> bool:
    """One phrase holds the other: by words, or by characters for Japanese (同期 in 同期処理)."""
    if tokens <= other_tokens or other_tokens <= tokens:
        return True
    return bool(_CJK.match(term) and _CJK.match(other) and (term in other or other in term))


def version_keyphrases(
    texts: Sequence[str], keys: Sequence[str], state_members: Sequence[str], version: int
) -> tuple[str, ...]:
    """Keyphrases of a version against the speaker's first ``version`` thoughts (``texts`` and
    ``keys`` of the speaker in channel order, at least that many)."""
    members = set(state_members)
    formed = range(min(version, len(keys)))
    inside = [texts[row] for row in formed if keys[row] in members]
    outside = [texts[row] for row in formed if keys[row] not in members]
    return keyphrases(inside, outside)


def offline_name(phrases: Sequence[str], central: str) -> str:
    """A name from the top keyphrases; the most central thought when there are none."""
    if phrases:
        return shorten(", ".join(phrases[:NAME_PHRASES]), NAME_WIDTH)
    return shorten(central, NAME_WIDTH)
