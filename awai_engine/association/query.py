"""What every recall stage reads about one message, as two named values.

Why values: the stages used to pass ten or eleven positional arguments to each other (the
timeline, the position, the search's rows and similarities, the bars, the exchange, the
conversation, two flags…), so a call could swap two of them without a type error. A stage now
takes the :class:`Query` (what was searched) and the :class:`Situation` (what the message's
room says about it), plus what it alone needs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from awai_engine.association.settings import AssociationSettings
from awai_engine.exchange import Exchange
from awai_engine.timeline import Timeline


@dataclass(frozen=True)
class Query:
    """One message and what the search found before it.

    ``rows`` and ``similarity`` are what :meth:`Timeline.search` found for the message's thoughts
    (``cues``, one row each) among the rows before it; ``relative`` is the near bar of each cue
    thought (:func:`awai_engine.association.meaning.near_bar` with ``rules.near_z``).
    """

    timeline: Timeline
    position: int
    cues: np.ndarray
    rows: np.ndarray
    similarity: np.ndarray
    relative: np.ndarray
    settings: AssociationSettings

    @property
    def end_row(self) -> int:
        """The message's first row: every row before it is the prefix searched."""
        return self.timeline.messages[self.position].first_row


@dataclass(frozen=True)
class Situation:
    """Who the message is said to and whether it reaches for the past, read once for all stages.

    ``exchange``: the speaker's exchange (None with ``rules.exchange_window`` 0);
    ``conversation``: the message's inferred conversation (None with ``rules.conversation_window``
    0); ``edge_named``: names written as its first or last words, which address those people too;
    ``names_absent``: it names someone it does not address; ``asks_past``: it reaches for the past
    (names the absent, or asks the room from no exchange: :mod:`awai_engine.association.reaching`).
    """

    exchange: Exchange | None
    conversation: frozenset[int] | None
    edge_named: frozenset[str]
    names_absent: bool
    asks_past: bool

    @property
    def alone(self) -> bool:
        """The speaker is in no exchange (or none is known)."""
        return self.exchange is None or self.exchange.alone
