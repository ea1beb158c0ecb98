"""Plain-text handling shared by the offline backend and the renderers.

Why here: chat text mixes English sentences, Japanese sentences with no spaces, list items, code
blocks and links. Cutting it into thoughts and shortening it for display must respect all of them,
and must never yield an empty piece.
"""

from __future__ import annotations

import re
import unicodedata

_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_LIST_ITEM = re.compile(r"^\s*(?:[-*•・]|\d{1,3}[.)])\s+")
# A sentence ends after Japanese full stops (no space follows them), or after . ! ? followed by a
# space; closing quotes and brackets stay with their sentence.
_SENTENCE_END = re.compile(r"(?<=[。！？!?．])[」』）)\"']*\s*|(?<=[.!?])[\"')\]]*\s+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff]")
_JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f]")
_LETTER = re.compile(r"[A-Za-z\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")


def clean(text: str) -> str:
    """Drop control and binary characters (keeping newlines and tabs) and normalise width forms."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text).strip()


def detect_language(text: str) -> str:
    """``ja`` when Japanese script makes up a fair share of the letters, else ``en``."""
    letters = _LETTER.findall(text)
    if not letters:
        return "en"
    japanese = sum(1 for char in letters if _JAPANESE.match(char))
    return "ja" if japanese / len(letters) >= 0.3 else "en"


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences on English and Japanese boundaries; code blocks stay whole."""
    pieces: list[str] = []
    cursor = 0
    for block in _CODE_BLOCK.finditer(text):
        pieces.extend(_split_prose(text[cursor : block.start()]))
        pieces.append(block.group(0).strip())
        cursor = block.end()
    pieces.extend(_split_prose(text[cursor:]))
    return [piece for piece in pieces if piece and not piece.isspace()]


def _split_prose(text: str) -> list[str]:
    sentences: list[str] = []
    for line in text.split("\n"):
        line = _LIST_ITEM.sub("", line).strip()
        if not line:
            continue
        sentences.extend(part.strip() for part in _SENTENCE_END.split(line) if part.strip())
    return _merge_fragments(sentences)


def _merge_fragments(sentences: list[str]) -> list[str]:
    """Fold pieces with no letters or digits (a stray "?!" or "…") into the sentence before them."""
    merged: list[str] = []
    for sentence in sentences:
        if merged and not any(char.isalnum() for char in sentence):
            merged[-1] = f"{merged[-1]} {sentence}"
        else:
            merged.append(sentence)
    return merged


def display_width(text: str) -> int:
    """Columns the text takes in a terminal: wide (CJK) characters count two."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def shorten(text: str, width: int) -> str:
    """Cut ``text`` to at most ``width`` columns, on a word boundary where words have spaces."""
    text = " ".join(text.split())
    if display_width(text) <= width:
        return text
    cut, used = [], 0
    for char in text:
        used += 2 if unicodedata.east_asian_width(char) in "WF" else 1
        if used > width - 1:
            break
        cut.append(char)
    shortened = "".join(cut)
    if " " in shortened and not _JAPANESE.search(shortened[-8:]):
        shortened = shortened.rsplit(" ", 1)[0]
    return shortened.rstrip(" ,、。") + "…"
