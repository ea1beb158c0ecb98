"""Who has been talking with whom just before a message: the speaker's exchange.

Why it exists: in a busy room several conversations run at once, and two lines that look alike
in meaning often belong to different ones. Who a line was said by, and to, is the stronger sign:
on held-out IRC reply links, an earlier line that clears θ(d) by meaning is in the message's own
conversation 78% of the time when its speaker is in the speaker's exchange, 29% when not
(docs/evaluation.md, "Precision: the speaker's exchange"). The exchange is read from the
messages just before the message only, so it is a function of the prefix.
"""

from __future__ import annotations

from dataclasses import dataclass

from awai_engine.timeline import Timeline


@dataclass(frozen=True)
class Exchange:
    """The speaker of a message, the people it names or addresses, and the people the speaker
    and they addressed, or were addressed by, within the window (names, case-folded).

    ``alone``: neither the message nor the window has the speaker addressing anyone or being
    addressed (a newcomer's first question, someone asking the channel's past, someone
    answering without naming anyone); naming someone in passing does not count.
    """

    speaker: str
    addressed: frozenset[str]
    partners: frozenset[str]
    alone: bool

    def includes(self, timeline: Timeline, source: int) -> bool:
        """Is the earlier message at ``source`` part of this exchange: said by the speaker or a
        partner, or said to the speaker or to someone the message addresses?"""
        said_by = timeline.speaker_names[source].casefold()  # a column: no message built
        if said_by == self.speaker or said_by in self.partners:
            return True
        return bool(timeline.addressed_by(source) & (self.addressed | {self.speaker}))


def exchange_of(timeline: Timeline, position: int, window: int) -> Exchange:
    """The exchange of the message at ``position``, from the ``window`` messages before it."""
    message = timeline.messages[position]
    speaker = message.ref.speaker_name.casefold()
    named = {timeline.speaker_name(s).casefold() for s in timeline.named_speakers(position)}
    addressees = timeline.addressed_by(position) - {speaker}
    addressed = addressees | (named - {speaker})
    partners = set(addressed)
    talked = bool(addressees)
    first = max(position - window, 0)
    addressed_before = timeline.addressed_between(first, position)
    for earlier_position in range(position - 1, first - 1, -1):
        said_to = addressed_before[earlier_position - first]
        if not said_to:
            continue  # addressing no one: no one to add
        said_by = timeline.speaker_names[earlier_position].casefold()
        to = said_to - {said_by}
        if said_by == speaker and to:
            partners |= to
            talked = True
        elif speaker in to:
            partners.add(said_by)
            talked = True
    return Exchange(speaker, frozenset(addressed), frozenset(partners - {speaker}), not talked)
