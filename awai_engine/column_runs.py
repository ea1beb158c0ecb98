"""One column of a timeline's messages held as consecutive runs of other columns, read as one.

Why: a timeline extended by many messages at once (:meth:`awai_engine.timeline.Timeline.extend`)
holds them as columns after those it already held, and those may be a file's packed texts,
decoded per item (:class:`storage.read_model_files.Packed`). Copying them into one list would
decode every text of the channel, the cost packing them avoids; a run per part reads each item
where it is, and a run of items (or a gather of some) from each part it spans at once.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Protocol, TypeVar, overload, runtime_checkable

import numpy as np

T = TypeVar("T")


@runtime_checkable
class Gathers(Protocol[T]):
    """A column that reads the items at some indexes in one call (faster than one by one)."""

    def gather(self, indexes: np.ndarray) -> list[T]: ...


def gathered(column: Sequence[T], indexes: np.ndarray) -> list[T]:
    """The items of ``column`` at ``indexes`` (in range), in that order: in one call when the
    column can (:class:`Gathers`), else item by item."""
    if isinstance(column, Gathers):
        found: list[T] = column.gather(indexes)
        return found
    return [column[index] for index in indexes.tolist()]


class Runs(Sequence[T]):
    """``parts`` end to end, as one column (a part that is itself runs lends its parts, so a
    column extended again and again stays one level deep)."""

    def __init__(self, parts: Sequence[Sequence[T]]) -> None:
        self._parts: list[Sequence[T]] = []
        for part in parts:
            if isinstance(part, Runs):
                self._parts.extend(part._parts)
            elif len(part):
                self._parts.append(part)
        self._starts: list[int] = [0]
        for part in self._parts:
            self._starts.append(self._starts[-1] + len(part))

    def __len__(self) -> int:
        return self._starts[-1]

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return [self[i] for i in range(start, stop, step)]
            found: list[T] = []
            number = self._part_of(start) if start < stop else len(self._parts)
            while number < len(self._parts) and self._starts[number] < stop:
                first = self._starts[number]
                found += self._parts[number][max(start - first, 0) : stop - first]
                number += 1
            return found
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):  # a Sequence's contract: iteration and ``in`` rely on it
            raise IndexError("Runs index out of range")
        number = self._part_of(index)
        return self._parts[number][index - self._starts[number]]

    def gather(self, indexes: np.ndarray) -> list[T]:
        """The items at ``indexes`` (in range), in that order: each part's in one call."""
        parts = np.searchsorted(self._starts, indexes, side="right") - 1
        found: list[T | None] = [None] * len(indexes)
        for number in np.unique(parts).tolist():
            slots = np.flatnonzero(parts == number)
            items = gathered(self._parts[number], indexes[slots] - self._starts[number])
            for slot, item in zip(slots.tolist(), items, strict=True):
                found[slot] = item
        return found  # type: ignore[return-value]  # every slot filled above

    def _part_of(self, index: int) -> int:
        return bisect.bisect_right(self._starts, index) - 1
