"""A model's word-embedding table kept out of its ONNX graph, and read a row at a time.

Why: the table is half of MiniLM's weights (30,522 tokens × 384 floats, 45 MiB of 86), and an
ONNX Runtime session holds every initializer of its graph in the process's own memory, whole,
for as long as the session lives. A text needs the rows of its own tokens only. So the export
cuts the table's lookup (one ``Gather`` of the token ids) out of the graph and writes the table
beside it (:func:`~awai_engine.embedding_backends.onnx_export.cut_word_table`); each batch's
rows are read from that file with ``pread`` (:class:`WordTable`) and fed to the graph where the
lookup's output went (:data:`WORDS_INPUT`).

Measured on this machine: the encoder alone (its imports, session and tokenizer, after 2,200 chat
lines and a heap trim) 115 → 71 MiB RSS; a bot's process after a reading and its first live
message (``bench.kept_channel.edited``, two runs each in turns) 457 → 413 MiB at 100,000
messages, 271 → 226 at 1,000. Why ``pread`` and not a memory map: the kernel maps in the pages
around each one touched (and reads ahead), so with the weights in a file ONNX Runtime maps, 35
MiB of the table were resident after 10 texts and all of it after 100.

The vectors are the same bits: the rest of the graph is untouched and is given the very floats
the lookup gave (``tests/test_word_table.py`` joins the table back into the graph and compares).
What reading costs: one ``pread`` per distinct token of a batch (about 190 for a batch of chat
lines), 0.04 s for 2,000 lines whose encode takes 4.6 s (processor time of ten such encodes in
turns with the whole graph: per-round ratio 0.92–1.08, median 1.0).
"""

from __future__ import annotations

import os
import weakref
from pathlib import Path

import numpy as np

FILE_NAME = "word_table.npy"
"""The table's file, beside the graph's (``model.onnx``)."""
WORDS_INPUT = "inputs_embeds"
"""The graph input that takes the rows of a batch's tokens (the name transformers gives it)."""


class WordTable:
    """The table file written at export: each batch's rows are read from it, never held."""

    def __init__(self, path: Path) -> None:
        with path.open("rb") as handle:
            version = np.lib.format.read_magic(handle)
            if version != (1, 0):
                raise ValueError(f"{path} is not a table this export writes (.npy {version})")
            shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(handle)
            self._offset = handle.tell()
        if len(shape) != 2 or fortran_order:
            raise ValueError(f"{path} holds no table of rows ({shape})")
        self.rows_count, self.width = int(shape[0]), int(shape[1])
        self.dtype = np.dtype(dtype)
        self._row_bytes = self.width * self.dtype.itemsize
        expected = self._offset + self.rows_count * self._row_bytes
        if path.stat().st_size != expected:
            raise ValueError(f"{path} is {path.stat().st_size} bytes, not {expected}")
        self._file = os.open(path, os.O_RDONLY)
        weakref.finalize(self, os.close, self._file)  # the encoder's, for the process's life

    def rows(self, ids: np.ndarray) -> np.ndarray:
        """The table's row of each id in ``ids`` (any shape): ``ids.shape + (width,)``. Each
        distinct id is read once; the file's offset is not used, so threads may share a table."""
        distinct, where = np.unique(ids, return_inverse=True)
        found = np.empty((len(distinct), self.width), dtype=self.dtype)
        for row, token in zip(found, distinct.tolist(), strict=True):
            read = os.pread(self._file, self._row_bytes, self._offset + token * self._row_bytes)
            if len(read) != self._row_bytes:
                raise IndexError(f"token id {token} is outside the table of {self.rows_count}")
            row[:] = np.frombuffer(read, dtype=self.dtype)
        return found[where.reshape(ids.shape)]
