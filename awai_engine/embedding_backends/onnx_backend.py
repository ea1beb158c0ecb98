"""A sentence-transformers model in ONNX Runtime, tokenised by its own ``tokenizer.json``.

Same vectors as sentence-transformers (cosine ≥ 0.999 to the torch vectors on real chat lines,
measured by ``bench/embedding_runtimes.py`` and tested on the shipped samples), so a channel
records the same model name whichever runtime embedded it. What it does as sentence-transformers
does: strips each text, truncates to the model's ``max_seq_length`` and pads each batch to its
longest text, then pools each text's tokens (mean, CLS or max, as the model says) and makes the
vector unit length. Start-up is the import of onnxruntime and tokenizers plus one session (under a
second), against about ten seconds for torch.

A text's vector is a function of the text alone, bit for bit, whatever it was batched with: the
invariant (a message's context depends only on the messages before it) compares vectors of one
text embedded in different calls, and a last-bit difference can move a rounded similarity or
break a tie. The transformer's token states are (measured: for every real chat line tried, its
own tokens' states are the same alone, beside others and padded), but ONNX Runtime's ReduceSum
is not: it splits a sum by the batch's shape, so pooling in the graph gave a text in a batch of
fewer rows than threads other last bits (every line of 6 tokens or more). So the graph stops at
the token states and each text is pooled here, over its own tokens, always in the same order.

Memory stays bounded whatever is embedded: texts are batched by their length in tokens (a 5-word
line is never padded to a 256-token one), a batch of long texts holds fewer rows (at most
``batch_size × TOKENS_PER_ROW`` tokens), and the session runs without ONNX Runtime's CPU memory
arena, which grows to the largest batch ever run and keeps it for the life of the process (924 MiB
after one batch of 32 texts of 256 tokens, most of ``awai ingest``'s peak). Nor does the session
hold the word-embedding table, half of the model's weights: each batch reads its tokens' rows
from the table's file (:mod:`awai_engine.embedding_backends.word_table`). Vectors come back in
the order of the texts given.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from awai_engine.embedding_backends import EmbeddingModelError
from awai_engine.embedding_backends.onnx_export import OUTPUT, onnx_file
from awai_engine.embedding_backends.sentence_model import read_sentence_model
from awai_engine.embedding_backends.word_table import FILE_NAME as TABLE_FILE
from awai_engine.embedding_backends.word_table import WORDS_INPUT, WordTable


class OnnxSentenceEncoder:
    same_bits_in_any_batch = True  # tests/test_embedding_onnx.py

    def __init__(self, model: str, cache_dir: Path, threads: int = 0) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        config = read_sentence_model(model)
        self.model_name = model
        self.dimension = config.dimension
        self._pooling = config.pooling
        options = onnxruntime.SessionOptions()
        # By default the machine's cores, at most 4, and no spinning: a busy-waiting thread pool
        # takes cores from the other work of a small shared server (measured: slower there).
        options.intra_op_num_threads = threads or min(4, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.enable_cpu_mem_arena = False  # each run's buffers go back when it ends
        path = onnx_file(config, cache_dir)
        try:
            self._session = onnxruntime.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
            self._inputs = [item.name for item in self._session.get_inputs()]
            # The export cut the word table out of the graph (a model whose lookup it could not
            # cut keeps it inside): its rows are read for each batch.
            self._words = (
                WordTable(path.with_name(TABLE_FILE)) if WORDS_INPUT in self._inputs else None
            )
        except Exception as error:  # a damaged or missing cache file: say where it is
            raise EmbeddingModelError(
                f"Could not load the ONNX file {path}: {error}. Delete it to export it again."
            ) from error
        self._tokenizer = Tokenizer.from_file(str(config.tokenizer_file))
        self._tokenizer.enable_truncation(config.max_seq_length)
        self._pad_id = int((self._tokenizer.padding or {}).get("pad_id", 0))
        self._tokenizer.no_padding()  # each batch is padded to its own longest below

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        tokens = self._tokens([text.strip() for text in texts])
        lengths = np.array([len(ids) for ids, _ in tokens], dtype=np.int64)
        out = np.empty((len(tokens), self.dimension), dtype=np.float32)
        for rows in length_batches(lengths, batch_size):
            states = self._token_states([tokens[row] for row in rows], int(lengths[rows[0]]))
            for row, text_states in zip(rows, states, strict=True):
                out[row] = self._pooled(text_states[: lengths[row]])
        return out

    def _tokens(self, texts: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Token ids and type ids of each text, tokenised a slice at a time: the tokenizer's
        encodings (offsets, token strings) cost far more memory than the ids kept here."""
        tokens = []
        for start in range(0, len(texts), TOKENIZE_SLICE):
            for encoding in self._tokenizer.encode_batch(texts[start : start + TOKENIZE_SLICE]):
                ids = np.asarray(encoding.ids, dtype=np.int64)
                tokens.append((ids, np.asarray(encoding.type_ids, dtype=np.int64)))
        return tokens

    def _token_states(self, tokens: list[tuple[np.ndarray, np.ndarray]], width: int) -> np.ndarray:
        """The last hidden state of each token, ``(texts, width, dimension)``; padding masked."""
        shape = (len(tokens), width)
        feeds = {
            "input_ids": np.full(shape, self._pad_id, dtype=np.int64),
            "attention_mask": np.zeros(shape, dtype=np.int64),
            "token_type_ids": np.zeros(shape, dtype=np.int64),
        }
        for row, (ids, type_ids) in enumerate(tokens):
            feeds["input_ids"][row, : len(ids)] = ids
            feeds["attention_mask"][row, : len(ids)] = 1
            feeds["token_type_ids"][row, : len(ids)] = type_ids
        if self._words is not None:
            feeds[WORDS_INPUT] = self._words.rows(feeds["input_ids"])
        (states,) = self._session.run([OUTPUT], {name: feeds[name] for name in self._inputs})
        return states

    def _pooled(self, states: np.ndarray) -> np.ndarray:
        """One text's unit vector from its own tokens' states, as sentence-transformers pools
        (mean, CLS or max) and normalises; numpy sums the tokens in order, one at a time."""
        if self._pooling == "cls":
            pooled = states[0]
        elif self._pooling == "max":
            pooled = states.max(axis=0)
        else:
            pooled = states.sum(axis=0) / np.float32(len(states))
        return pooled / max(float(np.linalg.norm(pooled)), 1e-12)


TOKENIZE_SLICE = 1024
# Tokens a batch may hold per row of ``batch_size`` (512 at the default 32). What one run holds
# grows with its tokens (measured: a batch of 256-token texts peaked 120 MiB over the loaded
# model at 16, 350 MiB at 64, 1.2 GiB at 256), while chat lines encode as fast at 16 as at 128
# (bench/ingest_throughput.py; rows of many short lines still fill a batch).
TOKENS_PER_ROW = 16


def length_batches(lengths: np.ndarray, batch_size: int) -> Iterator[np.ndarray]:
    """Row indices of each batch: rows sorted longest first (ties in given order), each batch at
    most ``batch_size`` rows and ``batch_size × TOKENS_PER_ROW`` tokens once padded to its first
    (longest) row, and at least one row."""
    order = np.argsort(-lengths, kind="stable")
    budget = batch_size * TOKENS_PER_ROW
    start = 0
    while start < len(order):
        rows = max(1, min(batch_size, budget // max(1, int(lengths[order[start]]))))
        yield order[start : start + rows]
        start += rows
