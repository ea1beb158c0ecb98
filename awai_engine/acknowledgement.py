"""Whether a line is wholly an acknowledgement, thanks, greeting or bare assent, and so says
nothing a reader needs on its own: "On it.", "thanks Maya! 👍", "Sounds good to me", 了解です！

Such a line is listed among a reading's connections only when it is what the message answers or
replies to, and a digest quotes it only when nothing else of a preconception can be quoted. The
test is strict the other way: a line is an acknowledgement only when *every* word of it belongs to
one of the closed phrases below, to the words around them ("so much", "everyone", です, ね) or to
a name it addresses. Any other word (a claim, a request, an answer: "Not that I know of. Can you
file it?"), a question mark, a number, a link or code makes it a line that says something. A
closed list, as stop lists are: what it misses is shown, never hidden.
"""

from __future__ import annotations

import re

from awai_engine.schemas.substance import addressed_names
from awai_engine.text_caches import text_cache

# Whole phrases of acknowledgement, thanks, greeting, praise and assent, longest first within an
# alternation so "thank you" is taken before "thank". Matched as whole words, case-insensitive.
_ENGLISH = (
    "thank you",
    "thank u",
    "thanks",
    "thx",
    "tysm",
    "ty",
    "cheers",
    "much appreciated",
    "appreciate it",
    "appreciated",
    "for the help",
    "for your help",
    "for the heads up",
    "for the heads-up",
    "for the update",
    "for the info",
    "for the review",
    "for that",
    "for this",
    "you're welcome",
    "you’re welcome",
    "youre welcome",
    "welcome",
    "no problem",
    "no prob",
    "no worries",
    "np",
    "anytime",
    "my pleasure",
    "sorry",
    "ok",
    "okay",
    "okey",
    "kk",
    "k",
    "alright",
    "all right",
    "all good",
    "sure thing",
    "sure",
    "yes",
    "yeah",
    "yep",
    "yup",
    "ya",
    "got it",
    "gotcha",
    "on it",
    "will do",
    "can do",
    "noted",
    "ack",
    "roger that",
    "roger",
    "understood",
    "makes sense",
    "i see",
    "fair enough",
    "fair",
    "fair point",
    "good point",
    "good call",
    "true",
    "exactly",
    "indeed",
    "i agree with",
    "agree with",
    "agreed with",
    "i agree",
    "agreed",
    "agree",
    "totally",
    "absolutely",
    "definitely",
    "same here",
    "me too",
    "+1",
    "sounds good to me",
    "sounds good",
    "sounds great",
    "sgtm",
    "looks good to me",
    "looks good",
    "lgtm",
    "works for me",
    "nice one",
    "nice work",
    "nice job",
    "nice",
    "great work",
    "great job",
    "great",
    "good job",
    "good work",
    "well done",
    "awesome",
    "cool",
    "perfect",
    "excellent",
    "amazing",
    "brilliant",
    "sweet",
    "neat",
    "lovely",
    "wonderful",
    "fantastic",
    "congrats",
    "congratulations",
    "kudos",
    "bravo",
    "yay",
    "woohoo",
    "wow",
    "oh",
    "ah",
    "aha",
    "ooh",
    "hmm",
    "haha",
    "hah",
    "hehe",
    "heh",
    "lol",
    "lmao",
    "good morning",
    "good afternoon",
    "good evening",
    "good night",
    "morning",
    "hi there",
    "hello there",
    "hiya",
    "hi",
    "hey",
    "hello",
    "yo",
    "gm",
    "gn",
    "goodbye",
    "bye",
    "see you",
    "see ya",
    "ttyl",
)
# The words said around such a phrase that add nothing to it ("thanks so much, everyone").
_ENGLISH_AROUND = (
    "so much",
    "very much",
    "a lot",
    "a ton",
    "again",
    "all",
    "everyone",
    "everybody",
    "guys",
    "folks",
    "team",
    "y'all",
    "yall",
    "you",
    "both",
    "too",
    "really",
    "just",
    "and",
    "man",
    "mate",
    "dude",
)
# Japanese phrases (no spaces, so matched as written), and what is said around them: the polite
# endings, sentence-final particles, honorifics and laughter.
_JAPANESE = (
    "よろしくお願いいたします",
    "よろしくお願い致します",
    "よろしくお願いします",
    "宜しくお願いします",
    "よろしく",
    "お願いいたします",
    "お願い致します",
    "お願いします",
    "ありがとう",
    "有難う",
    "どうも",
    "感謝",
    "助かります",
    "助かりました",
    "お疲れ様",
    "お疲れさま",
    "お疲れ",
    "おつかれさま",
    "おつかれ",
    "おはよう",
    "こんにちは",
    "こんばんは",
    "おめでとう",
    "すみません",
    "ごめんなさい",
    "了解",
    "りょうかい",
    "承知",
    "把握",
    "わかりました",
    "分かりました",
    "賛成",
    "同意",
    "いいですね",
    "いいね",
    "最高",
    "素敵",
    "すごい",
    "さすが",
    "ナイス",
    "なるほど",
    "確かに",
    "たしかに",
    "そうですね",
    "そうだね",
    "はい",
    "うん",
    "ええ",
    "オッケー",
    "おけ",
)
_JAPANESE_AROUND = (
    "いたしました",
    "いたします",
    "致しました",
    "致します",
    "ございました",
    "ございます",
    "しました",
    "します",
    "でした",
    "です",
    "ました",
    "ます",
    "本当に",
    "ほんとに",
    "皆さん",
    "みなさん",
    "みんな",
    "さん",
    "くん",
    "ちゃん",
    "さま",
    "様",
    "ね",
    "よ",
    "な",
    "ー",
    "〜",
    "～",
    "っ",
    "笑",
)


def _alternation(phrases: tuple[str, ...]) -> str:
    ordered = sorted(set(phrases), key=len, reverse=True)
    return "|".join(re.escape(phrase).replace(r"\ ", r"\s+") for phrase in ordered)


_MARK = "\x00"  # put for a phrase taken out: a name right after it is whom it thanks or greets
_PHRASE = re.compile(
    rf"(?<![\w'’+])(?:{_alternation(_ENGLISH)})(?![\w'’])|{_alternation(_JAPANESE)}",
    re.IGNORECASE,
)
_AROUND = re.compile(
    rf"(?<![\w'’])(?:{_alternation(_ENGLISH_AROUND)})(?![\w'’])|{_alternation(_JAPANESE_AROUND)}",
    re.IGNORECASE,
)
# A name right after a thanks or greeting, up to two capitalised words ending the sentence:
# "Thanks Maya!", "Nice work Ana Lima."
_NAMED = re.compile(rf"{_MARK}[\s,]*[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)?(?=\s*(?:[^\w\s]|$))")
_MENTION = re.compile(r"[@#][\w.'-]+|<[@#!][^>]*>")  # @Maya, Slack's <@U123>, a channel
_EMOJI_CODE = re.compile(r":[a-z0-9_+-]+:", re.IGNORECASE)  # Slack's :+1:, :tada:
_SAYS_BY_FORM = re.compile(r"[?？]|```|`|https?://|www\.", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


def is_acknowledgement(text: str, names: frozenset[str] = frozenset()) -> bool:
    """Whether ``text`` is wholly an acknowledgement, thanks, greeting or bare assent (see the
    module); ``names`` (lower-cased words) are further names it may address, such as the
    channel's speakers."""
    left = _left_after_phrases(text)
    return left is not None and all(word in names for word in left)


def says_something(text: str, names: frozenset[str] = frozenset()) -> bool:
    """Whether ``text`` says anything beyond an acknowledgement (see :func:`is_acknowledgement`)."""
    return not is_acknowledgement(text, names)


@text_cache(maxsize=65_536)
def _left_after_phrases(text: str) -> tuple[str, ...] | None:
    """The words of ``text`` that are neither a phrase of acknowledgement nor said around one,
    nor a name it addresses, lower-cased; None when its form alone says something (a
    question, code, a link) or it has words but no phrase of acknowledgement. A line of emoji
    and punctuation alone ("👍", "🎉🎉") is a reaction: nothing is left of it."""
    if _SAYS_BY_FORM.search(text):
        return None
    said = _MENTION.sub(" ", _EMOJI_CODE.sub(" ", text))
    marked = _PHRASE.sub(f" {_MARK} ", said)
    if _MARK not in marked:
        return None if _WORD.search(said) else ()
    left = _AROUND.sub(" ", _NAMED.sub(" ", marked))
    addressed = addressed_names(text)
    return tuple(
        word
        for word in (match.group(0).lower() for match in _WORD.finditer(left))
        if word not in addressed
    )
