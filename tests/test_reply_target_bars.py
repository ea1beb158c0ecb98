"""The own-line bar is the middle of the plateau of bars that cost no accuracy, and the fitted
file records what it was built with.

Why these tests: the bar used to be the plateau's highest bar, and the accuracy there is flat
within a message or two, so a refit with another seed moved it 0.52-0.76 (session 20). These
read the rule on made-up accuracy curves and the file's provenance on made-up files; nothing of
../shared is read and nothing is fitted.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np

from awai_engine.reply_target.built_with import LIBRARIES, differences, installed_versions
from awai_engine.reply_target.model import fitted_model
from bench.fit_reply_target import built_with, plateau_middle, rebuild_note
from bots.terminal.reply_model_status import built_with_note

BARS = np.round(np.arange(0.30, 0.91, 0.01), 2)


def _plateau(end: float, level: float = 0.70) -> np.ndarray:
    """A file's accuracy: flat at ``level`` up to ``end``, then falling a point per step."""
    return np.where(BARS - end <= 0, level, level - (BARS - end))


def test_the_bar_is_the_middle_of_the_plateau_not_its_end() -> None:
    accuracies = np.vstack([_plateau(0.70), _plateau(0.70, level=0.72)])
    # kept: 0.30 up to 0.70 (0.705 falls short at 0.71), 41 bars, the 21st in the middle
    assert plateau_middle(BARS, accuracies, 0.005) == 0.50


def test_a_dip_near_the_plateaus_end_moves_the_middle_half_as_far_as_the_end() -> None:
    flat = _plateau(0.70)
    dipped = flat.copy()
    dipped[(BARS >= 0.60) & (BARS <= 0.70)] -= 0.006  # one message of some 600, near the end
    middles = [plateau_middle(BARS, a[None, :], 0.005) for a in (flat, dipped)]
    ends = [BARS[a >= a[0] - 0.005].max() for a in (flat, dipped)]  # the rule before
    assert ends == [0.70, 0.59]
    assert middles == [0.50, 0.44]


def test_every_file_must_keep_its_accuracy() -> None:
    accuracies = np.vstack([_plateau(0.80), _plateau(0.40)])
    assert plateau_middle(BARS, accuracies, 0.005) == 0.35  # the second file's plateau, 0.30-0.40


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
