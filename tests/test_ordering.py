"""The stable order of codes: the same as numpy's stable argsort, small codes or large."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from awai_engine.ordering import stable_order


@given(
    codes=st.lists(st.integers(0, 40), max_size=200),
    large=st.sampled_from([0, 1 << 16, 1 << 40]),
    dtype=st.sampled_from([np.int32, np.int64]),
)
def test_the_stable_order_of_codes_is_numpys_stable_argsort_whatever_their_size(
    codes: list[int], large: int, dtype: type
) -> None:
    """Codes that fit 16 bits are sorted as such; one that does not keeps them as they are.
    Either way ties keep their order (rows of one cell stay in the order they were filed)."""
    values = np.array(codes + ([large] if large else []), dtype=np.int64)
    if large >= 1 << 31:
        dtype = np.int64
    values = values.astype(dtype)
    assert stable_order(values).tolist() == np.argsort(values, kind="stable").tolist()
