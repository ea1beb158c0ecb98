"""What in a thought could carry a concern: its content words, without the talk around them.

A preconception is something a person keeps coming back to. Much of what people say is the talk
itself: acknowledgements ("ok", "thanks!", "sounds good", "了解です"), reactions to the other
person ("Wow, great pic!", "That's awesome, Melanie!") and the name of whoever is addressed. Such
lines are alike among themselves by form, so a sentence encoder puts them together and HDBSCAN
finds them dense: on LoCoMo's long conversations a third of a speaker's "schemas" were reactions
and greetings ("Totally agree, Mel. / Sounds great, Mel!"), each holding lines no question about
the person's life cites (measured in ``bench/preconceptions.py``).

So a thought takes part in clustering only with enough **content words**: words that are not
stop words, not spoken fillers or reactions (a small closed list, as stop lists are, English and
Japanese), not digits, and not a name the thought addresses (English sets a vocative off with
commas: "Totally agree, Mel."; Japanese follows a name with an honorific: "田中さん、"). A
cluster is kept only when two of its members share such a word (``clustering._worded``).
"""

from __future__ import annotations

import re
from collections import Counter

from awai_engine.stop_words import ENGLISH_STOP_WORDS
from awai_engine.text import words
from awai_engine.text_caches import text_cache

# Words of talk itself, not of any topic, that scikit-learn's (written English) stop list keeps:
# a name such as "launch weekend, like, rota" reads better without them.
SPOKEN_FILLERS = frozenset(
    [
        "like",
        "just",
        "think",
        "know",
        "really",
        "ask",
        "want",
        "need",
        "instead",
        "maybe",
        "actually",
        "okay",
        "ok",
        "yeah",
        "yes",
        "thing",
        "things",
        "lot",
        "sure",
        "guess",
        "mean",
        "going",
        "got",
        "let",
        "say",
        "said",
        "sounds",
        "good",
        "great",
        "right",
    ]
)

# Reactions and acknowledgements, the talk around a topic rather than a topic. Closed-class words
# of evaluation and politeness only; a word that could be what someone is about stays out.
REACTIONS = (
    frozenset(
        [
            "did",
            "does",
            "doing",
            "done",
            "gonna",
            "wanna",
            "gotta",
            "ya",
            "yeah",
            "wow",
            "oh",
            "ah",
            "aw",
            "hmm",
            "huh",
            "haha",
            "hehe",
            "lol",
            "omg",
            "yay",
            "yep",
            "yup",
            "nope",
            "nah",
            "hey",
            "hi",
            "hello",
            "bye",
            "cheers",
            "thanks",
            "thank",
            "thx",
            "ty",
            "welcome",
            "sorry",
            "please",
            "pls",
            "congrats",
            "congratulations",
            "great",
            "awesome",
            "cool",
            "nice",
            "amazing",
            "lovely",
            "glad",
            "fun",
            "agree",
            "agreed",
            "totally",
            "absolutely",
            "definitely",
            "exactly",
            "true",
            "indeed",
            "fine",
            "perfect",
            "sweet",
            "super",
            "fantastic",
            "wonderful",
            "brilliant",
            "incredible",
            "beautiful",
            "gorgeous",
            "stunning",
            "impressive",
            "neat",
            "wonder",
            "cute",
            "kind",
            "excited",
            "exciting",
            "happy",
            "sounds",
            "looks",
            "seems",
            "hear",
            "heard",
            "glad",
            "hope",
            "hoping",
            "bet",
            "cool",
            "pic",
            "pics",
            "picture",
            "photo",
            "appreciate",
            "appreciated",
            "means",
            "mean",
            "meant",
            "honestly",
            "seriously",
            "truly",
            "literally",
            "了解",
            "承知",
            "感謝",
            "同意",
            "賛成",
            "最高",
            "素敵",
            "大丈夫",
            "確かに",
            "本当",
            "なるほど",
            "了解しました",
        ]
    )
    | SPOKEN_FILLERS
)

_VOCATIVE = re.compile(
    r"(?:^|(?<=[,.!?;:—–-]))\s*(?i:(?:hey|hi|hello|thanks|thank you|oh|aw|wow|yo|dear|sorry|yeah|yes|ok|okay|well)\s+)?"
    r"@?([A-Z][\w'’-]*(?:\s[A-Z][\w'’-]*)?)\s*(?=[,.!?;:—–]|$)"
)
_MENTION = re.compile(r"@[\w.'-]+")
_HONORIFIC_NAME = re.compile(
    r"[\u3400-\u4dbf\u4e00-\u9fff々\u30a0-\u30ffー]{1,6}(?=ちゃん|さん|さま|くん|先生|様|君)"
)


@text_cache(maxsize=65_536)
def content_words(text: str) -> frozenset[str]:
    """The words of ``text`` that could say what it is about (see the module)."""
    said = words(text)
    addressed = addressed_names(text)
    return frozenset(
        word
        for word in said
        if len(word) > 1
        and not word.isdigit()
        and "'" not in word
        and "’" not in word
        and word not in ENGLISH_STOP_WORDS
        and word not in REACTIONS
        and word not in addressed
    )


@text_cache(maxsize=65_536)
def addressed_names(text: str) -> frozenset[str]:
    """The words (lower-cased) of the names ``text`` addresses: an @mention, a name with a
    Japanese honorific, or a name said on its own between punctuation ("Totally agree, Mel.").
    A name said again in the sentence ("Stripe! The Stripe webhook failed") is what the line is
    about, not whom it addresses, and is not one of them."""
    named = [
        (pattern, word)
        for pattern in (_VOCATIVE, _MENTION, _HONORIFIC_NAME)
        for match in pattern.finditer(text)
        for word in words(match.group(0))
    ]
    if not named:  # most lines address nobody: no need to count their words
        return frozenset()
    said = Counter(words(text)) if any(p is _VOCATIVE for p, _ in named) else Counter()
    return frozenset(word for pattern, word in named if pattern is not _VOCATIVE or said[word] == 1)
