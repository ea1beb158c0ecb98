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
import hashlib
import itertools
import re
import threading
from array import array
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from awai_engine.schemas.basis import Basis
from awai_engine.schemas.substance import REACTIONS, addressed_names
from awai_engine.stop_words import ENGLISH_STOP_WORDS
from awai_engine.text import shorten, word_spans, words
from awai_engine.text_caches import register, text_cache

RULES = 3
"""The version of the naming rules: raise it with any change that can change a name made without
the model (the lists, the term rules, the ranking). Names memoised under another version are made
again when next shown (:mod:`awai_engine.schemas.summaries`). 1: the rules until session 16; 2:
no names, amounts, plain verbs or fixed-phrase pieces, Japanese phrases written joined; 3: a word
said only inside phrases gives way to its phrase, a phrase spelled as said."""

KEYPHRASES = 5
NAME_PHRASES = 3
NAME_WIDTH = 60
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_SEPARATOR = "\x1e"  # between thoughts in a class document: no phrase spans two thoughts
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+|[。！？]\s*)\W*$")
_BREAK = " \x1f "  # put for what is no term: the words either side of it are no phrase
# A number, version, duration, size, time or share on its own: "15", "4.2s", "2.13", "v2.14",
# "900ms", "02d", "10:00", "80%". It says how much, not what the thought is about.
_AMOUNT = re.compile(r"v?\d[\d.,:/x]*(?:[a-z]{1,3}|%)?")
_URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
_CODE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)  # a code block: names of code, not of a thought
# Fixed phrases of talk whose words mean nothing on their own ("far" of "so far").
_FIXED_PHRASES = (
    *("so far", "as far as", "at least", "at most", "at all", "by the way", "in fact"),
    *("of course", "for now", "right now", "kind of", "sort of", "a bit", "a lot", "as well"),
    *("no longer", "in case", "for sure", "make sure", "on it", "each other", "more or less"),
    *("all good", "next time", "last time", "this time"),
)
# Matched in lower case or with a capital first letter, as literal alternatives: re's IGNORECASE
# (or a class of both cases) made this a sixth of all naming.
_SET_PHRASES = re.compile(
    r"\b(?:"
    + "|".join(
        re.escape(said)
        for phrase in _FIXED_PHRASES
        for said in (phrase, phrase[0].upper() + phrase[1:])
    )
    + r")\b"
)
# Words of any topic at all, which a name made of them says nothing with: verbs of doing anything
# ("add", "open", "check"), size and sameness ("small", "same"), days and times ("tomorrow",
# "Monday", 明日, 週明け) and units. A closed list, as stop lists are; a word that could be what
# someone is about (a "deploy", a "cache") stays out of it.
_PLAIN = """
    add added adding adds open opened opening opens check checked checking checks look looked
    looking make makes making made take takes taking took give gives giving gave put puts
    putting try tries trying tried start starts starting started keep keeps keeping kept help
    helps helped helping come comes coming came go goes going went gone see sees seeing saw
    seen find finds finding found show shows showing showed shown tell tells telling told talk
    talks talking talked work works working worked wait waits waiting waited watch watching
    watched happen happens happened happening feel feels feeling felt leave leaves leaving left
    bring brings brought turn turns turned use uses using used finish finished finishing
    handle handled handling stay stays stayed staying pushing pulling doing
    small smaller big bigger biggest large larger new newer old older same different better
    best worse worst far little whole real able lots plenty bunch
    today tomorrow yesterday tonight morning afternoon evening later soon earlier early late
    monday tuesday wednesday thursday friday saturday sunday
    second seconds minute minutes hour hours day days week weeks month months year years
    times percent time way stuff point
    今日 明日 昨日 今朝 今夜 週明 今週 来週 先週 今回 前回 次回 予定 確認 対応 必要 場合 感じ
    件 方 私 自分 皆
"""
_PLAIN_WORDS = frozenset(_PLAIN.split())


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
    text, so the names are unchanged).

    A term is a content word, or two different content words said as one phrase (only spaces
    between them; nothing between them in Japanese, so 接続プール is one and プールの変更 is not).
    What cannot carry a recurring thought is left out (see :func:`_is_content`).
    """
    text = _SET_PHRASES.sub(_BREAK, _URL.sub(_BREAK, _CODE.sub(_BREAK, thought)))
    addressed = addressed_names(thought)
    kept: list[str] = []
    pairs: list[str] = []
    before: str | None = None  # the content word just before, if the word before was one
    ended = 0
    for word, start, end in word_spans(text):
        if not _is_content(word) or word in addressed:
            before = None
            continue
        kept.append(word)
        if before not in (None, word) and _one_phrase(text[ended:start]):
            pairs.append(f"{before} {word}")
        before, ended = word, end
    return (*kept, *pairs)


@text_cache(maxsize=65_536)
def _is_content(word: str) -> bool:
    """Whether ``word`` could name what a thought is about: not a stop word, a filler or a
    reaction ("thanks", 了解, 賛成), not a number, version or duration on its own ("4.2s",
    "2.13", "v2.14", "02d"), and not a word of any topic at all ("add", "small", "tomorrow")."""
    return (
        len(word) > 1
        and word not in ENGLISH_STOP_WORDS
        and word not in REACTIONS
        and word not in _PLAIN_WORDS
        and "'" not in word
        and "’" not in word
        and _AMOUNT.fullmatch(word) is None
    )


def _one_phrase(between: str) -> bool:
    """Whether two words with ``between`` between them are said as one phrase."""
    return between == "" or (between.isspace() and "\n" not in between)


def keyphrases(
    members: Sequence[str], others: Sequence[str], count: int = KEYPHRASES
) -> tuple[str, ...]:
    """The terms that set ``members`` apart from ``others``, best first (see the module)."""
    said = Counter(term for text in (*members, *others) for term in terms(text))
    return _ranked(members, said.__getitem__, said.total(), count)


def _ranked(
    members: Sequence[str],
    said: Callable[[str], int],
    total: int,
    count: int = KEYPHRASES,
    names: frozenset[str] = frozenset(),
) -> tuple[str, ...]:
    """The best terms of ``members`` against a contrast class that holds them.

    ``said(term)`` is the term's count in both classes and ``total`` the number of terms in
    both: all a term's score needs of the contrast class, so a caller can count it once for
    every version (:class:`_Prefixes`) instead of once per version. Terms the members never say
    score nothing and are never named, so only the members' own terms are ranked. A term with a
    word of ``names`` (the channel's speakers, lower-cased) is never named.
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
    if recurring.any():  # a word said in one thought only is no part of what comes back
        order = order[recurring[order]]
    chosen: list[tuple[str, set[str], float]] = []
    for index in order:
        term, tokens, times = (
            str(vocabulary[index]),
            set(str(vocabulary[index]).split()),
            inside[index],
        )
        if tokens & names:
            continue  # a person of the channel: who is talked to or about, not the thought
        held = [n for n, kept in enumerate(chosen) if _overlaps(term, tokens, kept[0], kept[1])]
        if not held:
            if len(chosen) < count:
                chosen.append((term, tokens, times))
        elif all(tokens > chosen[n][1] and times >= chosen[n][2] for n in held):
            # "idempotency key" wherever "idempotency"; "session keys" for "keys" and "session"
            chosen[held[0]] = (term, tokens, times)
            for n in reversed(held[1:]):
                del chosen[n]
    chosen = _said_in_phrases(chosen, counted, thoughts_with)
    return tuple(as_written(term, members) for term, _, _ in chosen)


def _said_in_phrases(
    chosen: list[tuple[str, set[str], float]],
    counted: Counter[str],
    thoughts_with: Counter[str],
) -> list[tuple[str, set[str], float]]:
    """``chosen`` with each word that the members say only inside two-word phrases replaced by
    the phrase they say it in most (when that phrase recurs): "smart" of "Smart Reminders" and
    "smart scheduling" names nothing, "Smart Reminders" does. The phrase takes the place of an
    earlier term it holds ("restore", then "test": "restore test"); a later term it holds is
    dropped ("freeze" after "feature freeze")."""
    phrases: dict[str, list[str]] = {}
    for term in counted:
        if " " in term:
            for word in term.split():
                phrases.setdefault(word, []).append(term)
    kept: list[tuple[str, set[str], float]] = []
    for term, tokens, times in chosen:
        around = phrases.get(term, [])
        replaced = False
        if " " not in term and around and sum(counted[p] for p in around) >= counted[term]:
            best = min(around, key=lambda p: (-counted[p], p))
            if thoughts_with[best] >= 2:
                term, tokens, times = best, set(best.split()), float(counted[best])
                replaced = True
        held = [n for n, (_, other, _) in enumerate(kept) if tokens & other]
        if not held:
            kept.append((term, tokens, times))
        elif replaced and all(kept[n][1] <= tokens for n in held):
            kept[held[0]] = (term, tokens, times)  # "restore" and "test": "restore test"
            for n in reversed(held[1:]):
                del kept[n]
    return kept


def as_written(term: str, texts: Sequence[str]) -> str:
    """``term`` with each Latin word spelled as ``texts`` spell it most often mid-sentence.

    A capital at the start of a sentence says nothing about the word, so those are not counted,
    except an all-capital spelling ("PR"). Words never written mid-sentence stay lower-case.
    Two Japanese words of a phrase are written together, as they were said (接続プール); two
    Latin words are spelled as the phrase is ("Smart Reminders", not "smart Reminders" because
    "smart" is lower-case more often elsewhere).
    """
    if " " in term and not _CJK.search(term):
        return _spelled(term, texts)
    spelled = [_spelled(word, texts) for word in term.split()]
    written = spelled[0]
    for before, word in itertools.pairwise(spelled):
        joined = _CJK.search(before[-1]) and _CJK.match(word)
        written += word if joined else f" {word}"
    return written


def _spelled(word: str, texts: Sequence[str]) -> str:
    if not re.search("[a-z]", word):
        return word
    pattern = _said_as(word)
    inside: Counter[str] = Counter()
    capitals: Counter[str] = Counter()
    for text in texts:
        for match in pattern.finditer(text):
            form = " ".join(match.group(0).split())
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
    said = r"\s+".join(map(re.escape, word.split()))  # a phrase: its words with any spacing
    return re.compile(rf"(?<![a-z0-9']){said}(?![a-z0-9'])", re.IGNORECASE)


def _overlaps(term: str, tokens: set[str], other: str, other_tokens: set[str]) -> bool:
    """Two terms share a word, or one holds the other by characters for Japanese (同期 in
    同期処理), or a plural of the other's ("retries", "retry"): a name saying "プール" three
    times over says it once."""
    if tokens & other_tokens or {_singular(t) for t in tokens} & {
        _singular(t) for t in other_tokens
    }:
        return True
    return bool(_CJK.match(term) and _CJK.match(other) and (term in other or other in term))


def _singular(word: str) -> str:
    """An English plural's singular, roughly ("retries" → "retry", "keys" → "key")."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def version_keyphrases(
    texts: Sequence[str],
    keys: Sequence[str],
    state_members: Sequence[str],
    version: int,
    names: frozenset[str] = frozenset(),
) -> tuple[str, ...]:
    """Keyphrases of a version against the speaker's first ``version`` thoughts (``texts`` and
    ``keys`` of the speaker in channel order, at least that many), leaving out the words of
    ``names`` (see :func:`known_names`).

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
        return _ranked(
            inside,
            lambda term: prefixes.said(term, formed),
            prefixes.totals[formed],
            names=names,
        )


def basis_keyphrases(basis: Basis, members: Sequence[str], version: int) -> tuple[str, ...]:
    """:func:`version_keyphrases` of a version of ``basis``'s speaker, leaving out the names of
    the channel's speakers known when the version formed."""
    return version_keyphrases(
        basis.texts, basis.keys, members, version, known_names(basis, version)
    )


def known_names(basis: Basis, version: int) -> frozenset[str]:
    """The words (lower-cased) of the names of the channel's speakers who had spoken by the
    speaker's ``version``-th thought: people, who are talked to or about, known causally (a
    speaker who comes later cannot change an earlier version's name)."""
    if not basis.speakers or not version:
        return frozenset()
    formed = int(basis.positions[min(version, basis.count) - 1])
    return _known_names_of(basis.speakers).by(formed)


def known_speakers_key(basis: Basis, version: int) -> str:
    """A fingerprint of the speakers' names (in order of first message) known by the speaker's
    ``version``-th thought: what :func:`known_names` is a function of, without finding a word.

    Why: a memo keyed by :func:`known_names` itself (the keyphrases', ``.summaries``) found
    every speaker's name words to look itself up, once per process: 19–31 ms of
    ``awai read FILE`` in a channel of 8,455 speakers, for a memo that was there."""
    if not basis.speakers or not version:
        return ""
    formed = int(basis.positions[min(version, basis.count) - 1])
    return _known_names_of(basis.speakers).key_by(formed)


class _KnownNames:
    """The name words of one channel's speakers (in order of their first message) known by any
    position: each speaker's words found once, and the words of each prefix of speakers kept.

    Why: naming a version walked every speaker of the channel, 5 ms a call with 4,585 of them,
    a few calls a reading; now it is a binary search, and a prefix not kept yet is the nearest
    kept one below it and the speakers between."""

    KEPT = 16  # prefixes kept: each a set of name words, ~0.3 MiB with 4,585 speakers

    def __init__(self, speakers: tuple[tuple[str, int], ...]) -> None:
        self.speakers = speakers
        self._firsts = [first for _, first in speakers]
        self._words: dict[int, frozenset[str]] = {}  # speaker number → their name's words
        self._prefixes: dict[int, frozenset[str]] = {0: frozenset()}  # speakers → words
        self._keys: dict[int, str] = {}  # speakers → the fingerprint of their names
        self._lock = threading.Lock()

    def key_by(self, position: int) -> str:
        """The fingerprint of the names of the speakers known by ``position``."""
        known = bisect.bisect_right(self._firsts, position)
        with self._lock:
            found = self._keys.get(known)
            if found is None:
                fingerprint = hashlib.sha256(known.to_bytes(8, "little"))
                # each name with its length: a display name may hold any separator
                for name, _ in self.speakers[:known]:
                    encoded = name.encode("utf-8", "surrogatepass")
                    fingerprint.update(len(encoded).to_bytes(8, "little") + encoded)
                found = fingerprint.hexdigest()
                if len(self._keys) >= self.KEPT:
                    del self._keys[next(iter(self._keys))]
                self._keys[known] = found
            return found

    def by(self, position: int) -> frozenset[str]:
        known = bisect.bisect_right(self._firsts, position)
        with self._lock:
            found = self._prefixes.get(known)
            if found is None:
                below = max(count for count in self._prefixes if count < known)
                more = (self._words_of(number) for number in range(below, known))
                found = self._prefixes[below].union(*more)
                if len(self._prefixes) >= self.KEPT:
                    del self._prefixes[next(count for count in self._prefixes if count)]
                self._prefixes[known] = found
            return found

    def _words_of(self, number: int) -> frozenset[str]:
        found = self._words.get(number)
        if found is None:
            found = self._words[number] = frozenset(words(self.speakers[number][0]))
        return found


_known_lock = threading.Lock()
_known: list[_KnownNames] = []  # the speakers tuples named lately, most recent last
_TUPLES_KEPT = 4  # a channel hands out a new tuple with each new speaker: the old one is done


def _forget_known() -> None:
    """Drop every speakers tuple kept (they hold names and name words): a forgotten speaker's
    name is gone from the process too."""
    with _known_lock:
        _known.clear()


register(_forget_known)


def _known_names_of(speakers: tuple[tuple[str, int], ...]) -> _KnownNames:
    """The :class:`_KnownNames` of a timeline's speakers tuple (the same object until a new
    speaker comes: :meth:`~awai_engine.timeline.Timeline.speakers_seen`), kept for the few
    tuples used lately (a process may hold several channels)."""
    with _known_lock:
        for entry in _known:
            if entry.speakers is speakers:
                return entry
        entry = _KnownNames(speakers)
        _known.append(entry)
        del _known[:-_TUPLES_KEPT]
        return entry


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
        return shorten(listed(phrases[:NAME_PHRASES]), NAME_WIDTH)
    return shorten(central, NAME_WIDTH)


def listed(phrases: Sequence[str]) -> str:
    """Phrases listed as their language lists words: 、 between Japanese ones, ", " else."""
    comma = "、" if any(_CJK.search(phrase) for phrase in phrases) else ", "
    return comma.join(phrases)
