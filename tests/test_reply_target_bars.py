"""The bars are the median over seeds of the bars each network gets, and the fitted file
records what it was built with.

Why these tests: one network's own-line bar is the plateau's highest bar, and the accuracy there
is flat within a message or two, so a refit with another seed moved it 0.52-0.72 (session 21).
These read the rules on made-up accuracy curves and bars and the file's provenance on made-up
files; nothing of ../shared is read and nothing is fitted.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np

from awai_engine.reply_target.built_with import LIBRARIES, differences, installed_versions
from awai_engine.reply_target.model import fitted_model
from bench.fit_reply_target import (
    Bars,
    built_with,
    highest_kept,
    left_out_ranges,
    median_bars,
    nearest_to,
    rebuild_note,
)
from bots.terminal.reply_model_status import built_with_note

BARS = np.round(np.arange(0.30, 0.91, 0.01), 2)


def _plateau(end: float, level: float = 0.70) -> np.ndarray:
    """A file's accuracy: flat at ``level`` up to ``end``, then falling a point per step."""
    return np.where(BARS - end <= 0, level, level - (BARS - end))


def test_one_networks_own_bar_is_the_highest_every_file_keeps() -> None:
    accuracies = np.vstack([_plateau(0.80), _plateau(0.40)])
    assert highest_kept(BARS, accuracies, 0.005) == 0.40  # the second file falls after 0.40


def test_a_dip_near_the_plateaus_end_moves_one_networks_bar_far() -> None:
    flat = _plateau(0.70)
    dipped = flat.copy()
    dipped[(BARS >= 0.60) & (BARS <= 0.70)] -= 0.006  # one message of some 600, near the end
    assert [highest_kept(BARS, a[None, :], 0.005) for a in (flat, dipped)] == [0.70, 0.59]


# the bars seeds 0-7 of the session 21 tables got, one network each
SESSION_21 = [
    Bars(0.34, 0.63, 0.54),
    Bars(0.35, 0.53, 0.67),
    Bars(0.41, 0.54, 0.52),
    Bars(0.34, 0.55, 0.62),
    Bars(0.39, 0.53, 0.52),
    Bars(0.34, 0.53, 0.63),
    Bars(0.34, 0.59, 0.66),
    Bars(0.32, 0.56, 0.72),
]


def test_the_bars_are_each_bars_median_over_seeds() -> None:
    assert median_bars(SESSION_21) == Bars(0.34, 0.545, 0.625)
    assert median_bars(SESSION_21[:3]) == Bars(0.35, 0.54, 0.54)  # an odd count: a seed's own


def test_leaving_one_seed_out_moves_the_medians_less_than_one_seed_moves_its_bars() -> None:
    ranges = left_out_ranges(SESSION_21)
    assert ranges == {"near": (0.34, 0.34), "far": (0.54, 0.55), "own": (0.62, 0.63)}
    assert all(round(high - low, 3) <= 0.01 for low, high in ranges.values())


def test_the_network_shipped_is_the_one_whose_own_bars_the_medians_nearly_are() -> None:
    # seed 3's own bars 0.34 / 0.55 / 0.62 are within 0.005 of the medians; seed 0's far bar is
    # 0.085 above them
    assert nearest_to(SESSION_21, median_bars(SESSION_21)) == 3
    assert nearest_to([Bars(0.3, 0.5, 0.6), Bars(0.3, 0.5, 0.6)], Bars(0.3, 0.5, 0.6)) == 0


def _raw(**extra: object) -> dict[str, object]:
    return {
        "mean": [0.0, 0.0],
        "scale": [1.0, 1.0],
        "layers": [
            {"weights": [[1.0], [0.5]], "bias": [0.0]},
        ],
        "confident": 0.3,
        "far_confident": 0.5,
        "far_back": 10,
        **extra,
    }


def test_a_model_file_without_build_versions_still_loads() -> None:
    model = fitted_model(_raw(), width=2)
    assert model.built_with == ()
    assert built_with_note(dict(model.built_with)) == "its build versions are not recorded"


def test_the_build_versions_are_read_and_compared_with_the_installed_ones() -> None:
    here = installed_versions()
    model = fitted_model(_raw(built_with={**here, "tables": "abc"}), width=2)
    assert dict(model.built_with)["tables"] == "abc"
    assert built_with_note(dict(model.built_with)) == "built with the versions installed here"
    other = {**here, "numpy": "0.0.1"}
    assert differences(other, here) == [f"numpy 0.0.1 → {here['numpy']}"]
    assert "built with other versions (numpy 0.0.1" in built_with_note(other)


def _file(**built_with: str) -> bytes:
    return json.dumps({"weights": [1.0], "built_with": built_with}).encode()


def test_a_rebuild_says_whether_it_is_identical_and_why_not() -> None:
    here = {**installed_versions(), "tables": "abc"}
    written = _file(**here)
    assert rebuild_note(written, written) == "identical"
    assert rebuild_note(None, written) == "none ships"
    assert "records no build versions" in rebuild_note(b'{"weights": [2.0]}', written)
    older = _file(**{**here, "scikit-learn": "1.0"})
    assert f"other versions (scikit-learn 1.0 → {here['scikit-learn']})" in rebuild_note(
        older, written
    )
    assert "other feature tables" in rebuild_note(_file(**{**here, "tables": "old"}), written)
    moved = json.dumps({"weights": [2.0], "built_with": here}).encode()
    assert "the script or its defaults changed" in rebuild_note(moved, written)


def test_a_fit_records_the_installed_versions_and_the_tables_key() -> None:
    encoder = SimpleNamespace(model_name="minilm", settings=SimpleNamespace(runtime="onnx"))
    recorded = built_with(encoder)  # type: ignore[arg-type]
    assert {k: recorded[k] for k in LIBRARIES} == installed_versions()
    assert len(recorded["tables"]) == 12
    other = SimpleNamespace(model_name="e5", settings=SimpleNamespace(runtime="onnx"))
    assert built_with(other)["tables"] != recorded["tables"]  # type: ignore[arg-type]
