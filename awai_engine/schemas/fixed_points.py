"""The counts of a speaker's thoughts their schemas are clustered at: the fixed points.

A reading of message ``i`` of speaker ``s`` uses the clustering of ``s``'s first ``F(n)``
thoughts, ``n`` being how many thoughts ``s`` said before ``i``. ``F`` is a pure function of
``n``, so the clustering in force for a reading is fixed by the messages alone: it is the same
whenever the scheduler ran, whether it stored that clustering yet or not, and in a channel
imported afresh. (The cell tree of association is frozen at fixed sizes of the channel for the
same reason.)

``F(n)`` keeps the ``bits`` leading binary digits of ``n`` and clears the rest, so the fixed
points are every count up to ``2**bits``, then ``2**(bits - 1)`` evenly spaced counts in each
doubling: with the default 3 bits, 1–8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, … A small
speaker's schemas therefore follow every thought or two, while the lag of a long speaker's is
under ``2**(1 - bits)`` of what they said (a quarter at 3 bits), and a speaker with ``N``
thoughts has about ``2**(bits - 1) · log2(N)`` points (48 at 10,000 with 3 bits), each
clustered once.
"""

from __future__ import annotations


def fixed_point(count: int, bits: int) -> int:
    """The largest fixed point at or below ``count`` (0 for 0)."""
    if count <= 0:
        return 0
    cleared = max(0, count.bit_length() - bits)
    return (count >> cleared) << cleared


def points_up_to(count: int, bits: int, start: int = 1) -> list[int]:
    """The fixed points from ``start`` to ``count``, ascending."""
    points = []
    point = fixed_point(count, bits)
    while point >= max(start, 1):
        points.append(point)
        point = fixed_point(point - 1, bits)
    return points[::-1]


def is_fixed_point(count: int, bits: int) -> bool:
    return count > 0 and fixed_point(count, bits) == count
