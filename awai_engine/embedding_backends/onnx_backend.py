"""A sentence-transformers model in ONNX Runtime, tokenised by its own ``tokenizer.json``.

Same vectors as sentence-transformers (cosine ≥ 0.999 to the torch vectors on real chat lines,
measured by ``bench/embedding_runtimes.py`` and tested on the shipped samples), so a channel
records the same model name whichever runtime embedded it. What it does as sentence-transformers
does: strips each text, truncates to the model's ``max_seq_length``, pads each batch to its
longest text, and batches texts sorted by length so short chat lines are not padded to a long
one. Start-up is the import of onnxruntime and tokenizers plus one session (under a second),
against about ten seconds for torch.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from awai_engine.embedding_backends import EmbeddingModelError
from awai_engine.embedding_backends.onnx_export import OUTPUT, onnx_file
from awai_engine.embedding_backends.sentence_model import read_sentence_model


class OnnxSentenceEncoder:
    def __init__(self, model: str, cache_dir: Path, threads: int = 0) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        config = read_sentence_model(model)
        self.model_name = model
        self.dimension = config.dimension
        options = onnxruntime.SessionOptions()
        # By default the machine's cores, at most 4, and no spinning: a busy-waiting thread pool
        # takes cores from the other work of a small shared server (measured: slower there).
        options.intra_op_num_threads = threads or min(4, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        path = onnx_file(config, cache_dir)
        try:
            self._session = onnxruntime.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as error:  # a damaged cache file: say where it is
            raise EmbeddingModelError(
                f"Could not load the ONNX file {path}: {error}. Delete it to export it again."
            ) from error
        self._inputs = [item.name for item in self._session.get_inputs()]
        self._tokenizer = Tokenizer.from_file(str(config.tokenizer_file))
        self._tokenizer.enable_truncation(config.max_seq_length)
        pad = self._tokenizer.padding or {}
        self._tokenizer.enable_padding(
            pad_id=pad.get("pad_id", 0), pad_token=pad.get("pad_token", "[PAD]")
        )

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        stripped = [text.strip() for text in texts]
        order = np.argsort([-len(text) for text in stripped], kind="stable")
        out = np.empty((len(stripped), self.dimension), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            out[rows] = self._encode_batch([stripped[row] for row in rows])
        return out

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        (vectors,) = self._session.run([OUTPUT], {name: feeds[name] for name in self._inputs})
        return vectors
