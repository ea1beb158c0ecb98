"""Plain-text handling shared by the offline backend and the renderers.

Why here: chat text mixes English sentences, Japanese sentences with no spaces, list items, code
blocks and links. Cutting it into thoughts and shortening it for display must respect all of them,
and must never yield an empty piece.

Japanese in particular: a sentence ends at 。！？ (full- or half-width, in runs such as ！？) with
no space after it, a full stop inside 「quoted speech」 does not end the outer sentence, and words
are not separated by spaces, so a display is cut on character width (a kanji takes two terminal
columns), preferably at a clause boundary (、。) rather than in the middle of a word.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_LIST_ITEM = re.compile(r"^\s*(?:[-*•・]|\d{1,3}[.)])\s+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff]")
_JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f]")
_LETTER = re.compile(r"[A-Za-z\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")

# Full-width marks end a sentence wherever they stand; ASCII ones only before a space or the end
# of the line (so "v1.2", "Node.js" and "?q=1" in a link stay whole), and ! ? also before Japanese.
_FULL_WIDTH_STOPS = frozenset("。！？．｡")
_ASCII_STOPS = frozenset(".!?")
_OPENING = "「『（(【〔［[“"
_CLOSING = "」』）)】〕］]”\"'"
# A comma that joins two sentences of their own: a polite finite predicate (です／ます and their
# past and negative forms), optionally with a contrastive or additive particle, then 、.
# "Xですが、Y" and "Xました、Y" state two things; "Xので、Y" (a reason) stays one thought.
_CLAUSE_END = re.compile(
    r"(?:です|ます|でした|ました|ません|ましょう)(?:が|けど|けれど|けれども|し)?、"
)
_MIN_CLAUSE_CHARS = 4
# Honorific suffixes after a name, longest first ("さま" before "ま"-less forms).
_HONORIFICS = ("ちゃん", "さん", "さま", "くん", "先生", "様", "君", "氏", "殿")
# How far back from the cut a boundary (space, 、, 。) may be to be preferred, as a share of width.
_BOUNDARY_REACH = 0.3


def clean(text: str) -> str:
    """Drop control and binary characters (keeping newlines and tabs) and normalise line ends."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text).strip()


def is_japanese_char(char: str) -> bool:
    """Whether ``char`` is kana or kanji (Japanese script, which runs without spaces)."""
    return bool(_JAPANESE.match(char))


def has_japanese(text: str) -> bool:
    """Whether ``text`` holds any kana or kanji: a Japanese sentence (or a part of one)."""
    return _JAPANESE.search(text) is not None


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


def as_said(parts: Sequence[str]) -> str:
    """A message's thoughts (or any run of sentences) back as one passage a person reads.

    A part that ends a sentence (or opens a list with a colon) is followed by the space the
    script wants: none after a Japanese full stop, one otherwise. A part without an ending stop
    (a list item, a fragment) is followed by "; " (Japanese "、"), as a list is written inline;
    one that ends a code block, by a line break (a fence closes on its own line).
    """
    passage = ""
    for part in (part.strip() for part in parts):
        if not part:
            continue
        if passage:
            passage += _gap_after(passage)
        passage += part
    return passage


def _gap_after(said: str) -> str:
    """What follows ``said`` before the next part (see :func:`as_said`); a closing bracket or
    quote after the stop does not hide it."""
    if said.endswith("```"):  # a code block ends on its own line, and so the passage goes on
        return "\n"
    last = said.rstrip(_CLOSING)[-1:] or said[-1]
    if last in _FULL_WIDTH_STOPS or last == "：":
        return ""
    if last in _ASCII_STOPS or last in ":…":
        return " "
    return "、" if is_japanese_char(last) else "; "


def _split_prose(text: str) -> list[str]:
    sentences: list[str] = []
    for line in text.split("\n"):
        line = _LIST_ITEM.sub("", line).strip()
        if not line:
            continue
        for sentence in _split_line(line):
            sentences.extend(split_clauses(sentence))
    return _merge_fragments(sentences)


def _split_line(line: str) -> list[str]:
    """Cut one line after each sentence-ending run, outside brackets and quotes."""
    sentences: list[str] = []
    depth, start, i = 0, 0, 0
    while i < len(line):
        char = line[i]
        if char in _OPENING:
            depth += 1
        elif char in _CLOSING and depth and char not in "\"'":
            depth -= 1
        if depth == 0 and _ends_sentence(line, i):
            i += 1
            while i < len(line) and (
                line[i] in _FULL_WIDTH_STOPS or line[i] in _ASCII_STOPS or line[i] in _CLOSING
            ):
                i += 1
            sentences.append(line[start:i].strip())
            start = i
            continue
        i += 1
    sentences.append(line[start:].strip())
    return [sentence for sentence in sentences if sentence]


def _ends_sentence(line: str, i: int) -> bool:
    char = line[i]
    if char in _FULL_WIDTH_STOPS:
        return True
    if char not in _ASCII_STOPS:
        return False
    rest = line[i + 1 :].lstrip(_CLOSING + "".join(_ASCII_STOPS))
    if not rest or rest[0].isspace():
        return True
    return char != "." and bool(_JAPANESE.match(rest[0]))


def split_clauses(sentence: str) -> list[str]:
    """Split a Japanese sentence at commas that join two finite polite clauses, conservatively.

    Only "…です、" / "…ましたが、" / "…ますし、" and the like count, and only when both sides
    keep at least a few characters; a reason or condition clause ("…ので、", "…たら、") and a
    leading conjunction ("ただ、") stay with their sentence.
    """
    clauses: list[str] = []
    start = 0
    for match in _CLAUSE_END.finditer(sentence):
        left = sentence[start : match.end()]
        right = sentence[match.end() :]
        if _content_chars(left) >= _MIN_CLAUSE_CHARS and _content_chars(right) >= _MIN_CLAUSE_CHARS:
            clauses.append(left.strip().rstrip("、"))
            start = match.end()
    clauses.append(sentence[start:].strip())
    return [clause for clause in clauses if clause]


def _content_chars(text: str) -> int:
    return sum(1 for char in text if char.isalnum())


def _merge_fragments(sentences: list[str]) -> list[str]:
    """Fold pieces with no letters or digits (a stray "?!" or "…") into the sentence before them."""
    merged: list[str] = []
    for sentence in sentences:
        if merged and not any(char.isalnum() for char in sentence):
            merged[-1] = f"{merged[-1]} {sentence}"
        else:
            merged.append(sentence)
    return merged


def without_honorific(name: str) -> str:
    """A name as Japanese speakers address it ("田中さん", "佐藤様", "鈴木くん") back to the name.

    Adapters match what a message calls someone against display names; in Japanese the name is
    almost always followed by an honorific, which is not part of the display name.
    """
    for suffix in _HONORIFICS:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def char_width(char: str) -> int:
    """Terminal columns of one character: wide and full-width (CJK) characters take two."""
    return 2 if unicodedata.east_asian_width(char) in "WF" else 1


def display_width(text: str) -> int:
    """Columns the text takes in a terminal: wide (CJK) characters count two."""
    return sum(char_width(char) for char in text)


def shorten(text: str, width: int) -> str:
    """Cut ``text`` to at most ``width`` columns, ending with "…" when anything was cut.

    Width is counted in terminal columns, so a Japanese summary keeps about half as many
    characters as an English one. The cut moves back to the last space (English) or clause mark
    (、。) when one lies near the end, so words are not split where that is cheap. A code
    fence's language tag is dropped: on one line it would read as the code's first word
    ("```kotlin val request"), where it was the fence's own line.
    """
    text = " ".join(_FENCE_TAG.sub("```\n", text).split())
    if display_width(text) <= width:
        return text
    kept, used = [], 0
    for char in text:
        used += char_width(char)
        if used > width - 1:  # one column stays free for the ellipsis
            break
        kept.append(char)
    cut = "".join(kept)
    link = next((m for m in _LINK.finditer(text) if m.start() < len(cut) < m.end()), None)
    if link is not None and display_width(link.group(0)) <= width * 2 // 3:
        return _keeping_link(text, link, width)
    reach = max(1, int(len(cut) * _BOUNDARY_REACH))
    boundary = max(cut.rfind(" "), cut.rfind("、") + 1, cut.rfind("。") + 1, cut.rfind("，") + 1)
    if boundary >= len(cut) - reach and boundary > 0:
        cut = cut[:boundary]
    # A full stop before the ellipsis reads as a glitch (".…"): the ellipsis ends the sentence.
    return cut.rstrip(" ,、。，・(（「『[.") + "…"


_LINK = re.compile(r"https?://\S+")
_FENCE_TAG = re.compile(r"```[\w+#.-]+[ \t]*\n")


def _keeping_link(text: str, link: re.Match[str], width: int) -> str:
    """``text`` cut where it would cut ``link`` in two: the words before it shortened, the link
    whole (a cut link leads nowhere, and one dropped leaves "see…"), then "…" if more followed."""
    url = link.group(0)
    after = "…" if text[link.end() :].strip() else ""
    head = text[: link.start()].rstrip()
    room = width - display_width(url) - display_width(after) - 1  # the space before the link
    kept = shorten(head, room) if head else ""
    return f"{kept} {url}{after}" if kept else f"{url}{after}"


def shorten_keeping_lines(text: str, width: int, max_lines: int) -> str:
    """Cut a message shown whole to at most ``width`` columns and ``max_lines`` lines, keeping
    its line breaks, ending with "…" when anything was cut.

    Why not :func:`shorten`: a message shown as the reading's subject is read as it was written;
    joined into one paragraph, a list, a stack trace or a fenced code block becomes a wall of
    words. Runs of blank lines are one, a cut line is cut at a word, and a code fence left open
    by the cut is closed, so a renderer that draws fences does not run the block past the text.
    """
    lines: list[str] = []
    for line in text.splitlines():
        line = line.rstrip()
        if line or (lines and lines[-1]):
            lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    kept: list[str] = []
    used = 0
    cut = False
    for line in lines:
        room = width - used
        if len(kept) == max_lines or room <= 1:
            cut = True
            break
        if display_width(line) > room:
            body = line.lstrip()
            indent = line[: len(line) - len(body)]
            if display_width(indent) > room // 2:
                indent = ""  # an indent wider than the room left would push the cut past it
            kept.append(indent + shorten(body, max(2, room - display_width(indent))))
            cut = True
            break
        kept.append(line)
        used += display_width(line) + 1  # the break counts as a column, like a space would
    if cut and not kept[-1].endswith("…"):
        kept.append("…")
    if sum(line.lstrip().startswith("```") for line in kept) % 2:
        kept.append("```")
    return "\n".join(kept)


# A word, for counting and keyphrases: a run of Latin letters and digits (with inner ' - .), a run
# of kanji (compounds such as 個人情報 stay whole), or a run of katakana (バッテリー). Hiragana runs
# are Japanese particles and inflections (は, です, ました) and are left out.
_WORD = re.compile(
    r"[^\W_\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]+(?:['’\-.][^\W_\u3040-\u30ff\u3400-\u9fff]+)*"
    r"|[\u3400-\u4dbf\u4e00-\u9fff々]+"
    r"|[\u30a0-\u30ffー]+"
)


def word_spans(text: str) -> list[tuple[str, int, int]]:
    """:func:`words` with where each is said (start, end in ``text``): what lies between two words
    tells whether they are said as one phrase."""
    return [(match.group(0).lower(), match.start(), match.end()) for match in _WORD.finditer(text)]


def words(text: str) -> list[str]:
    """The words of English or Japanese text, lower-cased, without Japanese function words.

    Japanese has no spaces; script changes are where its content words begin and end often
    enough for counting and for keyphrases (a kanji compound, a katakana loanword), with no
    dictionary to install. Scikit-learn's vectorizers take this as their ``analyzer``.
    """
    return [match.group(0).lower() for match in _WORD.finditer(text)]
