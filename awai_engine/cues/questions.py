"""What a message asks: whether it asks at all, and whether one answers it with a yes or a no.

Why apart from the stances: a question is what an answer points back to, so the reply-target
features, the far recall and the headline all ask it of earlier messages, while a stance is read
from the opening of the message itself.
"""

from __future__ import annotations

import re

from awai_engine.cues.sentences import sentences, stop_pieces
from awai_engine.cues.words import LEAD_IN, OPENING, strip_address
from awai_engine.text import has_japanese

# A face a question may end with: "help me?:)", "codecs ?:S", "really?:D".
_FACE = r"[:;=]-?[()\[\]DPpSsOo/\\|]|\^_?\^"
# The question mark a sentence ends in, with what may trail it: more marks ("??", "?!", "?..."),
# a face and closing brackets or quotes. The "?" of the face ":?" (or ":-?") is a puzzled look,
# not a question mark: "my wireless network is not displayed :?" asks nothing by it.
_QUESTION_END = re.compile(rf"(?<![:;])(?<![:;]-)[?？][\s!?！？.…]*(?:{_FACE})?[\s)）」』\"'”]*$")
_TAIL = 256
"""How much of a sentence's end :data:`_QUESTION_END` reads: a search from each mark of a long
run of them to the end cost the square of the run; what closes a question is a few characters."""
_JAPANESE_QUESTION_END = re.compile(
    r"(?:(?:ます|ました|です|でした|でしょう|ません|ませんでした|ない|のです|んです)か"
    r"|かな|かね|のか)[。\s]*$"
)
_SPANISH_QUESTION = re.compile(r"^\s*¿")


def is_question(text: str) -> bool:
    """A sentence that asks: it ends in a question mark (any script; more marks, a face or a
    closing bracket may follow it), or in Japanese か."""
    stripped = text.strip()
    return bool(
        _QUESTION_END.search(stripped[-_TAIL:])
        or _JAPANESE_QUESTION_END.search(stripped)
        or _SPANISH_QUESTION.search(stripped)
    )


def has_question(text: str) -> bool:
    """Whether one of the sentences of ``text`` asks (what follows an opening word, say)."""
    return any(is_question(sentence) for sentence in stop_pieces(text))


# Words that ask for something other than a yes or a no: which one, who, when, how. A Japanese
# question word with か or も after it names no one in particular (誰か "someone", 何か
# "something", いつも "always", どれか "any"), so 「誰か知っていますか？」 still asks a yes or a
# no, unless the か ends the sentence (「誰かな？」 wonders who).
_ASKS_WHICH = re.compile(
    r"(?<![a-z])(?:what|which|who|whom|whose|when|where|why|how)(?![a-z])|\bor\b(?!\s+not\b)"
    r"|(?:何|なに|いつ|どこ|どちら|どっち|どれ|どう|誰|だれ|いくつ)(?![かも](?![なね]?[?？。\s]|$))"
    r"|なん[でのだ]|どの|どんな|なぜ|いくら|それとも"
)
# How an English yes/no question opens (after a "Name," and "so", "and", "ok"…): with a verb that asks ("Can
# we…", "Did you…", "Isn't it…") or with whom it asks about ("Anyone tried…", "You need…?").
_YES_OR_NO_OPENING = re.compile(
    rf"(?:[\w.'-]{{1,24}},\s+)?{LEAD_IN.pattern}"
    r"(?:(?:is|are|was|were|am|do|does|did|can|could|will|would|should|shall|may|might|must"
    r"|have|has|had)(?:n't|nt)?|anyone|anybody|someone|somebody|everyone|you|u|it|that|this"
    r"|there)(?![a-z'])"
)
_TAG = re.compile(r"(?:\bright|\bok|\bokay|\bno|n't it|nt it)\s*[?？]+\W*$")


def asks_yes_or_no(text: str) -> bool:
    """Whether the message asks a question one answers with a yes or a no: its last question
    names no "what", "which", "when", "how" (何, いつ, どう…) and offers no choice ("rollback or
    hotfix?"; "or not" is still a yes or a no); in English it also opens as such a question
    does ("Can we…", "Anyone tried…", "You need…") or ends in a tag ("…, right?"), so
    "hosting?" or "licensing and sale of?", which ask what was meant, do not. "Can we release
    on Friday?" and 「デプロイは終わりましたか？」 do; "How many users?" does not. A sentence of
    marks alone ("can u help me ? ?") is no question of its own: the one before it is asked."""
    asked = [
        sentence
        for sentence in sentences(strip_address(text))
        if is_question(sentence) and any(char.isalnum() for char in sentence)
    ]
    if not asked:
        return False
    question = OPENING.sub("", asked[-1]).lower()
    if _ASKS_WHICH.search(question):
        return False
    return bool(
        has_japanese(question) or _YES_OR_NO_OPENING.match(question) or _TAG.search(question)
    )
