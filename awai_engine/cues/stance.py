"""What the opening of a message does to the message it responds to: agrees (perhaps on a
condition), concedes, disagrees or revises.

Why from the opening: people say where they stand first ("Works for me as long as…", "No, …",
"Scratch that"), and a word said later in passing ("…but that's fine") takes no side. Japanese
says it at the end of the sentence instead (「…なので賛成です」), so the first sentence's end is
read too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from awai_engine.cues.questions import has_question, is_question
from awai_engine.cues.sentences import first_sentence, sentences, stop_pieces
from awai_engine.cues.words import NOT_AFTER_A_LETTER, YES_OR_NO, opens_with, phrases, strip_address

CueRelation = Literal["agrees", "concedes", "disagrees", "revises"]

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
# Opening words that agree with what was just said, whatever follows them.
_AGREES = (
    "agree",
    "agreed",
    "i agree",
    "works for me",
    "that works",
    "that works for me",
    "that would work",
    "i think that works",
    "i think that would work",
    "i think that's fine",
    "i think that's right",
    "fine by me",
    "fine with me",
    "i'm fine with that",
    "i am fine with that",
    "fine with that",
    "i'm ok with that",
    "i'm okay with that",
    "ok with me",
    "okay with me",
    "i can live with that",
    "fair",
    "fair enough",
    "fair point",
    "sounds good",
    "sounds good to me",
    "sounds great",
    "sounds right",
    "sgtm",
    "makes sense",
    "good idea",
    "good point",
    "good call",
    "+1",
    "lgtm",
    "deal",
    "let's do it",
    "let's do that",
    "go for it",
    "same here",
    "👍",
    "賛成",
    "同意",
    "了解",
    "いいね",
    "いいですね",
    "いいですよ",
    "いいと思います",
    "それでいい",
    "それで大丈夫",
    "大丈夫です",
    "問題ない",
    "問題ありません",
    "異論なし",
    "異議なし",
    "そうですね",
    "承知",
    "わかりました",
    "分かりました",
    "確かに",
    "lgtm👍",
)
# Short words that agree only when they stand alone or are set off by punctuation ("ok.", "yes,
# that's it"): "ok, so where are we" moves on, "right?" asks, "fine-tuning" is no verdict. To a
# question they are an answer rather than a stance (``Stance.plain``).
_PLAIN_AGREES = (
    "yes",
    "yep",
    "yeah",
    "yup",
    "sure",
    "ok",
    "okay",
    "right",
    "true",
    "exactly",
    "fine",
)
_PLAIN_DISAGREES = ("no",)
# Agreements that only take note ("了解です" is "noted", like "ok"): followed by a question, they
# agree with nothing (「了解です。最初に確認させてください。…いつやりましたか？」 asks).
_ACKNOWLEDGES = ("了解", "承知", "わかりました", "分かりました")
# What follows a set-off short word when it only moves the talk on ("ok, so…", "right, now…").
_MOVING_ON = (
    "so",
    "now",
    "then",
    "what",
    "where",
    "how",
    "who",
    "why",
    "when",
    "which",
    "let me",
    "lets",
    "let's",
    "anyway",
    "next",
    "back to",
    "thanks",
    "thank you",
)
_SET_OFF = re.compile(
    r"\s*(?:[,.!;:…—–]+|\s*$|\s+-|\s+(?:[\U0001F300-\U0001FAFF]|:\)|:d))", re.IGNORECASE
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


@dataclass(frozen=True)
class Stance:
    """What the opening of a message does to the message it responds to, from its words.

    ``plain``: decided by a short word ("yes", "no", "ok") that, said to a question, answers it
    rather than takes a side.
    """

    relation: CueRelation
    condition: str | None = None
    plain: bool = False


def opening_stance(text: str) -> Stance | None:
    """Agrees, concedes, disagrees or revises, from the message's opening words; else None.

    Revision is checked first, anywhere in the first sentence ("actually, scratch that"
    revises), then agreement (with its condition or concession), then disagreement, so "ok but
    …" concedes rather than disagrees. A short word ("ok", "no") counts only set off by itself
    and not moving the talk on ("ok, so where are we" is no agreement, "No sound" no
    disagreement), and a message that opens by asking, or whose short word only takes note
    before asking ("Ok. Rollback or hotfix?"), takes no stance.
    """
    body = strip_address(text)
    first = first_sentence(body).rstrip(" 、")
    if phrases(_REVISES, NOT_AFTER_A_LETTER).search(first.lower()):
        return Stance("revises")
    pieces = stop_pieces(body)
    if pieces and is_question(pieces[0]):
        return None  # it opens by asking: "ok?", "sounds good? I can take it"
    lowered = body.lower()
    agreement = opens_with(text, _AGREES)
    plain = agreement is None and (agreement := _set_off_word(lowered, _PLAIN_AGREES)) is not None
    if agreement:
        rest = lowered[agreement.end() :]
        if (plain or agreement.group(0) in _ACKNOWLEDGES) and has_question(body[agreement.end() :]):
            return None  # "Ok. Rollback or hotfix?": takes note, then asks; sides with nothing
        condition = phrases(_CONDITION, NOT_AFTER_A_LETTER).search(rest)
        if condition:
            clause = body[agreement.end() + condition.start() :]
            return Stance("agrees", condition=_first_clause(clause), plain=plain)
        if phrases(_BUT, r"[\s\W]*").match(rest):
            return Stance("concedes", plain=plain)
        return Stance("agrees", plain=plain)
    disagreement = opens_with(text, _DISAGREES)
    if disagreement:  # 「いいえ、まだです」 to a question answers it, like a plain "no"
        return Stance("disagrees", plain=disagreement.group(0) in YES_OR_NO)
    plain_no = _set_off_word(lowered, _PLAIN_DISAGREES)
    if plain_no and not has_question(body[plain_no.end() :]):
        return Stance("disagrees", plain=True)
    if first.endswith(_DISAGREES_AT_END):
        return Stance("disagrees")
    if first.endswith(_AGREES_AT_END):
        return Stance("agrees")
    return None


def _set_off_word(lowered: str, words: tuple[str, ...]) -> re.Match[str] | None:
    """One of the short ``words`` opening ``lowered`` (the address stripped), set off by
    punctuation or standing alone, and not followed by words that move the talk on."""
    found = phrases(words).match(lowered)
    if found is None:
        return None
    after = _SET_OFF.match(lowered, found.end())
    if after is None:
        return None
    rest = lowered[after.end() :].lstrip()
    if phrases(_MOVING_ON).match(rest):
        return None
    return found


# Where a condition's clause ends within its sentence: a reason or a consequence added to it
# (", since it becomes the main way to sync"), a dash or a semicolon.
_CLAUSE_END = re.compile(
    r"(?:,\s*(?:since|because|as|so|which|but|though|although)\b|\s[—–-]\s|;|、(?:なので|だから))",
    re.IGNORECASE,
)


def _first_clause(text: str) -> str:
    """The condition itself: its sentence up to a reason or consequence added to it, so a
    headline quoting it does not repeat the rest of the message."""
    sentence = sentences(text.strip())[0]
    clause = _CLAUSE_END.split(sentence, maxsplit=1)[0]
    return clause.rstrip(".。, ")
