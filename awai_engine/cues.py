"""Words that say what a message does to an earlier one, for the offline reading.

Without a language model AWAI still says, in one line, what a message does: answers a question,
agrees (perhaps on a condition), grants a point, disagrees, revises an earlier claim, or returns
to something said long before. These are surface cues — deterministic, English and Japanese,
and marked as cues wherever they are shown — not an understanding of the message. Why keep
them this plain: a reader can check every one of them against the words, and the same message
always gets the same line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

CueRelation = Literal["agrees", "concedes", "disagrees", "revises"]

_QUESTION_END = re.compile(r"[?？]\s*[)）」』\"'”]*\s*$")
_JAPANESE_QUESTION_END = re.compile(
    r"(?:(?:ます|ました|です|でした|でしょう|ません|ませんでした|ない|のです|んです)か"
    r"|かな|かね|のか)[。\s]*$"
)
_SPANISH_QUESTION = re.compile(r"^\s*¿")


def is_question(text: str) -> bool:
    """A sentence that asks: it ends in a question mark (any script), or in Japanese か."""
    stripped = text.strip()
    return bool(
        _QUESTION_END.search(stripped)
        or _JAPANESE_QUESTION_END.search(stripped)
        or _SPANISH_QUESTION.search(stripped)
    )


def _alternation(phrases: tuple[str, ...]) -> str:
    return "|".join(re.escape(phrase) for phrase in sorted(phrases, key=len, reverse=True))


# Opening words of a message that take back or correct what its speaker said earlier.
_REVISES = (
    "i was wrong",
    "i stand corrected",
    "scratch that",
    "on second thought",
    "on second thoughts",
    "correction",
    "i take that back",
    "i take it back",
    "i misspoke",
    "i meant",
    "let me correct",
    "my mistake",
    "my bad",
    "i was mistaken",
    "訂正",
    "間違えました",
    "間違っていました",
    "撤回",
    "前言撤回",
    "さっきのは間違い",
)
# Opening words that disagree with what was just said.
_DISAGREES = (
    "no",
    "nope",
    "i disagree",
    "disagree",
    "i don't think so",
    "i don't think",
    "i do not think",
    "not really",
    "not sure",
    "i'm not sure",
    "that's not",
    "that is not",
    "actually",
    "but",
    "i'd rather not",
    "i would rather not",
    "いや",
    "いいえ",
    "でも",
    "反対",
    "違う",
    "違います",
    "そうではなく",
    "それは違",
)
# Opening words that agree with what was just said.
_AGREES = (
    "agree",
    "agreed",
    "i agree",
    "works for me",
    "fine by me",
    "fine with me",
    "fair",
    "fair enough",
    "fair point",
    "sounds good",
    "sounds right",
    "makes sense",
    "good idea",
    "good point",
    "+1",
    "yes",
    "yep",
    "yeah",
    "sure",
    "ok",
    "okay",
    "lgtm",
    "exactly",
    "right",
    "true",
    "same here",
    "👍",
    "賛成",
    "同意",
    "了解",
    "いいね",
    "いいですね",
    "いいと思います",
    "そうですね",
    "承知",
    "わかりました",
    "分かりました",
    "確かに",
    "lgtm👍",
)
# Japanese says where it stands at the end of the sentence ("…なので賛成です").
_AGREES_AT_END = (
    "賛成です",
    "賛成します",
    "賛成",
    "同意します",
    "同意です",
    "いいと思います",
    "良いと思います",
    "いいですね",
    "了解です",
    "了解しました",
    "それでいきましょう",
    "それで行きましょう",
)
_DISAGREES_AT_END = (
    "反対です",
    "反対します",
    "賛成できません",
    "同意できません",
    "違うと思います",
    "そうは思いません",
    "どうかと思います",
)
_SENTENCE_END = re.compile(r"[。！？!?\n]")

# Words that turn an agreement into a concession ("fair, but …").
_BUT = ("but", "though", "however", "although", "yet", "still,", "でも", "ただ", "しかし", "けど")
# Words that put a condition on an agreement ("works for me as long as …").
_CONDITION = (
    "as long as",
    "only if",
    "provided that",
    "provided",
    "assuming",
    "on condition that",
    "if",
    "unless",
    "なら",
    "であれば",
    "ならば",
    "限り",
    "場合は",
)
# Words that say the message goes back to something raised before.
_RETURNS = (
    "again",
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
    "その後",
    "また",
    "再び",
    "改めて",
    "再発",
    "話を戻",
    "に戻ります",
    "蒸し返",
    "やはり",
    "やっぱり",
)

_OPENING = re.compile(r"^[\s\W_]*", re.UNICODE)
_WORD_END = r"(?![a-z0-9'])"


def _opens_with(text: str, phrases: tuple[str, ...]) -> re.Match[str] | None:
    """The phrase ``text`` opens with, as a whole word (Latin) or a prefix (Japanese)."""
    lowered = _strip_address(text).lower()
    return re.match(rf"(?:{_alternation(phrases)}){_WORD_END}", lowered)


_ADDRESS = re.compile(r"^\s*(?:@\S+|[\w.'-]{1,24}(?: [\w.'-]{1,24})?:)\s+")
"""``@name`` or ``Name:`` / ``First Last:`` opening a message (as the adapters mark addressing)."""


def _strip_address(text: str) -> str:
    """The message without a leading ``@name`` or ``Name:`` and its opening punctuation."""
    return _OPENING.sub("", _ADDRESS.sub("", text, count=1))


@dataclass(frozen=True)
class Stance:
    """What the opening of a message does to the message before it, from its words."""

    relation: CueRelation
    condition: str | None = None


def opening_stance(text: str) -> Stance | None:
    """Agrees, concedes, disagrees or revises, from the message's opening words; else None.

    Revision is checked first, anywhere in the first sentence ("actually, scratch that"
    revises), then agreement (with its
    condition or concession), then disagreement, so "ok but …" concedes rather than disagrees.
    """
    first = _SENTENCE_END.split(_strip_address(text).strip(), maxsplit=1)[0].rstrip(" 、")
    if re.search(rf"(?<![a-z])(?:{_alternation(_REVISES)}){_WORD_END}", first.lower()):
        return Stance("revises")
    agreement = _opens_with(text, _AGREES)
    if agreement:
        rest = _strip_address(text).lower()[agreement.end() :]
        condition = re.search(rf"(?<![a-z])(?:{_alternation(_CONDITION)}){_WORD_END}", rest)
        if condition:
            clause = _strip_address(text)[agreement.end() + condition.start() :]
            return Stance("agrees", condition=_first_clause(clause))
        if re.match(rf"[\s\W]*(?:{_alternation(_BUT)}){_WORD_END}", rest):
            return Stance("concedes")
        return Stance("agrees")
    if _opens_with(text, _DISAGREES):
        return Stance("disagrees")
    if first.endswith(_DISAGREES_AT_END):
        return Stance("disagrees")
    if first.endswith(_AGREES_AT_END):
        return Stance("agrees")
    return None


def _first_clause(text: str) -> str:
    clause = re.split(r"(?<=[.!?。！？])\s", text.strip(), maxsplit=1)[0]
    return clause.rstrip(".。 ")


def says_returns(text: str) -> bool:
    """The message says it goes back to something ("again", "is back", "coming back to"), or
    asks how something raised earlier turned out ("any update on", "どうなりましたか")."""
    lowered = text.lower()
    return any(
        re.search(rf"(?<![a-z]){re.escape(phrase)}{_WORD_END}", lowered) for phrase in _RETURNS
    )
