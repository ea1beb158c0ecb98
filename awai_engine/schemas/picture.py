"""The digest picture: one panel per speaker, their thoughts in 2-D coloured by schema (PNG).

Headless (matplotlib's Agg canvas, no pyplot state), so it runs in a bot's worker thread. The
image is always ``picture_width_px`` wide and ``panel_height_px`` per row of panels, so adapters
know its size in advance. Labels carry the schema numbers of the Markdown, so the picture stays
readable when a summary's script has no glyphs in the installed fonts (the glyphs then show as
boxes; the Markdown has the text).
"""

from __future__ import annotations

import io
import math
import warnings
from collections.abc import Sequence
from functools import cache

from awai_engine.schemas.digest import SpeakerMap
from awai_engine.settings import DigestSettings
from awai_engine.text import shorten

DPI = 100
NOISE_COLOUR = "#c8c8c8"
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd",
)  # fmt: skip
CJK_FONTS = ("Noto Sans CJK JP", "Noto Sans JP", "IPAexGothic", "IPAGothic", "TakaoGothic")


def picture_size(panels: int, settings: DigestSettings) -> tuple[int, int]:
    """Width and height in pixels of a picture with ``panels`` speaker panels (at least one)."""
    rows = math.ceil(max(panels, 1) / settings.picture_columns)
    return settings.picture_width_px, rows * settings.panel_height_px


@cache
def font_families() -> tuple[str, ...]:
    """DejaVu Sans, with a Japanese font to fall back on when one is installed."""
    from matplotlib import font_manager

    installed = {font.name for font in font_manager.fontManager.ttflist}
    return ("DejaVu Sans", *(name for name in CJK_FONTS if name in installed))


def render_png(maps: Sequence[SpeakerMap], settings: DigestSettings) -> bytes:
    # Imported here: matplotlib takes seconds to import, which only a digest should pay.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    width, height = picture_size(len(maps), settings)
    figure = Figure(figsize=(width / DPI, height / DPI), dpi=DPI)
    FigureCanvasAgg(figure)
    columns = min(settings.picture_columns, max(len(maps), 1))
    rows = math.ceil(max(len(maps), 1) / settings.picture_columns)
    if not maps:
        axes = figure.add_subplot(1, 1, 1)
        axes.text(0.5, 0.5, "Nobody has said anything here yet.", ha="center", va="center")
        axes.set_axis_off()
    for index, speaker in enumerate(maps):
        _panel(figure.add_subplot(rows, columns, index + 1), speaker, settings)
    figure.subplots_adjust(left=0.02, right=0.98, top=0.95, bottom=0.03, wspace=0.08, hspace=0.18)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        figure.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()


def _panel(axes, speaker: SpeakerMap, settings: DigestSettings) -> None:  # type: ignore[no-untyped-def]
    families = list(font_families())
    points, numbers = speaker.points, speaker.numbers
    noise = numbers == 0
    axes.scatter(points[noise, 0], points[noise, 1], s=10, c=NOISE_COLOUR, linewidths=0)
    for order, (number, summary) in enumerate(speaker.labels):
        colour = PALETTE[order % len(PALETTE)]
        mine = numbers == number
        axes.scatter(points[mine, 0], points[mine, 1], s=22, c=colour, linewidths=0)
        x, y = points[mine].mean(axis=0)
        axes.annotate(
            f"{number}. {shorten(summary, settings.label_chars)}",
            (x, y),
            fontsize=8,
            family=families,
            ha="center",
            va="bottom",
            xytext=(0, 6),
            textcoords="offset points",
            bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": colour, "alpha": 0.85},
        )
    axes.set_title(speaker.title, fontsize=10, family=families)
    axes.set_xticks([])
    axes.set_yticks([])
    if len(points) == 0:
        axes.text(0.5, 0.5, "no thoughts", ha="center", va="center", transform=axes.transAxes)
