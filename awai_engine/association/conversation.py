"""Which conversation a line belongs to, inferred from who answers whom just before a message.

Why it exists: in a busy room several conversations run side by side, and the lines a reading
recalls are worth showing only when they belong to the message's own. Who a line is said to is
the strongest sign people leave of that: ``nick: …`` answers the addressee's latest line, and a
line addressed to no one continues its speaker's previous line or answers whoever last
addressed them. Chaining those inferred replies gives the message's *conversation*: the lines
linked to it, directly or through others, within a window before it. On the IRC dev links
(docs/evaluation.md, "Precision: the inferred conversation") an addressing cue inside it is on
topic far more often than one outside it, and the far past outside it rarely is.

Every inferred reply points from a line to earlier lines, and only lines of the window before
the message are looked at, so the conversation is a function of the prefix.
"""

from __future__ import annotations

from awai_engine.timeline import Timeline

_NO_ONE: frozenset[str] = frozenset()


def conversation_of(
    timeline: Timeline,
    position: int,
    window: int,
    pairs: bool = True,
    addresses: frozenset[str] = frozenset(),
) -> frozenset[int]:
    """Positions of the lines within ``window`` before ``position`` that the inferred replies
    connect to the message at ``position`` (the message itself included).

    Inferred replies, read in channel order: a line that addresses people replies to each one's
    latest line; a line that addresses no one replies to its speaker's previous line and to the
    latest line that addressed its speaker. With ``pairs``, a line that addresses someone also
    replies to that person's latest line addressed to its speaker and to its speaker's own
    latest line addressed to that person: "bob: thanks" answers what bob last said *to me*, even
    when bob has since answered others, and continues what I last said to bob. ``addresses``
    are names the message at ``position`` addresses besides its parsed addressees (names written
    as its first or last words: :func:`awai_engine.association.reaching.named_at_the_edge`). Connected lines
    are one conversation (union-find).
    """
    start = max(position - window, 0)
    parent = list(range(position - start + 1))

    def root(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    def join(a: int, b: int) -> None:
        parent[root(a - start)] = root(b - start)

    latest: dict[str, int] = {}  # speaker → their latest line
    addressed_last: dict[str, int] = {}  # speaker → the latest line addressed to them
    said_to: dict[tuple[str, str], int] = {}  # (speaker, addressee) → the speaker's latest to them
    names = timeline.speaker_names  # columns: no line's message is built
    folded = timeline.addressed_between(start, position + 1)  # case-folded, once per line
    for at in range(start, position + 1):
        speaker = names[at].casefold()
        addressees = folded[at - start]
        if at == position and addresses:
            addressees = addressees | {name.casefold() for name in addresses}
        to = addressees - {speaker} if addressees else _NO_ONE
        if to:
            for name in to:
                answered = [latest.get(name)]
                if pairs:  # what they last said to me, and what I last said to them
                    answered += [said_to.get((name, speaker)), said_to.get((speaker, name))]
                for earlier in answered:
                    if earlier is not None:
                        join(at, earlier)
        else:
            for earlier in (latest.get(speaker), addressed_last.get(speaker)):
                if earlier is not None:
                    join(at, earlier)
        latest[speaker] = at
        for name in to:
            addressed_last[name] = at
            said_to[speaker, name] = at
    own = root(position - start)
    return frozenset(start + k for k in range(len(parent)) if root(k) == own)


def addressed_share(timeline: Timeline, position: int, window: int) -> float:
    """The share of the ``window`` lines before ``position`` that address someone.

    Why: an inferred conversation says which thread a line belongs to only where people address
    each other (IRC, a busy Discord room). Where almost no one does (a small team's Slack
    channel), every line addressing no one continues its speaker's own, and "outside the
    conversation" would only mean "said by someone else".
    """
    start = max(position - window, 0)
    if start == position:
        return 0.0
    return sum(bool(timeline.messages[at].addressees) for at in range(start, position)) / (
        position - start
    )
