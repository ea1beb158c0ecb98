"""A message's values of a column kept by row: what a restored channel reads its thought
indexes from, instead of a list per message."""

from __future__ import annotations

import numpy as np
import pytest

from awai_engine.timeline import RowSlices


def test_each_message_gets_its_own_rows_values_and_a_message_without_rows_none() -> None:
    # messages of 2, 0, 1 and 3 rows
    slices = RowSlices(np.array([0, 1, 0, 0, 1, 2]), np.array([0, 2, 2, 3]))
    assert len(slices) == 4
    assert list(slices) == [[0, 1], [], [0], [0, 1, 2]]
    assert slices[-1] == [0, 1, 2] and slices[1:3] == [[], [0]]
    assert all(isinstance(value, int) for value in slices[3])  # plain ints, as JSON gave them
    with pytest.raises(IndexError):
        slices[4]


def test_a_channel_of_no_messages_has_no_slices() -> None:
    assert list(RowSlices(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))) == []
