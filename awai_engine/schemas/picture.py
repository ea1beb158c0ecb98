"""The digest picture: one panel per speaker with preconceptions, each a named bar (PNG).

Made to be read where people see it first, in a Slack or Discord preview, which shows a picture
about 400–550 pixels wide and cuts a tall one short. So the picture is wide (panels in two
columns, at most ``picture_speakers`` of them, the rest counted), and its type is sized against
its width: at preview size a preconception's name is still about 11 pixels high. Each row is a
preconception's name in words, how many messages it came back in, its trend since the previous
digest, and a bar as long as that count (one scale for the whole picture, so speakers compare).
Every word is in the channel's language (:mod:`awai_engine.schemas.wording`).

Japanese needs glyphs DejaVu Sans lacks: IPAexGothic ships in the ``matplotlib-fontja`` package
(a dependency); its file is registered with matplotlib's font manager, without importing that
package (which would change matplotlib's global settings). Headless (the Agg canvas, no pyplot
state), so it runs in a bot's worker thread. The size follows from the panels alone, so adapters
know it before rendering (:func:`picture_size`).
"""

from __future__ import annotations

import io
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from awai_engine.schemas.digest import PanelRow, SpeakerPanel, Trend
from awai_engine.schemas.wording import counted, words_for
from awai_engine.settings import DigestSettings
from awai_engine.text import display_width, shorten

DPI = 100
BASE_WIDTH = 1200  # the sizes below are pixels at this width; other widths scale them
COLUMNS = 2
HEADER, PANEL_HEAD, PANEL_GAP, FOOTER, MARGIN, GUTTER = 104, 84, 26, 52, 34, 44
BAR = 16
TITLE_PT, SUBTITLE_PT, SPEAKER_PT, NAME_PT, COUNT_PT, SMALL_PT = 27, 16, 23, 20, 20, 15
CHAR_PX = 0.56 * NAME_PT * DPI / 72  # a column of a name: a Latin letter (a kanji takes two)
COUNT_ROOM = 180  # right of a bar: "12  +3" or "4  変化あり"
COUNT_RIGHT = 72  # where a count ends, right of its bar
INK, QUIET, BAR_BACK = "#1d1d1f", "#6e6e73", "#ececf0"
PALETTE = ("#3b6fd8", "#e07b24", "#2e9e5b", "#c7414b", "#8359c9", "#1f9bb0")
NEW_COLOUR = "#2e9e5b"
CJK_FILE = ("matplotlib_fontja", "fonts/ipaexg.ttf")
CJK_FAMILY = "IPAexGothic"


@dataclass(frozen=True)
class _Grid:
    """Where panels go: ``columns`` across, each grid row as tall as its tallest panel."""

    columns: int
    row_heights: tuple[int, ...]
    scale: float


def _grid(panels: Sequence[SpeakerPanel], settings: DigestSettings) -> _Grid:
    shown = panels[: settings.picture_speakers]
    columns = max(1, min(COLUMNS, len(shown)))
    heights = [_panel_height(panel, settings) for panel in shown]
    rows = tuple(max(heights[start : start + columns]) for start in range(0, len(heights), columns))
    return _Grid(columns, rows, settings.picture_width_px / BASE_WIDTH)


def _panel_height(panel: SpeakerPanel, settings: DigestSettings) -> int:
    more = SMALL_PT * 2 if panel.more else 0
    return PANEL_HEAD + len(panel.rows) * settings.row_height_px + more + PANEL_GAP


def picture_size(panels: Sequence[SpeakerPanel], settings: DigestSettings) -> tuple[int, int]:
    """Width and height in pixels of the picture of these panels."""
    grid = _grid(panels, settings)
    body = max(sum(grid.row_heights), PANEL_HEAD)
    more = SMALL_PT * 2 if len(panels) > settings.picture_speakers else 0
    return settings.picture_width_px, round((HEADER + body + more + FOOTER) * grid.scale)


@cache
def font_families() -> tuple[str, ...]:
    """DejaVu Sans, then the packaged Japanese font for the glyphs it lacks (when installed)."""
    from matplotlib import font_manager

    try:
        path = resources.files(CJK_FILE[0]).joinpath(CJK_FILE[1])
    except ModuleNotFoundError:
        return ("DejaVu Sans",)
    with resources.as_file(path) as file:
        if not file.exists():
            return ("DejaVu Sans",)
        font_manager.fontManager.addfont(str(file))
    return ("DejaVu Sans", CJK_FAMILY)


def trend_text(trend: Trend, words: dict[str, str]) -> str:
    """The trend in the channel's words: "new", "+3", "−2", "same" (新規, +3件, …)."""
    if trend.kind == "delta":
        return words["trend:delta"].format(delta=f"{trend.messages:+d}".replace("-", "−"))
    return words[f"trend:{trend.kind}"]


class _Canvas:
    """A figure addressed in pixels of the base width, from the top left."""

    def __init__(self, width: int, height: int, scale: float) -> None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.width, self.height, self.scale = width, height, scale
        self.figure = Figure(figsize=(width / DPI, height / DPI), dpi=DPI, facecolor="white")
        FigureCanvasAgg(self.figure)
        self.families = list(font_families())

    def text(self, x: float, y: float, said: str, size: float, **style: Any) -> None:
        self.figure.text(
            x * self.scale / self.width,
            1 - y * self.scale / self.height,
            said,
            family=self.families,
            va="top",
            fontsize=size * self.scale,
            **style,
        )

    def box(self, x: float, y: float, w: float, h: float, colour: str) -> None:
        from matplotlib.patches import FancyBboxPatch

        self.figure.add_artist(
            FancyBboxPatch(
                (x * self.scale / self.width, 1 - (y + h) * self.scale / self.height),
                w * self.scale / self.width,
                h * self.scale / self.height,
                boxstyle="round,pad=0,rounding_size=0.003",
                transform=self.figure.transFigure,
                facecolor=colour,
                edgecolor="none",
            )
        )

    def png(self) -> bytes:
        buffer = io.BytesIO()
        fonts = logging.getLogger("matplotlib.font_manager")
        level = fonts.level
        fonts.setLevel(logging.ERROR)  # "no bold IPAexGothic": Japanese names are drawn regular
        try:
            self.figure.savefig(buffer, format="png", dpi=DPI, facecolor="white")
        finally:
            fonts.setLevel(level)
        return buffer.getvalue()


def render_png(
    panels: Sequence[SpeakerPanel],
    channel: str,
    settings: DigestSettings,
    first: bool,
    language: str = "en",
) -> bytes:
    """The picture as PNG bytes; ``first``: the channel's first digest (no trends yet)."""
    words = words_for(language)
    grid = _grid(panels, settings)
    width, height = picture_size(panels, settings)
    # matplotlib is imported by the canvas: it takes seconds, which only a digest should pay.
    canvas = _Canvas(width, height, grid.scale)
    text = canvas.text
    bottom = height / grid.scale
    text(MARGIN, 20, words["title"].format(channel=channel), TITLE_PT, weight="bold", color=INK)
    note = words["sentence_gap"].join([words["subtitle"], words["first" if first else "since"]])
    text(MARGIN, 66, note, SUBTITLE_PT, color=QUIET)
    shown = panels[: settings.picture_speakers]
    longest = max((row.messages for panel in shown for row in panel.rows), default=1)
    column_width = (BASE_WIDTH - 2 * MARGIN - (grid.columns - 1) * GUTTER) / grid.columns
    columns = min(settings.label_chars, int((column_width - 18) / CHAR_PX))
    if not shown:
        text(MARGIN, HEADER + 10, words["none_yet"], NAME_PT, color=INK)
    for number, panel in enumerate(shown):
        x = MARGIN + (number % grid.columns) * (column_width + GUTTER)
        y = HEADER + sum(grid.row_heights[: number // grid.columns])
        colour = PALETTE[number % len(PALETTE)]
        canvas.box(x, y + 4, 7, PANEL_HEAD - 26, colour)
        name = shorten(panel.speaker_name, int((column_width - 18) / (CHAR_PX * 1.15)))
        text(x + 18, y, name, SPEAKER_PT, weight="bold", color=INK)
        counts = words["speaker_counts"].format(
            messages=counted(words, "message", panel.messages),
            preconceptions=counted(words, "preconception", len(panel.rows) + panel.more),
        )
        text(x + 18, y + 38, counts, SMALL_PT, color=QUIET)
        y += PANEL_HEAD
        for row in panel.rows:
            _row(canvas, row, (x + 18, y, column_width - 18), longest, colour, words, columns)
            y += settings.row_height_px
        if panel.more:
            text(x + 18, y, counted(words, "more", panel.more), SMALL_PT, color=QUIET)
    if len(panels) > len(shown):
        more = counted(words, "more_people", len(panels) - len(shown))
        text(MARGIN, bottom - FOOTER - SMALL_PT * 2, more, SMALL_PT + 1, color=INK)
    text(MARGIN, bottom - FOOTER + 14, words["footer"], SMALL_PT, color=QUIET)
    return canvas.png()


def row_label(name: str, columns: int, track: float) -> str:
    """A preconception's name over a bar ``track`` pixels long: cut to ``columns`` and short of
    the count's column right of the bar (``CHAR_PX`` overestimates a letter, so half of the
    count's room is granted). A name that lists phrases keeps the whole phrases that fit
    ("background sync…", not "background sync, batter…"): half a word reads as a typo."""
    width = min(columns, int((track + COUNT_RIGHT / 2) / CHAR_PX))
    if display_width(name) <= width:
        return name
    comma = "、" if "、" in name else ", "
    kept = ""
    for phrase in name.split(comma):
        joined = f"{kept}{comma}{phrase}" if kept else phrase
        if display_width(joined) + 1 > width:  # a column for the ellipsis
            break
        kept = joined
    return f"{kept}…" if kept else shorten(name, width)


def _row(
    canvas: _Canvas,
    row: PanelRow,
    place: tuple[float, float, float],
    longest: int,
    colour: str,
    words: dict[str, str],
    columns: int,
) -> None:
    """One preconception at ``place`` (x, y, width): its name on one line (:func:`row_label`);
    below it the bar, then how many messages it came back in and its trend."""
    x, y, width = place
    track = width - COUNT_ROOM
    canvas.text(x, y, row_label(row.name, columns, track), NAME_PT, color=INK)
    bar_y = y + NAME_PT * DPI / 72 + 8
    canvas.box(x, bar_y, track, BAR, BAR_BACK)
    canvas.box(x, bar_y, max(8.0, track * row.messages / longest), BAR, colour)
    count_y = bar_y + BAR / 2 - COUNT_PT * DPI / 72 * 0.7
    count = str(row.messages)
    canvas.text(
        x + track + COUNT_RIGHT, count_y, count, COUNT_PT, weight="bold", color=INK, ha="right"
    )
    if row.trend is not None:
        tint = {"new": NEW_COLOUR, "delta": colour}.get(row.trend.kind, QUIET)
        trend = trend_text(row.trend, words)
        canvas.text(x + track + COUNT_RIGHT + 12, count_y + 3, trend, SMALL_PT + 2, color=tint)
