"""Which language a written answer is asked in: the message's own, named when its script says.

Why not ``awai_engine.text.detect_language``: it tells the renderers Japanese from everything else
(``ja`` / ``en``), which is all their labels need, but naming "English" for a Spanish message or
"Japanese" for a Chinese one makes the model answer in the wrong language. Scripts decide what they
can (kana: Japanese; Hangul: Korean; Han without kana: Chinese; Cyrillic, Greek, Arabic, Hebrew,
Thai, Devanagari by name too); for a Latin-script message the model is told to answer in the
message's own language, which it recognises better than a word list would.
"""

from __future__ import annotations

import unicodedata
from collections import Counter

SCRIPT_LANGUAGES = {
    "CJK": ("zh", "Chinese (中文)"),
    "HANGUL": ("ko", "Korean (한국어)"),
    "CYRILLIC": (None, "the language of the message (written in Cyrillic)"),
    "GREEK": ("el", "Greek"),
    "ARABIC": (None, "the language of the message (written in Arabic script)"),
    "HEBREW": ("he", "Hebrew"),
    "THAI": ("th", "Thai"),
    "DEVANAGARI": (None, "the language of the message (written in Devanagari)"),
}
JAPANESE = ("ja", "Japanese (日本語)")
SAME_AS_MESSAGE = "the language the message itself is written in (English only if it is in English)"
SHARE = 0.3


def answer_language(text: str) -> tuple[str | None, str]:
    """The answer's language code (``None`` when the script cannot tell) and how to name it."""
    scripts: Counter[str] = Counter()
    for char in text:
        if not char.isalpha():
            continue
        name = unicodedata.name(char, "")
        if name.startswith(("HIRAGANA", "KATAKANA")):
            scripts["KANA"] += 1
        elif name.startswith("CJK"):
            scripts["CJK"] += 1
        else:
            scripts[name.split(" ", 1)[0]] += 1
    letters = sum(scripts.values())
    if not letters:
        return None, SAME_AS_MESSAGE
    if scripts["KANA"] and (scripts["KANA"] + scripts["CJK"]) / letters >= SHARE:
        return JAPANESE
    script, count = max(
        ((s, c) for s, c in scripts.items() if s in SCRIPT_LANGUAGES),
        default=("", 0),
        key=lambda item: item[1],
    )
    if script and count / letters >= SHARE:
        return SCRIPT_LANGUAGES[script]
    return None, SAME_AS_MESSAGE
