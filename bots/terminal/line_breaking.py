"""Line breaking that follows Japanese rules (禁則処理) in the terminal's panels.

Japanese has no spaces, so rich folds a Japanese sentence wherever the panel's width ends, and a
line can open with 。、」 or a small っ, or close on an opening 「: a reader sees a stray full stop
at the start of a line, which no Japanese typesetting allows. :class:`WrappedText` is rich's
``Text`` with its own breaks (:func:`break_offsets`): Japanese may break between any two
characters, so a Japanese run fills the line it starts on, and a break that falls inside it is
moved back by a character or two (追い出し, the usual fix) until the next line opens on a
character that may start a line and this one does not end on an opening bracket. Moving a break
back only shortens a line, so nothing overflows; every break after it is then found again from
the new one. Breaks at spaces (English words) are never moved.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, JustifyMethod, OverflowMethod
from rich.containers import Lines
from rich.text import Text

# JIS X 4051's line-start and line-end prohibitions, the common subset: closing brackets and
# quotes, punctuation, the iteration marks, the prolonged sound mark and the small kana.
NO_LINE_START = frozenset(
    "、。，．・：；？！ー～〜‐゠–）」』］｝〕〉》】〙〗”’ゝゞ々〻"
    "ぁぃぅぇぉっゃゅょゎゕゖァィゥェォッャュョヮヵヶㇰㇱㇲㇳㇴㇵㇶㇷㇸㇹㇺㇻㇼㇽㇾㇿ"
    ")]},.!?:;%"
)
NO_LINE_END = frozenset("（「『［｛〔〈《【〘〖“‘([{")
# How far back a break may move: two characters covers "。」" and "っ。", and a longer pull
# would leave a visibly short line for a rule readers forgive.
MAX_PULL = 2


class WrappedText(Text):
    """``rich.text.Text`` whose folds inside Japanese text follow the line-breaking rules."""

    def wrap(
        self,
        console: Console,
        width: int,
        *,
        justify: JustifyMethod | None = None,
        overflow: OverflowMethod | None = None,
        tab_size: int = 8,
        no_wrap: bool | None = None,
    ) -> Lines:
        """rich's ``Text.wrap``, with the break offsets of :func:`break_offsets`."""
        wrap_overflow = overflow or self.overflow or "fold"
        if no_wrap or self.no_wrap or wrap_overflow == "ignore":
            return super().wrap(
                console,
                width,
                justify=justify,
                overflow=overflow,
                tab_size=tab_size,
                no_wrap=no_wrap,
            )
        lines = Lines()
        for line in self.split(allow_blank=True):
            if "\t" in line:
                line.expand_tabs(tab_size)
            offsets = break_offsets(line.plain, width, fold=wrap_overflow == "fold")
            new_lines = line.divide(offsets)
            for piece in new_lines:
                piece.rstrip_end(width)
            wrap_justify = justify or self.justify
            if wrap_justify:
                new_lines.justify(console, width, justify=wrap_justify, overflow=wrap_overflow)
            for piece in new_lines:
                piece.truncate(width, overflow=wrap_overflow)
            lines.extend(new_lines)
        return lines


def break_offsets(text: str, width: int, fold: bool = True) -> list[int]:
    """Where ``text`` breaks to fit ``width`` cells.

    A line breaks at the last place it may before it overflows: the start of a word after a
    space, or between two characters of which one is Japanese (wide), moved back (at most
    :data:`MAX_PULL` characters) where the line-breaking rules forbid the break. Japanese text
    therefore fills the line a label or an English word began, as typeset Japanese does (rich's
    own breaker moves a whole run without spaces to the next line, leaving "[m008] 佐藤:" alone).
    A word with no place to break in it (a URL) moves whole to the next line, and is folded only
    when longer than a line (``fold``). Spaces may hang past the edge: the caller trims them.
    """
    offsets: list[int] = []
    start = 0
    used = 0
    for at, char in enumerate(text):
        cells = cell_len(char)
        while used + cells > width and at > start and not char.isspace():
            end = _last_break(text, start, at)
            if end is None:
                if not fold:
                    break
                end = at
            start = _pulled_back(text, start, end)
            offsets.append(start)
            used = cell_len(text[start:at])
        used += cells
    return offsets


def _last_break(text: str, start: int, at: int) -> int | None:
    """The last place after ``start`` and at most ``at`` where a line may break, if any."""
    for candidate in range(at, start, -1):
        before, after = text[candidate - 1], text[candidate]
        if after.isspace():
            continue
        if before.isspace() or cell_len(before) == 2 or cell_len(after) == 2:
            return candidate
    return None


def _pulled_back(text: str, start: int, end: int) -> int:
    """``end``, moved back to the nearest allowed break within reach; unmoved when none is."""
    candidate = end
    for _ in range(MAX_PULL + 1):
        if not _inside_japanese(text, candidate):
            return end
        if text[candidate] not in NO_LINE_START and text[candidate - 1] not in NO_LINE_END:
            return candidate
        if candidate - 1 <= start:
            return end
        candidate -= 1
    return end


def _inside_japanese(text: str, at: int) -> bool:
    """Whether the break before ``text[at]`` folds a run with wide (CJK) text on either side."""
    before, after = text[at - 1], text[at]
    if before.isspace() or after.isspace():
        return False
    return cell_len(before) == 2 or cell_len(after) == 2
