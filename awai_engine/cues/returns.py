"""Whether a message says it goes back to something raised earlier.

Why apart from the stances: a return reaches past the line just before to a topic left long
ago ("Coming back to the refund question", 「話を戻すと」), so the headline looks for its target
far back, where a stance answers what was just said.
"""

from __future__ import annotations

import re

from awai_engine.cues.words import LEAD_IN, NOT_AFTER_A_LETTER, phrases, strip_address

# Words that say the message goes back to something raised before. Not a bare "again" ("the beach
# again!") or また ("また明日"): said of anything, they return to nothing in particular.
_RETURNS = (
    "coming back to",
    "come back to",
    "going back to",
    "go back to",
    "is back",
    "are back",
    "came back",
    "as i said",
    "as i mentioned",
    "like i said",
    "once more",
    "revisit",
    "circling back",
    "circle back",
    "keep coming back",
    "once again",
    "happened again",
    "happening again",
    "happens again",
    "failing again",
    "failed again",
    "broke again",
    "broken again",
    "crashed again",
    "crashing again",
    "down again",
    "back again",
    "re-raise",
    # asking how something raised earlier turned out
    "any update on",
    "any updates on",
    "any news on",
    "what happened with",
    "whatever happened to",
    "following up on",
    "follow up on",
    "どうなりました",
    "どうなった",
    "再び",
    "改めて",
    "再発",
    "話を戻",
    "に戻ります",
    "蒸し返",
)

# Words that go back to a topic only where a message opens with them (after "so", "anyway" or
# "ok"): "Back to the replica disk — …" returns, "I'm back to square one" does not.
_RETURNS_OPENING = (
    "back to",
    "getting back to",
    "to get back to",
    "going back to",
    "coming back to",
    "circling back to",
    "returning to",
    "return to",
    "話を戻",
    "さっきの件",
    "先ほどの件",
    "元の話",
)
# What "back to" / "returning to" goes back to when it is a place, a routine or a state rather
# than a topic of the talk: "Back to square one", "returning to the office", "back to normal".
_NOT_A_TOPIC = (
    "square one",
    "normal",
    "work",
    "school",
    "home",
    "bed",
    "sleep",
    "the office",
    "office",
    "the drawing board",
    "basics",
    "the basics",
    "reality",
    "life",
    "the grind",
    "my desk",
    "the desk",
    "town",
    "the city",
    "the team",
)
# A time after the words makes them a trip or a plan ("Returning to Berlin tomorrow").
_WHEN = re.compile(
    r"\b(?:tomorrow|today|tonight|next (?:week|month|year)|on (?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|this (?:week|weekend|evening|afternoon)|soon|later)\b"
)


def says_returns(text: str) -> bool:
    """The message says it goes back to something ("again", "is back", "coming back to"; "back
    to …" where it opens), or asks how something raised earlier turned out ("any update on",
    "どうなりましたか")."""
    lowered = text.lower()
    for said in phrases(_RETURNS, NOT_AFTER_A_LETTER).finditer(lowered):
        if not said.group(0).endswith(" to") or _names_a_topic(lowered[said.end() :]):
            return True  # "going back to work tomorrow" goes back to no topic
    return opens_returning(text)


def opens_returning(text: str) -> bool:
    """The message opens by going back to a topic ("Back to the replica disk — …", "So, going
    back to refunds", 「ところで、話を戻すと」), after any address: it names a topic left
    earlier, not something that happened again. Going back to a place, a routine or a state
    ("Back to square one, sadly", "Returning to the office tomorrow") returns to no topic."""
    opening = strip_address(text).lower()
    lead_in = LEAD_IN.match(opening)  # matches the empty string at least
    start = lead_in.end() if lead_in else 0
    words = phrases(_RETURNS_OPENING).match(opening, start)
    return words is not None and _names_a_topic(opening[words.end() :])


def _names_a_topic(rest: str) -> bool:
    """Whether what follows "back to" / "returning to" (lowered) is a topic of the talk rather
    than a place, a routine or a state, or a trip with its time ("the office tomorrow")."""
    rest = rest.lstrip()
    if phrases(_NOT_A_TOPIC).match(rest):
        return False
    clause = re.split(r"[.!?;—–]|\s-\s", rest, maxsplit=1)[0]
    return _WHEN.search(clause) is None
