"""The digest picture: one panel per speaker with preconceptions, each a named bar (PNG).

Made to be read where people see it, in a Slack or Discord preview a few hundred pixels wide: one
column, large type, each preconception's name in words, a bar as long as the number of messages
it came back in (one scale for the whole picture, so speakers compare), and its trend since the
previous digest. Speakers with no preconception get no panel; the Markdown counts them.

Japanese names need glyphs DejaVu Sans lacks: IPAexGothic ships in the ``matplotlib-fontja``
package (a dependency); its file is registered with matplotlib's font manager, without importing
that package (which would change matplotlib's global settings). Headless (the Agg canvas, no
pyplot state), so it runs in a bot's worker thread. The height follows from the panels and their
rows, so adapters know the size before rendering (:func:`picture_size`).
"""

from __future__ import annotations

import io
import logging
from collections.abc import Sequence
from functools import cache
from importlib import resources

from awai_engine.schemas.digest import SpeakerPanel, counted
from awai_engine.settings import DigestSettings
from awai_engine.text import shorten

DPI = 100
HEADER_PX = 84
PANEL_HEAD_PX = 64
PANEL_GAP_PX = 28
FOOTER_PX = 44
MARGIN_PX = 28
TREND_PX = 200  # room right of the longest bar for "12  +3 messages"
INK, QUIET, BAR_BACK = "#1d1d1f", "#6e6e73", "#ececf0"
PALETTE = ("#3b6fd8", "#e07b24", "#2e9e5b", "#c7414b", "#8359c9", "#1f9bb0")
TREND_COLOURS = {"new": "#2e9e5b", "same": QUIET, "changed": QUIET}
CJK_FILE = ("matplotlib_fontja", "fonts/ipaexg.ttf")
CJK_FAMILY = "IPAexGothic"


def picture_size(panels: Sequence[SpeakerPanel], settings: DigestSettings) -> tuple[int, int]:
    """Width and height in pixels of the picture of these panels."""
    body = sum(_panel_height(panel, settings) for panel in panels)
    return settings.picture_width_px, HEADER_PX + max(body, PANEL_HEAD_PX) + FOOTER_PX


def _panel_height(panel: SpeakerPanel, settings: DigestSettings) -> int:
    extra = 30 if panel.more else 0
    return PANEL_HEAD_PX + len(panel.rows) * settings.row_height_px + extra + PANEL_GAP_PX


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


def render_png(
    panels: Sequence[SpeakerPanel], title: str, settings: DigestSettings, first: bool
) -> bytes:
    """The picture as PNG bytes; ``first``: the channel's first digest (no trends yet)."""
    # Imported here: matplotlib takes seconds to import, which only a digest should pay.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyBboxPatch

    width, height = picture_size(panels, settings)
    figure = Figure(figsize=(width / DPI, height / DPI), dpi=DPI, facecolor="white")
    FigureCanvasAgg(figure)
    families = list(font_families())

    def text(x: float, y: float, words: str, **style: object) -> None:
        """Text at pixel (x, y) from the top left."""
        figure.text(x / width, 1 - y / height, words, family=families, va="top", **style)

    def box(x: float, y: float, w: float, h: float, colour: str) -> None:
        figure.add_artist(
            FancyBboxPatch(
                (x / width, 1 - (y + h) / height),
                w / width,
                h / height,
                boxstyle="round,pad=0,rounding_size=0.004",
                transform=figure.transFigure,
                facecolor=colour,
                edgecolor="none",
            )
        )

    text(MARGIN_PX, 22, title, fontsize=22, weight="bold", color=INK)
    since = "First digest: trends start next time." if first else "Trends since the last digest."
    text(MARGIN_PX, 56, f"Bar length: messages it came back in. {since}", fontsize=13, color=QUIET)
    longest = max((row.messages for panel in panels for row in panel.rows), default=1)
    track = width - 2 * MARGIN_PX - TREND_PX
    y = HEADER_PX
    if not panels:
        text(MARGIN_PX, y + 10, "No preconception has formed here yet.", fontsize=18, color=INK)
    for number, panel in enumerate(panels):
        colour = PALETTE[number % len(PALETTE)]
        box(MARGIN_PX, y + 6, 6, PANEL_HEAD_PX - 22, colour)
        text(MARGIN_PX + 18, y + 4, panel.speaker_name, fontsize=21, weight="bold", color=INK)
        text(
            width - MARGIN_PX,
            y + 10,
            f"{counted(panel.messages, 'message')} · {counted(len(panel.rows) + panel.more, 'preconception')}",
            fontsize=14,
            color=QUIET,
            ha="right",
        )
        y += PANEL_HEAD_PX
        for row in panel.rows:
            text(MARGIN_PX + 18, y, shorten(row.name, settings.label_chars), fontsize=17, color=INK)
            bar_y, bar_h = y + 34, settings.row_height_px - 48
            box(MARGIN_PX + 18, bar_y, track - 18, bar_h, BAR_BACK)
            box(
                MARGIN_PX + 18,
                bar_y,
                max(8.0, (track - 18) * row.messages / longest),
                bar_h,
                colour,
            )
            text(
                MARGIN_PX + track + 14,
                bar_y - 6,
                str(row.messages),
                fontsize=17,
                weight="bold",
                color=INK,
            )
            if row.trend:
                text(
                    MARGIN_PX + track + 58,
                    bar_y - 4,
                    row.trend,
                    fontsize=15,
                    color=TREND_COLOURS.get(row.trend, colour),
                )
            y += settings.row_height_px
        if panel.more:
            text(
                MARGIN_PX + 18,
                y - 4,
                f"and {counted(panel.more, 'smaller one')}",
                fontsize=13,
                color=QUIET,
            )
            y += 30
        y += PANEL_GAP_PX
    text(
        MARGIN_PX,
        height - FOOTER_PX + 12,
        "Preconceptions: what each person keeps coming back to in this channel, from their words here only.",
        fontsize=12,
        color=QUIET,
    )
    buffer = io.BytesIO()
    fonts = logging.getLogger("matplotlib.font_manager")
    level = fonts.level
    fonts.setLevel(logging.ERROR)  # "no bold IPAexGothic": Japanese names are drawn regular
    try:
        figure.savefig(buffer, format="png", dpi=DPI, facecolor="white")
    finally:
        fonts.setLevel(level)
    return buffer.getvalue()
