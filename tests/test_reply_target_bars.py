"""The fitted file is the average of networks differing in their seed, its bars read by their
rules, and it records what it was built with.

Why these tests: one network's own-line bar is the plateau's highest bar, and the accuracy there
is flat within a message or two, so a refit with another seed moved it 0.52-0.72 (session 21);
the average of eight networks depends on no single seed. These read the rules on made-up
accuracy curves, the average on made-up networks and the file's provenance on made-up files;
nothing of ../shared is read and nothing is fitted.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from awai_engine.reply_target.built_with import LIBRARIES, differences, installed_versions
from awai_engine.reply_target.model import fitted_model
from bench.fit_reply_target import (
    averaged,
    built_with,
    highest_kept,
    probabilities,
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


def _network(seed: int, mean: np.ndarray, scale: np.ndarray) -> tuple[dict, np.ndarray, np.ndarray]:
    """A made-up one-hidden-layer network on three features, as ``fit`` returns one."""
    rng = np.random.default_rng(seed)
    layers = [
        {"weights": rng.normal(size=(3, 4)).tolist(), "bias": rng.normal(size=4).tolist()},
        {"weights": rng.normal(size=(4, 1)).tolist(), "bias": rng.normal(size=1).tolist()},
    ]
    return {"layers": layers, "epochs_run": 10 + seed, "converged": True}, mean, scale


def _logits(network: tuple[dict, np.ndarray, np.ndarray], x: np.ndarray) -> np.ndarray:
    layers, mean, scale = network
    (w1, b1), (w2, b2) = (
        (np.asarray(one["weights"]), np.asarray(one["bias"])) for one in layers["layers"]
    )
    return (np.maximum(((x - mean) / scale) @ w1 + b1, 0.0) @ w2 + b2)[:, 0]


def test_the_file_is_one_network_whose_logit_is_the_mean_of_the_networks_logits() -> None:
    mean, scale = np.array([0.1, -0.2, 0.3]), np.array([1.0, 2.0, 0.5])
    networks = [_network(seed, mean, scale) for seed in range(3)]
    x = np.random.default_rng(9).normal(size=(20, 3))
    expected = 1.0 / (1.0 + np.exp(-np.mean([_logits(n, x) for n in networks], axis=0)))
    layers, got_mean, got_scale = averaged(networks)
    assert np.array_equal(got_mean, mean) and np.array_equal(got_scale, scale)
    assert np.array(layers["layers"][0]["weights"]).shape == (3, 12)  # their units side by side
    assert layers["epochs_run"] == [10, 11, 12] and layers["converged"]
    assert np.allclose(probabilities(layers, mean, scale, x), expected, rtol=0, atol=1e-12)


def test_networks_fitted_on_other_rows_are_not_averaged() -> None:
    mean, scale = np.zeros(3), np.ones(3)
    with pytest.raises(ValueError, match="standardisations differ"):
        averaged([_network(0, mean, scale), _network(1, mean + 1.0, scale)])


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
