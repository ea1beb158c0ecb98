"""The ONNX file of a sentence-transformers model, exported once from its own weights.

Why: importing torch, transformers and sentence-transformers costs about ten seconds per process,
which every CLI call and bot restart paid. The exported graph runs in ONNX Runtime (installed
with chromadb) and makes the same vectors. The export itself needs torch, so it runs once, in a
child process (the process that asked stays free of torch), and its file is kept in the cache
folder under a key of the model's files; ``python -m awai_engine.embedding_backends.onnx_export``
builds it ahead of time (``make venv`` does).

The graph ends at the transformer's token states; the model's pooling and the unit-length
normalisation run in numpy (:mod:`awai_engine.embedding_backends.onnx_backend`), over each text's
own tokens. Why not in the graph: ONNX Runtime's ReduceSum splits its work by the batch's shape
(a batch of fewer rows than threads is summed in another order), so a text's vector changed in
its last bits with the batch it was encoded in.

The word-embedding table is cut out of the graph and written beside it
(:mod:`awai_engine.embedding_backends.word_table`): a session would hold all of it in memory, a
text needs a few rows.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from awai_engine.embedding_backends import EmbeddingModelError
from awai_engine.embedding_backends.sentence_model import SentenceModel, read_sentence_model
from awai_engine.embedding_backends.word_table import FILE_NAME as TABLE_FILE
from awai_engine.embedding_backends.word_table import WORDS_INPUT

if TYPE_CHECKING:
    import onnx

log = logging.getLogger(__name__)

# Bumped when the exported graph changes, so files of an older export are not reused (3: the
# word table cut out, cut_word_table).
EXPORT_FORMAT = 3
OPSET = 17
OUTPUT = "token_embeddings"
_KEYED_FILES = ("config.json", "tokenizer.json", "model.safetensors", "pytorch_model.bin")


def onnx_file(model: SentenceModel, cache_dir: Path) -> Path:
    """The cached ONNX file of ``model``, exported now (in a child process) if there is none;
    its word table, if the export cut it out, is :data:`~awai_engine.embedding_backends.
    word_table.FILE_NAME` beside it (written before it)."""
    target = _cache_path(model, cache_dir)
    if target.is_file():
        return target
    log.warning(
        "First use of %s with ONNX Runtime: exporting it once into %s (about a minute).",
        model.name,
        target.parent,
    )
    result = subprocess.run(
        [sys.executable, "-m", __name__, "--model", model.name, "--out", str(target)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0 or not target.is_file():
        detail = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise EmbeddingModelError(
            f"Could not export {model.name!r} to ONNX ({detail}). Export needs torch and onnx"
            " once (pip install torch==2.13.0 onnx); or set AWAI_EMBEDDING__RUNTIME=torch."
        )
    return target


def _cache_path(model: SentenceModel, cache_dir: Path) -> Path:
    """``cache_dir/onnx/<model>-<key>/model.onnx``; the key changes with any file of the model."""
    facts: list[object] = [EXPORT_FORMAT, OPSET, str(model.path.resolve())]
    for name in _KEYED_FILES:
        path = model.path / name
        if path.is_file():
            stat = path.stat()
            facts.append((name, stat.st_size, stat.st_mtime_ns))
    key = hashlib.sha256(json.dumps(facts).encode()).hexdigest()[:16]
    slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in Path(model.name).name)[:60]
    return cache_dir / "onnx" / f"{slug}-{key}" / "model.onnx"


def export(model: SentenceModel, target: Path) -> None:
    """Trace the transformer with torch, up to its token states; write ``target`` atomically,
    its word table cut out into a file beside it (:func:`cut_word_table`).

    Each file is written to a temporary file in the same folder and renamed, the table first, so
    a process that finds ``target`` finds both whole, and two processes exporting at once both
    end with whole files (the same bytes).
    """
    import inspect

    import onnx
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # a bar for loading 90 MB from disk
    transformer = AutoModel.from_pretrained(str(model.path)).eval()
    takes_types = "token_type_ids" in inspect.signature(transformer.forward).parameters
    inputs = ["input_ids", "attention_mask"] + (["token_type_ids"] if takes_types else [])

    class SentenceGraph(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
            named = dict(zip(inputs, tensors, strict=True))
            return self.transformer(**named).last_hidden_state

    # The example has padding, so a shortcut a library takes for batches without any is not
    # what gets traced.
    example = [torch.ones((2, 8), dtype=torch.long) for _ in inputs]
    example[1][1, 5:] = 0  # attention_mask
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".onnx.part")
    os.close(handle)
    try:
        with torch.no_grad(), _known_export_warnings():
            torch.onnx.export(
                SentenceGraph(),
                tuple(example),
                temporary,
                input_names=inputs,
                output_names=[OUTPUT],
                dynamic_axes={
                    **{name: {0: "batch", 1: "tokens"} for name in inputs},
                    OUTPUT: {0: "batch", 1: "tokens"},
                },
                opset_version=OPSET,
                dynamo=False,
            )
        graph = onnx.load(temporary)
        table = cut_word_table(graph)
        if table is not None:
            _save_whole(table, target.with_name(TABLE_FILE))
            onnx.save(graph, temporary)
        os.chmod(temporary, 0o644)  # a cache others on the machine may read, like pip's
        os.replace(temporary, target)
    finally:
        Path(temporary).unlink(missing_ok=True)


def _save_whole(table: np.ndarray, target: Path) -> None:
    """``table`` saved as ``.npy`` to a temporary file beside ``target``, then renamed to it."""
    handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".npy.part")
    try:
        with os.fdopen(handle, "wb") as file:
            np.save(file, table)
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    finally:
        Path(temporary).unlink(missing_ok=True)


def cut_word_table(model: onnx.ModelProto) -> np.ndarray | None:
    """Remove the lookup of ``input_ids`` in the word-embedding table from ``model`` and return
    the table; the graph takes the looked-up rows as :data:`WORDS_INPUT` instead. ``None``, and
    ``model`` unchanged, when the graph has no single lookup of the ids in a constant table (a
    model built otherwise keeps its table inside)."""
    from onnx import helper, numpy_helper

    graph = model.graph
    tables = {tensor.name: tensor for tensor in graph.initializer if len(tensor.dims) == 2}
    lookups = [
        node
        for node in graph.node
        if node.op_type == "Gather"
        and list(node.input[1:]) == ["input_ids"]
        and node.input[0] in tables
        and all(attribute.name != "axis" or attribute.i == 0 for attribute in node.attribute)
    ]
    if len(lookups) != 1:
        return None
    (lookup,) = lookups
    table_name, rows = lookup.input[0], lookup.output[0]
    if sum(table_name in node.input for node in graph.node) != 1:
        return None  # the table is used elsewhere too (tied weights): it stays
    table = numpy_helper.to_array(tables[table_name])
    graph.node.remove(lookup)
    graph.initializer.remove(tables[table_name])
    for node in graph.node:
        for position, name in enumerate(node.input):
            if name == rows:
                node.input[position] = WORDS_INPUT
    graph.input.append(
        helper.make_tensor_value_info(
            WORDS_INPUT,
            helper.np_dtype_to_tensor_dtype(table.dtype),
            ["batch", "tokens", table.shape[1]],
        )
    )
    return np.ascontiguousarray(table)


@contextmanager
def _known_export_warnings() -> Iterator[None]:
    """Silence the warnings torch prints on every export of this graph, and only those.

    Why: they ask nothing of whoever runs ``make`` (five multi-line warnings on a newcomer's first
    ``make demo``), and each is answered here; any other warning still shows.
    """
    import torch

    with warnings.catch_warnings():
        # The TorchScript exporter is chosen on purpose (dynamo=False): the new one needs
        # onnxscript, which is not installed.
        warnings.filterwarnings(
            "ignore",
            message="You are using the legacy TorchScript-based ONNX export",
            category=DeprecationWarning,
        )
        # Tracing fixes the Python branches transformers takes on tensor shapes; the graph is
        # checked against torch's own vectors, with and without padding and past the model's
        # length (tests/test_embedding_onnx.py).
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        # The indices are transformers' batch and token positions (its padding mask), never the
        # negative ones the warning is about.
        warnings.filterwarnings(
            "ignore",
            message="Exporting aten::index operator",
            category=UserWarning,
            module=r"torch\.onnx\.",
        )
        yield


def main(argv: list[str] | None = None) -> None:
    """Export a model ahead of time (default: the configured one into the configured cache)."""
    from awai_engine.settings import load_settings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", help="A sentence-transformers model folder or the packaged name."
    )
    parser.add_argument("--out", type=Path, help="Where to write the file (default: the cache).")
    args = parser.parse_args(argv)
    settings = load_settings().embedding
    model = read_sentence_model(args.model or settings.model)
    target = args.out or _cache_path(model, settings.resolved_cache_dir())
    if args.out is None and target.is_file():
        print(f"{target} (already exported)")
        return
    export(model, target)
    print(target)


if __name__ == "__main__":
    main()
