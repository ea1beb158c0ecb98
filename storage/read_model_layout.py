"""The parts of a channel's read-model file, and how each grows with the channel.

One list for the two that lay them out: the writer (:mod:`storage.read_model_files`), which
appends the messages a file lacks to every part, and the cut (:mod:`storage.read_model_cut`),
which keeps a file's first messages. Every part only grows at its end as the channel does:
arrays by row (a row is one thought's vector) or by message, a cell level's cell of each row,
the word index's postings of each run of messages appended, and columns of JSON values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import orjson

FORMAT = 7  # 2: Snowball stems; 3: counts thoughts; 4: names its source; 5: grown by appending;
# 6: a message's thought indexes are its rows' (row_thought), not a column of their own;
# 7: each message's SQL row id and edit time, so that a change cuts the file where it starts
VECTORS = "vectors"
# Arrays by row or by message, appended to; each file is the array's raw bytes.
ARRAYS = {
    "vectors": np.float32,
    "row_positions": np.int64,
    "row_thought": np.int64,
    "ts": np.float64,
    "first_rows": np.int64,
    "fallbacks": np.bool_,
    "lexicon_lengths": np.float64,
    "term_ids": np.int32,
    "term_positions": np.int64,
    "term_counts": np.float32,
    "row_ids": np.int64,
    "edited_at": np.float64,  # NaN: never edited
}
BY_ROW = ("vectors", "row_positions", "row_thought")
BY_MESSAGE = ("ts", "first_rows", "fallbacks", "lexicon_lengths", "row_ids", "edited_at")
# The word index's postings: each run of messages appended, grouped by term.
POSTINGS = ("term_ids", "term_positions", "term_counts")
# Decoded whole at load: JSON values, each followed by a comma.
LIST_COLUMNS = (
    "message_ids",
    "speaker_ids",
    "speaker_names",
    "thread_roots",
    "scopes",
)
# Of those, the columns of a few distinct strings, repeated (see read_model_files._shared).
REPEATED_COLUMNS = frozenset({"speaker_ids", "speaker_names", "thread_roots", "scopes"})
# Needed only when a message is built: packed, each message's value decoded on first use; each
# with ``<name>_ends``, the end of each message's value in ``<name>.bin``.
PACKED_COLUMNS = ("texts", "summaries", "addressees", "thought_texts")

Chunk = bytes | memoryview  # what is appended to one file


def raw(array: np.ndarray, dtype: type) -> Chunk:
    """The array's bytes, as a view when it is already contiguous of that type."""
    contiguous: np.ndarray = np.ascontiguousarray(array, dtype=dtype)
    # a buffer; numpy types it so for 3.12+ only
    return memoryview(contiguous).cast("B") if contiguous.size else b""  # type: ignore[arg-type]


def values(items: Sequence[Any]) -> bytes:
    """JSON values, each followed by a comma: appended chunks read back as one list."""
    return orjson.dumps(list(items))[1:-1] + b"," if len(items) else b""


def decoded(chunk: bytes) -> list[Any]:
    """The JSON values :func:`values` wrote, one chunk or several end to end, as one list."""
    return orjson.loads(b"[" + chunk[:-1] + b"]") if chunk else []
