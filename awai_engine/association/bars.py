"""The similarity bars a recalled thought must clear: θ(d), and the near bar of a message.

Why two: θ(d) says how close in meaning a line must be at its distance (further back, closer);
the near bar says how far above what the message shares with the lines just before it, since
how alike two unrelated lines look depends on the message. Each stage clears both, and some a
stricter one built the same way (:mod:`awai_engine.association.meaning`).
"""

from __future__ import annotations

import numpy as np

from awai_engine.association.settings import AssociationSettings
from awai_engine.timeline import Timeline


def threshold(distance: np.ndarray | float, settings: AssociationSettings) -> np.ndarray:
    """θ(d) = min(θ_max, θ_0 + λ·ln(1 + d/d_0)): the further back, the closer in meaning."""
    rise = settings.theta_0 + settings.slope * np.log1p(
        np.asarray(distance, dtype=np.float64) / settings.d_0
    )
    return np.minimum(settings.theta_max, rise)


def near_bar(
    timeline: Timeline,
    rows: np.ndarray,
    similarity: np.ndarray,
    end_row: int,
    z: float | None,
) -> np.ndarray:
    """The similarity each cue thought needs near, besides θ(d): μ + z·σ of its similarities to
    the ``recent_rows`` thoughts just before the message (``-inf`` with ``z`` unset).

    Why: in a busy room most nearby lines belong to other conversations, and how alike two
    unrelated lines look depends on the message (a short "thanks" resembles many lines). A
    thought well above what the message shares with everything said just before is on topic.

    With fewer than z² + 2 recent thoughts there is no bar (``-inf``): one line among n can
    stand at most √(n − 1) deviations above them all (numpy's std), so a bar of z would shut out even the
    line the message repeats word for word in a young channel.
    """
    if z is None or not len(rows):
        return np.full(similarity.shape[1], -np.inf)
    recent = similarity[rows >= end_row - timeline.index.rules.recent_rows]
    if z > 0 and len(recent) < z * z + 2:
        return np.full(similarity.shape[1], -np.inf)
    return recent.mean(axis=0) + z * recent.std(axis=0)
