"""Lexical recall: BM25 over a channel's messages, with the statistics of the prefix only.

Why it exists: a dense encoder such as MiniLM blurs names, numbers and rare words ("idempotency
key", "420 requests per second", a colleague's name), which are exactly what a reader recognises
when a topic comes back weeks later. BM25 ranks them by how rare they are, but its numbers are
corpus statistics: the document frequency of each term (its IDF), the number of documents and
their mean length. Computed over the whole channel, a message written later would change the
score, hence the reading, of an earlier message, breaking the product's invariant. So every
score here is computed as of a position ``end``: documents, frequencies and lengths of the
messages before ``end`` only (postings are kept in channel order, so each is a prefix found by
binary search). The answer for a message is then the same whatever was appended after it.

Why not the database's full-text index: SQLite FTS5's ``bm25()`` and its ``fts5vocab`` counts
cover the whole table, and PostgreSQL's ``ts_rank`` has no document frequencies at all;
docs/evaluation.md ("Lexical recall") measures both ways.

Terms: text is NFKC-normalised and case-folded; runs of letters and digits are terms (so
"420" and "v1.2"'s parts count), words are reduced to their Snowball (Porter 2) English stem so
"painted" finds "painting" (what every full-text engine's English analyser does; measured on
LoCoMo: BM25 top-5 evidence 0.496 → 0.532), and Japanese runs, written without spaces, become
overlapping character bigrams (a lone kanji or kana stays a unigram), the usual segmentation of
CJK full-text indexes when no dictionary is at hand.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain

import numpy as np
import Stemmer

from awai_engine.growth import grown_length
from awai_engine.ordering import stable_order
from awai_engine.text import is_japanese_char
from awai_engine.text_caches import text_cache

BM25_K1 = 1.2
BM25_B = 0.75
ALWAYS_SCORED = 64  # a term held by at most this many messages is never left out
_TERM_OBJECTS = 420  # per term: str header, dict slot, _Postings object, two array headers
# Runs of letters/digits outside Japanese script, or runs of Japanese script.
_RUN = re.compile(r"[^\W_]+", re.UNICODE)
# One stemmer per thread: a Snowball stemmer keeps the word it is stemming on itself, so two
# threads stemming with one (readings and a re-clustering at once) read each other's word and
# fail with IndexError (seen in tests/test_concurrency.py once the cache below missed often).
_stemmers = threading.local()


@text_cache(maxsize=65_536)
def _stem(word: str) -> str:
    """The Snowball English stem of a word (chat vocabularies repeat: cached here, where a
    forget clears it; the stemmer's own cache is off, or it would keep a forgotten speaker's
    words in the process)."""
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        stemmer = _stemmers.english = Stemmer.Stemmer("english", 0)
    return stemmer.stemWord(word)


@text_cache(maxsize=4096)
def terms(text: str) -> tuple[str, ...]:
    """The index terms of ``text`` in order (repeats kept: they are term frequencies). Cached:
    a reading asks for the terms of its message more than once."""
    found: list[str] = []
    for run in _RUN.findall(unicodedata.normalize("NFKC", text).casefold()):
        if run.isascii():  # no Japanese in it: one word
            found.append(_stem(run))
            continue
        start = 0
        for end in range(len(run) + 1):
            at_cut = end == len(run) or (
                end > start and is_japanese_char(run[end]) != is_japanese_char(run[start])
            )
            if not at_cut:
                continue
            piece = run[start:end]
            if piece and is_japanese_char(piece[0]):
                found.extend(
                    [piece]
                    if len(piece) == 1
                    else [piece[i : i + 2] for i in range(len(piece) - 1)]
                )
            elif piece:
                found.append(_stem(piece))
            start = end
    return tuple(found)


@dataclass(frozen=True)
class WordMatch:
    """An earlier message found by its words, and what it shares with the query.

    ``share`` is the part of the query's word weight (the IDF of its terms, at the prefix) that
    the message holds, among the terms some earlier message has: 1.0 when it has all of them,
    small when it shares only a common one. ``terms`` are the shared terms, rarest first (at most five).
    """

    position: int
    score: float
    share: float
    terms: tuple[str, ...]


@dataclass(frozen=True)
class WordSearch:
    """The best BM25 matches of a query (positions and scores, best first), and its mean and
    standard deviation over every message of the prefix (messages without a query term score
    0), so a score reads as standard deviations above what the prefix usually shares."""

    positions: np.ndarray
    scores: np.ndarray
    mean: float
    spread: float


# What a query no earlier message shares a word with finds.
NO_MATCHES = WordSearch(np.empty(0, dtype=np.int64), np.empty(0), 0.0, 0.0)


@dataclass
class _Postings:
    """Positions (ascending) of the messages holding one term, and its count in each."""

    positions: np.ndarray = field(default_factory=lambda: np.empty(4, dtype=np.int64))
    counts: np.ndarray = field(default_factory=lambda: np.empty(4, dtype=np.float32))
    size: int = 0

    def add(self, position: int, count: int) -> None:
        if self.size == len(self.positions):
            self.positions = np.resize(self.positions, 2 * self.size)
            self.counts = np.resize(self.counts, 2 * self.size)
        self.positions[self.size] = position
        self.counts[self.size] = count
        self.size += 1

    def before(self, end: int) -> int:
        """How many of the messages holding the term come before position ``end``."""
        return _before(self.positions, self.size, end)


def _before(positions: np.ndarray, size: int, end: int) -> int:
    """How many of the first ``size`` (ascending) ``positions`` come before ``end``."""
    if size and positions[size - 1] < end:
        return size
    return int(positions[:size].searchsorted(end))


@dataclass(frozen=True)
class _Restored:
    """Postings restored from a file, grouped by term: term number ``n``'s are
    ``positions[bounds[n]:bounds[n + 1]]`` (and its counts), made into a :class:`_Postings` when
    the term is first looked up or added to (see :meth:`LexicalIndex.restored`)."""

    positions: np.ndarray
    counts: np.ndarray
    bounds: np.ndarray  # int64, one more than the terms
    last: np.ndarray  # int64, each term's last position restored (-1 if none)
    messages: int  # how many messages they are of: every position restored is below it

    def reaching(self, start: int) -> list[bool] | None:
        """Which terms have a restored position at ``start`` or after (``None``: none has)."""
        return (self.last >= start).tolist() if start < self.messages else None

    def span(self, number: int) -> tuple[int, int]:
        return int(self.bounds[number]), int(self.bounds[number + 1])


@dataclass(frozen=True)
class LexicalState:
    """A :class:`LexicalIndex` as persisted (see :meth:`LexicalIndex.state`): every term in the
    order it first appeared, and the postings of the messages from one position on, each a
    term's number in ``terms``, a message's position and the term's count there.

    Why by message range: a channel only grows at its end, so what a file of it lacks is the
    postings of its newest messages; they are appended, and the whole index is never rewritten.
    """

    max_share: float
    terms: list[str]
    term_ids: np.ndarray  # int32
    positions: np.ndarray  # int64
    counts: np.ndarray  # float32
    lengths: np.ndarray  # float64, of the messages from the first one the state holds


class LexicalIndex:
    """An append-only inverted index over a channel's messages, scored on any prefix.

    ``max_share``: a term held by more than this share of the messages before ``end`` (and by
    more than ``ALWAYS_SCORED`` of them) is left out of that query: its IDF is near zero, and its
    postings are the longest to score. The cut depends on the prefix only.
    """

    def __init__(self, max_share: float = 0.02) -> None:
        self.max_share = max_share
        # A term's postings, or its number in ``_restored`` until it is first used.
        self._postings: dict[str, _Postings | int] = {}
        self._restored = _Restored(
            np.empty(0, dtype=np.int64),
            np.empty(0, dtype=np.float32),
            np.zeros(1, dtype=np.int64),
            np.empty(0, dtype=np.int64),
            0,
        )
        self._making = threading.Lock()
        self._lengths = np.zeros(256, dtype=np.float64)
        self._cumulative = np.zeros(257, dtype=np.float64)  # total length of messages < p
        self.size = 0
        # The last query's terms at its end: fixed once the index holds that prefix.
        self._last_query: (
            tuple[str, int, frozenset[str], list[tuple[str, float, _Postings, int]]] | None
        ) = None

    def add(self, position: int, text: str) -> None:
        """Index the message at ``position``, which must be the next one."""
        if position != self.size:
            raise ValueError(f"lexical index: add at position {position}, expected {self.size}")
        counted = Counter(terms(text))
        if position + 1 >= len(self._lengths):
            room = grown_length(position + 2, len(self._lengths))
            self._lengths = np.resize(self._lengths, room)
            self._cumulative = np.resize(self._cumulative, room + 1)
        length = float(sum(counted.values()))
        self._lengths[position] = length
        self._cumulative[position + 1] = self._cumulative[position] + length
        for term, count in counted.items():
            postings = self._of(term)
            if postings is None:
                postings = self._postings[term] = _Postings()
            postings.add(position, count)
        self.size += 1

    def _of(self, term: str) -> _Postings | None:
        """The term's postings (``None`` if no message holds it), made from the restored
        arrays on first use. Made under a lock: a reading thread that made them a second time
        could put back, over postings an append has grown, the ones restored."""
        postings = self._postings.get(term)
        if not isinstance(postings, int):
            return postings
        with self._making:
            postings = self._postings[term]
            if isinstance(postings, int):
                postings = self._postings[term] = _Postings(*self._arrays(postings))
            return postings

    def _arrays(self, postings: _Postings | int) -> tuple[np.ndarray, np.ndarray, int]:
        """Positions, counts and how many of them hold, of postings made or not."""
        if isinstance(postings, int):
            start, end = self._restored.span(postings)
            return (
                self._restored.positions[start:end],
                self._restored.counts[start:end],
                end - start,
            )
        return postings.positions, postings.counts, postings.size

    def array_bytes(self) -> int:
        """Bytes the index holds: postings as allocated, and each term's objects (its string,
        dict slot, postings object and two array headers).

        The restored arrays count whole, once; a made term counts only once its arrays are its
        own (grown past the restored view). Why not each term's view: slicing 28,000 of them
        was 25 ms of every start of a 100,000-message channel (the cache sizes it on load)."""
        restored = self._restored
        postings = sum(
            array.nbytes
            for array in (restored.positions, restored.counts, restored.bounds, restored.last)
        )
        for value in self._postings.values():
            if isinstance(value, _Postings) and value.positions.base is not restored.positions:
                postings += value.positions.nbytes + value.counts.nbytes
        terms = sum(len(term) for term in self._postings)
        objects = _TERM_OBJECTS * len(self._postings)
        return postings + terms + objects + self._lengths.nbytes + self._cumulative.nbytes

    def state(self, start: int = 0) -> LexicalState:
        """Every term, and the postings and lengths of the messages from position ``start`` on,
        grouped by term (each term's positions ascending)."""
        ids, positions, counts = [], [], []
        # Of the terms not made since the restore, only those with a position from ``start`` on
        # are looked at: an append's state starts past them all, and slicing each of 28,000
        # made it 27 ms, where skipping them makes it 1.3 ms (6–11 ms before they were lazy).
        reaching = self._restored.reaching(start)
        for number, value in enumerate(self._postings.values()):
            if isinstance(value, int) and (reaching is None or not reaching[value]):
                continue
            held, counted, size = self._arrays(value)
            first = _before(held, size, start)
            if first < size:
                ids.append(np.full(size - first, number, dtype=np.int32))
                positions.append(held[first:size])
                counts.append(counted[first:size])
        return LexicalState(
            max_share=self.max_share,
            terms=list(self._postings),
            term_ids=np.concatenate(ids) if ids else np.empty(0, dtype=np.int32),
            positions=np.concatenate(positions) if positions else np.empty(0, dtype=np.int64),
            counts=np.concatenate(counts) if counts else np.empty(0, dtype=np.float32),
            lengths=self._lengths[start : self.size],
        )

    @classmethod
    def built(cls, texts: Iterable[str], max_share: float = 0.02) -> LexicalIndex:
        """The index of ``texts`` as the messages at positions 0, 1, …: what adding each in turn
        makes (terms numbered in the order they first appear, as :meth:`add` meets them), made
        as one state and restored from it.

        Why: a channel rebuilt whole (any change but an append) added a hundred thousand
        messages one by one, each term's postings grown in turn; here each message's terms are
        counted once and the postings grouped in one pass (:meth:`restored`)."""
        numbers: dict[str, int] = {}
        counted = _counted(texts, 0, numbers)
        return cls.restored(LexicalState(max_share, list(numbers), *counted))

    def extend(self, texts: Iterable[str]) -> None:
        """Index ``texts`` as the messages at the next positions, all at once: what :meth:`add`
        of each in turn makes (the terms first met numbered in the order they appear), each
        term's postings grown once by all of its new ones.

        Why: a catch-up of tens of thousands of messages (an edit far back in a large channel)
        grew each term's postings a message at a time; here each message's terms are counted
        once and grouped by term, as :meth:`built` groups them."""
        start = self.size
        numbers: dict[str, int] = {}
        ids, positions, counts, lengths = _counted(texts, start, numbers)
        end = start + len(lengths)
        if end >= len(self._lengths):
            room = grown_length(end + 1, len(self._lengths))
            self._lengths = np.resize(self._lengths, room)
            self._cumulative = np.resize(self._cumulative, room + 1)
        self._lengths[start:end] = lengths
        # Summed from the total so far in the same order as one by one: the same bits.
        self._cumulative[start + 1 : end + 1] = np.cumsum(
            np.append(self._cumulative[start], lengths)
        )[1:]
        by_term = stable_order(ids)
        positions, counts = positions[by_term], counts[by_term]
        ends = np.cumsum(np.bincount(ids, minlength=len(numbers))).tolist()
        for term, first, last in zip(numbers, [0, *ends][:-1], ends, strict=True):
            # Under the lock, as _of makes a term's postings: a reading making them from the
            # restored arrays meanwhile would put back those without the new ones.
            with self._making:
                held = self._postings.get(term)
                if held is None:
                    made = _Postings(positions[first:last], counts[first:last], last - first)
                else:
                    known, known_counts, size = self._arrays(held)
                    made = _Postings(
                        np.concatenate([known[:size], positions[first:last]]),
                        np.concatenate([known_counts[:size], counts[first:last]]),
                        size + last - first,
                    )
                self._postings[term] = made
        self.size = end

    @classmethod
    def restored(cls, state: LexicalState) -> LexicalIndex:
        """The index of every message from position 0, from a state of them all; its postings may
        come in several runs of messages (a file's appends), each grouped by term. Each term's
        postings are a full view, so adding to one grows a copy, never the arrays given.

        A term's postings are made when it is first used: a channel of 100,000 real lines has
        28,000 terms, and making each one's postings at the start was a tenth of a second of
        every process that opens it (``awai read FILE``), where one reading looks up a few."""
        index = cls(state.max_share)
        by_term = stable_order(state.term_ids)
        bounds = np.zeros(len(state.terms) + 1, dtype=np.int64)
        np.cumsum(np.bincount(state.term_ids, minlength=len(state.terms)), out=bounds[1:])
        positions = state.positions[by_term]
        last = np.full(len(state.terms), -1, dtype=np.int64)
        held = bounds[1:] > bounds[:-1]
        last[held] = positions[bounds[1:][held] - 1]
        index._restored = _Restored(
            positions, state.counts[by_term], bounds, last, len(state.lengths)
        )
        index._postings = dict(zip(state.terms, range(len(state.terms)), strict=True))
        size = len(state.lengths)
        index._lengths = np.zeros(max(256, size + 1), dtype=np.float64)
        index._lengths[:size] = state.lengths
        index._cumulative = np.zeros(len(index._lengths) + 1, dtype=np.float64)
        index._cumulative[1 : size + 1] = np.cumsum(state.lengths)
        index.size = size
        return index

    def matches(self, query: str, end: int, limit: int) -> list[WordMatch]:
        """The ``limit`` messages before position ``end`` that BM25 ranks best for the words of
        ``query``, with the statistics of those messages only; best first (ties: the more recent
        first), each with a score > 0 and what it shares."""
        found = self.search(query, end, limit)
        return [
            self.explain(query, end, int(position), float(score))
            for position, score in zip(found.positions, found.scores, strict=True)
        ]

    def search(
        self, query: str, end: int, limit: int, leave_out: frozenset[str] = frozenset()
    ) -> WordSearch:
        """The ``limit`` best messages before ``end`` for ``query``, as arrays (see
        :meth:`matches`), with the query's mean and spread over the prefix; terms in
        ``leave_out`` are not searched for."""
        end = min(end, self.size)
        if end <= 0 or limit <= 0:
            return NO_MATCHES
        mean_length = max(self._cumulative[end] / end, 1e-9)
        chosen = self._query_terms(query, end, leave_out)
        if not chosen:
            return NO_MATCHES
        # Every term's postings as one array, scored in one pass (the sums run in the same
        # order as term by term, so the scores are the same to the last bit).
        found = np.concatenate(
            [postings.positions[:frequency] for *_, postings, frequency in chosen]
        )
        counts = np.concatenate(
            [postings.counts[:frequency] for *_, postings, frequency in chosen]
        ).astype(np.float64)
        idf = np.repeat([idf for _, idf, _, _ in chosen], [frequency for *_, frequency in chosen])
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * self._lengths[found] / mean_length)
        weights = idf * counts * (BM25_K1 + 1.0) / (counts + norm)
        if len(chosen) == 1:  # one term's postings: ascending and distinct already
            positions, scores = found, weights
        else:
            # Summed by position over the whole prefix rather than sorted first (np.unique):
            # thousands of postings sort slower than a pass over the prefix, and bincount adds
            # each position's terms in the same order, so the sums are the same.
            scores = np.bincount(found, weights=weights, minlength=end)
            held = np.zeros(end, dtype=bool)
            held[found] = True
            positions = np.flatnonzero(held)
            scores = scores[positions]
        mean = float(scores.sum()) / end
        spread = math.sqrt(max(float(scores @ scores) / end - mean * mean, 0.0))
        return WordSearch(*_best(positions, scores, limit), mean, spread)

    def explain(
        self,
        query: str,
        end: int,
        position: int,
        score: float,
        leave_out: frozenset[str] = frozenset(),
    ) -> WordMatch:
        """What the message at ``position`` (before ``end``) shares with ``query`` (its terms in
        ``leave_out`` aside): the share of the query's word weight it holds, and the shared
        terms, rarest first."""
        query_terms = self._query_terms(query, min(end, self.size), leave_out)
        total = sum(idf for _, idf, _, _ in query_terms)
        held = []
        for term, idf, postings, frequency in sorted(query_terms, key=lambda t: (-t[1], t[0])):
            at = int(postings.positions[:frequency].searchsorted(position))
            if at < frequency and postings.positions[at] == position:
                held.append((term, idf))
        return WordMatch(
            position=position,
            score=score,
            share=sum(idf for _, idf in held) / total if total else 0.0,
            terms=tuple(term for term, _ in held[:5]),
        )

    def _query_terms(
        self, query: str, end: int, leave_out: frozenset[str] = frozenset()
    ) -> list[tuple[str, float, _Postings, int]]:
        """The terms of ``query`` not in ``leave_out`` that some message before ``end`` holds
        and that are not too common there, with their IDF at ``end``, postings and document
        frequency, in a fixed order (the same sums in any process)."""
        last = self._last_query  # read once: another thread's reading may replace it
        if last is not None and last[:3] == (query, end, leave_out):
            return last[3]  # a reading asks again to explain the items it keeps
        chosen = []
        for term in sorted(set(terms(query)) - leave_out):
            postings = self._of(term)
            frequency = postings.before(end) if postings else 0
            if not frequency or frequency > max(ALWAYS_SCORED, self.max_share * end):
                continue  # no earlier message has it, or nearly all do
            assert postings is not None
            idf = math.log(1.0 + (end - frequency + 0.5) / (frequency + 0.5))
            chosen.append((term, idf, postings, frequency))
        self._last_query = (query, end, leave_out, chosen)
        return chosen


def _counted(
    texts: Iterable[str], first: int, numbers: dict[str, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The postings of ``texts`` as the messages at positions ``first``, ``first`` + 1, …: for
    each term of each message, the term's number in ``numbers`` (a term first met gets the next
    one, so they number in the order :meth:`LexicalIndex.add` meets them), the message's
    position and the term's count there, ordered by position; and each message's length in
    terms. Counted for all the messages at once, not term by term (tens of thousands of
    messages are counted so)."""
    found = list(map(terms, texts))
    ids = np.array(
        [numbers.setdefault(term, len(numbers)) for term in chain.from_iterable(found)],
        dtype=np.int64,
    )
    lengths = np.fromiter(map(len, found), dtype=np.int64, count=len(found))
    width = max(len(numbers), 1)
    held, counts = np.unique(
        np.repeat(np.arange(len(found), dtype=np.int64), lengths) * width + ids,
        return_counts=True,
    )
    return (
        (held % width).astype(np.int32),
        held // width + first,
        counts.astype(np.float32),
        lengths.astype(np.float64),
    )


def _best(positions: np.ndarray, scores: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``limit`` best (positions, scores), best score first; ties go to the more recent
    message, so the order is total. Only the scores at least the ``limit``-th best are sorted
    (a partition finds it): a query holds thousands of matches and keeps fifty."""
    if len(scores) > limit:
        kth = np.partition(scores, len(scores) - limit)[len(scores) - limit]
        top = np.flatnonzero(scores >= kth)
        positions, scores = positions[top], scores[top]
    best = np.lexsort((-positions, -scores))[:limit]
    return positions[best], scores[best]
