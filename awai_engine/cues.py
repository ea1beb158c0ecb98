"""Words that say what a message does to an earlier one, for the offline reading.

Without a language model AWAI still says, in one line, what a message does: answers a question,
agrees (perhaps on a condition), grants a point, disagrees, revises an earlier claim, or returns
to something said long before. These are surface cues — deterministic, English and Japanese,
and marked as cues wherever they are shown — not an understanding of the message. Why keep
them this plain: a reader can check every one of them against the words, and the same message
always gets the same line.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

from awai_engine.text import has_japanese

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


@functools.cache
def _phrases(phrases: tuple[str, ...], before: str = "") -> re.Pattern[str]:
    """Any of ``phrases`` as a whole word (longest first), after ``before``: compiled once per
    list, as every reading asks these of several messages."""
    alternation = "|".join(re.escape(phrase) for phrase in sorted(phrases, key=len, reverse=True))
    return re.compile(rf"{before}(?:{alternation}){_WORD_END}")


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
# Words a message may open with before what it does ("so", "anyway", "ok", ところで, さて…).
_LEAD_WORDS = (
    r"(?:so|and|but|ok|okay|also|then|hey|btw|oh|well|um|hm+|anyway|anyways|right|now)\b"
    r"|ところで|さて|それで|じゃあ|では|で(?=[、,])"
)
_LEAD_IN = re.compile(rf"(?:(?:{_LEAD_WORDS})[\s,.!—–、-]*)*")
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

_OPENING = re.compile(r"^(?:(?!\+1|👍)[\s\W_])*", re.UNICODE)  # "+1" and 👍 are words here
_WORD_END = r"(?![a-z0-9'])"
_NOT_AFTER_A_LETTER = r"(?<![a-z])"


def _opens_with(text: str, phrases: tuple[str, ...]) -> re.Match[str] | None:
    """The phrase ``text`` opens with, as a whole word (Latin) or a prefix (Japanese)."""
    lowered = _strip_address(text).lower()
    return _phrases(phrases).match(lowered)


_ADDRESS = re.compile(r"^\s*(?:@\S+|[\w.'-]{1,24}(?: [\w.'-]{1,24})?:)\s+")
"""``@name`` or ``Name:`` / ``First Last:`` opening a message (as the adapters mark addressing)."""


def _strip_address(text: str) -> str:
    """The message without a leading ``@name`` or ``Name:`` and its opening punctuation."""
    return _OPENING.sub("", _ADDRESS.sub("", text, count=1))


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
    body = _strip_address(text)
    first = _SENTENCE_END.split(body.strip(), maxsplit=1)[0].rstrip(" 、")
    if _phrases(_REVISES, _NOT_AFTER_A_LETTER).search(first.lower()):
        return Stance("revises")
    opening = _SENTENCES.search(body)
    if opening and is_question(opening.group(0)):
        return None  # it opens by asking: "ok?", "sounds good? I can take it"
    lowered = body.lower()
    agreement = _opens_with(text, _AGREES)
    plain = agreement is None and (agreement := _set_off_word(lowered, _PLAIN_AGREES)) is not None
    if agreement:
        rest = lowered[agreement.end() :]
        if (plain or agreement.group(0) in _ACKNOWLEDGES) and _asks_after(body, agreement.end()):
            return None  # "Ok. Rollback or hotfix?": takes note, then asks; sides with nothing
        condition = _phrases(_CONDITION, _NOT_AFTER_A_LETTER).search(rest)
        if condition:
            clause = body[agreement.end() + condition.start() :]
            return Stance("agrees", condition=_first_clause(clause), plain=plain)
        if _phrases(_BUT, r"[\s\W]*").match(rest):
            return Stance("concedes", plain=plain)
        return Stance("agrees", plain=plain)
    disagreement = _opens_with(text, _DISAGREES)
    if disagreement:  # 「いいえ、まだです」 to a question answers it, like a plain "no"
        return Stance("disagrees", plain=disagreement.group(0) in _YES_OR_NO)
    plain_no = _set_off_word(lowered, _PLAIN_DISAGREES)
    if plain_no and not _asks_after(body, plain_no.end()):
        return Stance("disagrees", plain=True)
    if first.endswith(_DISAGREES_AT_END):
        return Stance("disagrees")
    if first.endswith(_AGREES_AT_END):
        return Stance("agrees")
    return None


def _asks_after(body: str, end: int) -> bool:
    """Whether what follows the opening word ending at ``end`` of ``body`` (the message, its
    address stripped) asks: one of its sentences is a question."""
    rest = body[end:]
    return any(is_question(sentence) for sentence in _SENTENCES.findall(rest))


_SENTENCES = re.compile(r"[^。！？!?.\n]+[。！？!?.]*")
"""A message's sentences, each with its closing marks (enough to see which of them ask)."""


# The words that answer a yes/no question by themselves.
_YES_OR_NO = (
    "yes",
    "yeah",
    "yep",
    "yup",
    "yea",
    "no",
    "nope",
    "nah",
    "はい",
    "いいえ",
    "いや",
    "うん",
    "ううん",
    "ええ",
)
# What sets a yes or a no off from the statement after it (besides the message's end): a mark,
# or a space after a word that begins nothing else ("yes it does", but "no one knows").
_YES_OR_NO_SET_OFF = re.compile(r"[\s]*(?:[,.!;:…—–、。，！]|$)")
_SPACE_SETS_OFF = frozenset(("yes", "yeah", "yep", "yup", "nope", "nah"))


def opens_with_yes_or_no(text: str) -> bool:
    """Whether the message opens with a yes or a no set off by itself and goes on with a
    statement: "Yes, twice. It still fails.", 「いいえ、まだ途中です。」, after any address. Why:
    said after a yes/no question, such a message answers it, whoever spoke in between; "No
    sound, cannot find card!" and 「はいります」 open with no such word, "Yes, but which branch?"
    asks back, and a bare "yeah" may as well agree with the line just before."""
    body = _strip_address(text)
    lowered = body.lower()
    word = _phrases(_YES_OR_NO).match(lowered)
    if word is None:
        return False
    end = word.end()
    set_off = _YES_OR_NO_SET_OFF.match(lowered, end)
    if set_off is None and not (
        word.group(0) in _SPACE_SETS_OFF and lowered[end : end + 1].isspace()
    ):
        return False
    rest = body[end:]
    return any(c.isalnum() for c in rest) and not _asks_after(body, end)


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
    rf"(?:[\w.'-]{{1,24}},\s+)?{_LEAD_IN.pattern}"
    r"(?:(?:is|are|was|were|am|do|does|did|can|could|will|would|should|shall|may|might|must"
    r"|have|has|had)(?:n't|nt)?|anyone|anybody|someone|somebody|everyone|you|u|it|that|this"
    r"|there)(?![a-z'])"
)
_TAG = re.compile(r"(?:\bright|\bok|\bokay|\bno|n't it|nt it)\s*[?？]+\W*$")
_SENTENCE_BREAK = re.compile(r"(?<=[。！？!?])|(?<=\.)(?=\s)|\n")
"""Where a sentence ends: after a question or exclamation mark or 。, or a full stop before a
space (so "ubuntu 8.10?" stays one sentence)."""


def asks_yes_or_no(text: str) -> bool:
    """Whether the message asks a question one answers with a yes or a no: its last question
    names no "what", "which", "when", "how" (何, いつ, どう…) and offers no choice ("rollback or
    hotfix?"; "or not" is still a yes or a no); in English it also opens as such a question
    does ("Can we…", "Anyone tried…", "You need…") or ends in a tag ("…, right?"), so
    "hosting?" or "licensing and sale of?", which ask what was meant, do not. "Can we release
    on Friday?" and 「デプロイは終わりましたか？」 do; "How many users?" does not."""
    sentences = _SENTENCE_BREAK.split(_strip_address(text))
    asked = [sentence for sentence in sentences if is_question(sentence)]
    if not asked:
        return False
    question = _OPENING.sub("", asked[-1]).lower()
    if _ASKS_WHICH.search(question):
        return False
    return bool(
        has_japanese(question) or _YES_OR_NO_OPENING.match(question) or _TAG.search(question)
    )


# Openings that answer a question rather than go on with one's own line: a yes or no, one of
# the options asked about ("Both", "Neither"), or not knowing ("Not that I know of").
_ANSWER_OPENINGS = (
    *_YES_OR_NO,
    "both",
    "neither",
    "either",
    "not that i know",
    "not that i'm aware",
    "not yet",
    "not really",
    "not sure",
    "not exactly",
    "i think so",
    "i guess so",
    "i believe so",
    "i don't think so",
    "i dont think so",
    "no idea",
    "probably",
    "maybe",
    "sure",
    "of course",
    "correct",
    "exactly",
    "両方",
    "まだ",
    "たぶん",
    "多分",
    "そうです",
    "違います",
    "ちがいます",
)


def opens_as_answer(text: str) -> bool:
    """Whether ``text`` opens the way an answer to a question does ("Both, honestly.", "Not
    that I know of.", 「はい、…」), after any ``@name`` or ``Name:`` it is addressed with."""
    return _opens_with(text, _ANSWER_OPENINGS) is not None


def _set_off_word(lowered: str, words: tuple[str, ...]) -> re.Match[str] | None:
    """One of the short ``words`` opening ``lowered`` (the address stripped), set off by
    punctuation or standing alone, and not followed by words that move the talk on."""
    found = _phrases(words).match(lowered)
    if found is None:
        return None
    after = _SET_OFF.match(lowered, found.end())
    if after is None:
        return None
    rest = lowered[after.end() :].lstrip()
    if _phrases(_MOVING_ON).match(rest):
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
    sentence = re.split(r"(?<=[.!?。！？])\s", text.strip(), maxsplit=1)[0]
    clause = _CLAUSE_END.split(sentence, maxsplit=1)[0]
    return clause.rstrip(".。, ")


def says_returns(text: str) -> bool:
    """The message says it goes back to something ("again", "is back", "coming back to"; "back
    to …" where it opens), or asks how something raised earlier turned out ("any update on",
    "どうなりましたか")."""
    lowered = text.lower()
    for said in _phrases(_RETURNS, _NOT_AFTER_A_LETTER).finditer(lowered):
        if not said.group(0).endswith(" to") or _names_a_topic(lowered[said.end() :]):
            return True  # "going back to work tomorrow" goes back to no topic
    return opens_returning(text)


def opens_returning(text: str) -> bool:
    """The message opens by going back to a topic ("Back to the replica disk — …", "So, going
    back to refunds", 「ところで、話を戻すと」), after any address: it names a topic left
    earlier, not something that happened again. Going back to a place, a routine or a state
    ("Back to square one, sadly", "Returning to the office tomorrow") returns to no topic."""
    opening = _strip_address(text).lower()
    lead_in = _LEAD_IN.match(opening)  # matches the empty string at least
    start = lead_in.end() if lead_in else 0
    words = _phrases(_RETURNS_OPENING).match(opening, start)
    return words is not None and _names_a_topic(opening[words.end() :])


def _names_a_topic(rest: str) -> bool:
    """Whether what follows "back to" / "returning to" (lowered) is a topic of the talk rather
    than a place, a routine or a state, or a trip with its time ("the office tomorrow")."""
    rest = rest.lstrip()
    if _phrases(_NOT_A_TOPIC).match(rest):
        return False
    clause = re.split(r"[.!?;—–]|\s-\s", rest, maxsplit=1)[0]
    return _WHEN.search(clause) is None
