"""What a schema is about, offline: its keyphrases against the speaker's other thoughts.

Class-based TF-IDF, as BERTopic names its topics: the schema's thoughts are one class, the rest of
what the speaker had said when the version formed is the other; a term scores by its frequency in
the schema times ``log(1 + A / f)``, with ``A`` the mean number of terms per class and ``f`` the
term's count in both. A word the speaker uses everywhere ("we", "launch" in a launch channel)
scores low; what they say only when this concern comes back scores high. Terms are words and
two-word phrases from :func:`awai_engine.text.words` (English and Japanese alike), counted in the
schema as scikit-learn's ``CountVectorizer`` counts them; a term said in only one thought of the
schema ranks after those that recur.

Terms are counted lower-cased; a name shows each word as the speaker writes it inside a sentence
("Apple Pay", "PR", "Postgres"), so it reads like their words, not like an index.

The contrast set is fixed by the version itself: a version numbered ``v`` was formed on the
speaker's first ``v`` thoughts, so its keyphrases can be recomputed at any time and never change,
and a new name always means a new version. Because that contrast class is a prefix, the speaker's
term counts are kept for every prefix at once (:class:`_Prefixes`): naming a version costs its
members, not the speaker's history, so a re-clustering at 10k messages names its versions in
seconds instead of minutes.
"""

from __future__ import annotations

import bisect
import re
import threading
from array import array
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from awai_engine.stop_words import ENGLISH_STOP_WORDS
from awai_engine.text import shorten, words
from awai_engine.text_caches import register, text_cache

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


@text_cache(maxsize=65_536)
def _thought_terms(thought: str) -> tuple[str, ...]:
    """The terms of one thought. Cached because the same thoughts are counted again as members of
    each version they belong to, and as the prefix of each new sequence (a pure function of the
    text, so the names are unchanged)."""
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
    said = Counter(term for text in (*members, *others) for term in terms(text))
    return _ranked(members, said.__getitem__, said.total(), count)


def _ranked(
    members: Sequence[str], said: Callable[[str], int], total: int, count: int = KEYPHRASES
) -> tuple[str, ...]:
    """The best terms of ``members`` against a contrast class that holds them.

    ``said(term)`` is the term's count in both classes and ``total`` the number of terms in
    both: all a term's score needs of the contrast class, so a caller can count it once for
    every version (:class:`_Prefixes`) instead of once per version. Terms the members never say
    score nothing and are never named, so only the members' own terms are ranked.
    """
    if not members:
        return ()
    # The members' term counts over their sorted vocabulary, as scikit-learn's CountVectorizer
    # counts them, without importing scikit-learn on a reading (a second or more).
    per_member = [Counter(terms(member)) for member in members]
    counted: Counter[str] = Counter()
    for member in per_member:
        counted.update(member)
    if not counted:  # no term at all (only stop words, digits or emoji)
        return ()
    vocabulary = np.array(sorted(counted), dtype=str)
    inside = np.array([counted[term] for term in vocabulary.tolist()], dtype=np.float64)
    both = np.array([said(str(term)) for term in vocabulary], dtype=np.float64)
    frequency = inside / max(float(inside.sum()), 1.0)
    average = total / 2  # the mean number of terms of the two classes
    score = frequency * np.log(1.0 + average / np.maximum(both, 1.0))
    thoughts_with = Counter(term for member in per_member for term in member)
    recurring = np.array([thoughts_with[term] >= 2 for term in vocabulary.tolist()], dtype=bool)
    order = np.lexsort((vocabulary, -score, ~recurring))
    chosen: list[tuple[str, set[str], float]] = []
    for index in order:
        term, tokens, times = (
            str(vocabulary[index]),
            set(str(vocabulary[index]).split()),
            inside[index],
        )
        held = [n for n, kept in enumerate(chosen) if _overlaps(term, tokens, kept[0], kept[1])]
        if not held:
            if len(chosen) < count:
                chosen.append((term, tokens, times))
        elif len(held) == 1 and tokens > chosen[held[0]][1] and times >= chosen[held[0]][2]:
            chosen[held[0]] = (term, tokens, times)  # "idempotency key" wherever "idempotency"
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
    pattern = _said_as(word)
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


@text_cache(maxsize=4096)
def _said_as(word: str) -> re.Pattern[str]:
    """Where ``word`` is said, in any case. Compiled once per word: a re-clustering spells each
    name's words again for every version, past the 512 patterns ``re`` keeps compiled."""
    # Latin letters and digits bound a word: Japanese around it ("DCの移行") is no part of it.
    return re.compile(rf"(?<![a-z0-9']){re.escape(word)}(?![a-z0-9'])", re.IGNORECASE)


def _overlaps(term: str, tokens: set[str], other: str, other_tokens: set[str]) -> bool:
    """One phrase holds the other: by words, or by characters for Japanese (同期 in 同期処理)."""
    if tokens <= other_tokens or other_tokens <= tokens:
        return True
    return bool(_CJK.match(term) and _CJK.match(other) and (term in other or other in term))


def version_keyphrases(
    texts: Sequence[str], keys: Sequence[str], state_members: Sequence[str], version: int
) -> tuple[str, ...]:
    """Keyphrases of a version against the speaker's first ``version`` thoughts (``texts`` and
    ``keys`` of the speaker in channel order, at least that many).

    The same as :func:`keyphrases` of the version's members against the rest of those thoughts,
    at the cost of the members alone: the contrast class is a prefix of the speaker's thoughts,
    counted once (:class:`_Prefixes`) for every version and every reading that names one.
    """
    formed = min(version, len(keys))
    with _PREFIXES.lock:
        prefixes = _PREFIXES.covering(texts, keys, formed)
        rows = sorted(
            row
            for row in (prefixes.row_of.get(key) for key in set(state_members))
            if row is not None and row < formed
        )
        inside = [texts[row] for row in rows]
        return _ranked(inside, lambda term: prefixes.said(term, formed), prefixes.totals[formed])


class _Prefixes:
    """How often each term is said in every prefix of one speaker's thoughts.

    Each term keeps the row of every time it is said, in order, so its count in the first ``v``
    thoughts is a binary search; ``totals[v]`` is the number of terms in them. Extending by new
    thoughts costs those thoughts only, which is what keeps naming a re-clustering's versions,
    and the readings after it, from costing versions × thoughts.
    """

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.keys: list[str] = []
        self.row_of: dict[str, int] = {}
        self.totals = array("q", [0])  # of terms in the first v thoughts
        # term → the row it is said in, or the rows (an array) once said twice: most terms of a
        # speaker's talk are said once, and an array each was most of the index's memory.
        self._rows: dict[str, int | array[int]] = {}
        self._seen: tuple[Sequence[str], Sequence[str], int] | None = None

    def holds(self, texts: Sequence[str], keys: Sequence[str], count: int) -> bool:
        """Whether the first ``count`` thoughts given are those indexed, as far as the index goes;
        if so, it is extended to hold all ``count``."""
        seen = self._seen
        if seen is not None and seen[0] is texts and seen[1] is keys and count <= seen[2]:
            return True  # the same (immutable) sequences, already compared this far
        known = min(count, len(self.texts))
        if known and (self.keys[0] != keys[0] or self.keys[known - 1] != keys[known - 1]):
            return False  # another speaker, or another cut of the channel: no need to compare all
        if self.texts[:known] != list(texts[:known]) or self.keys[:known] != list(keys[:known]):
            return False
        if count > known:
            self.extend(texts[known:count], keys[known:count])
        if isinstance(texts, tuple) and isinstance(keys, tuple):
            self._seen = (texts, keys, count)
        return True

    def extend(self, texts: Sequence[str], keys: Sequence[str]) -> None:
        for text, key in zip(texts, keys, strict=True):
            row = len(self.texts)
            said = terms(text)
            for term in said:
                occurrences = self._rows.get(term)
                if occurrences is None:
                    self._rows[term] = row
                elif isinstance(occurrences, int):
                    self._rows[term] = array("i", (occurrences, row))
                else:
                    occurrences.append(row)
            self.texts.append(text)
            self.keys.append(key)
            self.row_of.setdefault(key, row)
            self.totals.append(self.totals[-1] + len(said))

    def said(self, term: str, count: int) -> int:
        """How often ``term`` is said in the first ``count`` thoughts."""
        occurrences = self._rows.get(term)
        if occurrences is None:
            return 0
        if isinstance(occurrences, int):
            return int(occurrences < count)
        return bisect.bisect_left(occurrences, count)


class _PrefixCache:
    """The prefix counts of the speakers named lately, most recent first.

    Keyed by content, not by speaker: a sequence uses an entry whose thoughts agree with its own
    first ``v`` (and extends it), so an edited or restricted sequence never reads another's
    counts and the names stay a pure function of the first ``v`` thoughts. Bounded by the
    thoughts it holds, not only by entries: a re-clustering of a channel of 40 speakers followed
    by readings of any of them finds each speaker's counts, and a 100k-message channel still
    does not keep every speaker's history. (Measured on a held 100k channel, 400 random
    readings: a bound of 30,000 thoughts saved 14 MiB and cost 14 s of counting speakers again,
    35 ms a reading.)
    """

    ENTRIES = 64
    THOUGHTS = 100_000

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._entries: list[_Prefixes] = []

    def clear(self) -> None:
        with self.lock:
            self._entries = []

    def covering(self, texts: Sequence[str], keys: Sequence[str], count: int) -> _Prefixes:
        for n, entry in enumerate(self._entries):
            if entry.holds(texts, keys, count):
                self._entries.insert(0, self._entries.pop(n))
                return entry
        entry = _Prefixes()
        entry.holds(texts, keys, count)
        kept, held = [entry], len(entry.texts)
        for other in self._entries[: self.ENTRIES - 1]:
            held += len(other.texts)
            if held > self.THOUGHTS:
                break
            kept.append(other)
        self._entries = kept
        return entry


_PREFIXES = _PrefixCache()
register(_PREFIXES.clear)  # it holds the thoughts' texts
register(re.purge)  # re keeps the patterns _said_as compiled from words too


def offline_name(phrases: Sequence[str], central: str) -> str:
    """A name from the top keyphrases, listed as the speaker's language lists words ("復元、
    テスト、DC"; "retry, charged twice"); the most central thought when there are none."""
    if phrases:
        chosen = phrases[:NAME_PHRASES]
        comma = "、" if any(_CJK.search(phrase) for phrase in chosen) else ", "
        return shorten(comma.join(chosen), NAME_WIDTH)
    return shorten(central, NAME_WIDTH)
