"""Recall's admission gate: a learned chance that an item is in the message's conversation."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from awai_engine.association.admission import (
    FEATURE_NAMES,
    MODEL_FILE,
    AdmissionModelError,
    admission_model,
)
from awai_engine.association.settings import RecallRules
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from tests.factories import utterance

CHANNEL = "terminal:local:test"
# Two conversations side by side in one room, each addressing its own people.
LINES = [
    ("m000", "The upload job fails on large files.", "cy", ()),
    ("m001", "anyone know a good pizza place near the office?", "eve", ()),
    ("m002", "eve: the one on the corner makes great pizza", "fay", ("eve",)),
    ("m003", "fay: thanks, I will try the corner pizza", "eve", ("fay",)),
    ("m004", "cy: which runner does the upload job use?", "dee", ("cy",)),
    ("m005", "dee: the big one, with the large disk", "cy", ("dee",)),
    ("m006", "cy: and it still fails there?", "dee", ("cy",)),
    ("m007", "dee: yes, every time since monday", "cy", ("dee",)),
    ("m008", "cy: did anyone change the runner config?", "dee", ("cy",)),
    ("m009", "dee: so the large files break the upload job?", "cy", ("dee",)),
]


def recalled(runtime: Runtime, message_id: str) -> list[str]:
    """Recall's own items, in order (the reply-target scorer's additions aside)."""
    context = runtime.engine.context(CHANNEL, message_id, EVERYTHING)
    return [a.source.message_id for a in context.associations if a.reason != "reply"]


def test_the_shipped_admission_model_reads() -> None:
    model = admission_model()
    assert model.weights.shape == (len(FEATURE_NAMES),)


@pytest.mark.slow
def test_the_gate_only_leaves_items_out_keeping_their_order_and_more_under_a_higher_bar(
    make_runtime: Callable[..., Runtime],
) -> None:
    # Recall picks every earlier line, whichever conversation it is in: only the gate judges.
    open_to_all = {"theta_0": -1.0, "slope": 0.0, "theta_max": -1.0}
    messages = [
        utterance(m, text, speaker, ts=float(k)).model_copy(update={"addressees": to})
        for k, (m, text, speaker, to) in enumerate(LINES)
    ]
    found: dict[float | None, list[str]] = {}
    for bar in (None, 0.0, 0.5, 0.8):
        runtime = make_runtime(
            f"bar-{bar}",
            association={
                **open_to_all,
                "rules": RecallRules(
                    exchange_window=0,  # no one is in an exchange…
                    conversation_z=None,
                    admission_bar=bar,
                    admission_alone=True,  # …and the gate judges everyone's items
                ),
            },
        )
        runtime.engine.ingest(messages)
        found[bar] = recalled(runtime, "m009")
    assert found[None], "without the gate recall brings back earlier lines"
    assert found[0.0] == found[None]  # a bar of 0 admits every item
    for lower, higher in ((None, 0.5), (0.5, 0.8)):
        assert found[higher] == [m for m in found[lower] if m in found[higher]]
    assert {"m001", "m002", "m003"} <= set(found[None])  # the pizza talk, by meaning alone…
    assert set(found[0.5]) == {"m000", "m004"}  # …is another conversation than the upload job

    # By default the gate leaves alone a speaker in no exchange: what they recall reaches back.
    unjudged = make_runtime(
        "unjudged",
        association={
            **open_to_all,
            "rules": RecallRules(exchange_window=0, conversation_z=None, admission_bar=0.8),
        },
    )
    unjudged.engine.ingest(messages)
    assert recalled(unjudged, "m009") == found[None]


def write(path: Path, **changes: object) -> Path:
    raw = json.loads(MODEL_FILE.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**raw, **changes}), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        ("missing", "is missing"),
        ("not json", "cannot be read"),
        ("other format", "format 'other/1'"),
        ("other features", "its features are not the ones"),
        ("short weights", "its numbers do not fit its features"),
        ("infinite scale", "its numbers do not fit its features"),
    ],
)
def test_a_missing_or_damaged_admission_model_is_a_clear_error_naming_the_file(
    tmp_path: Path, damage: str, said: str
) -> None:
    path = tmp_path / "admission.json"
    if damage == "not json":
        path.write_text("{not json", encoding="utf-8")
    elif damage == "other format":
        write(path, format="other/1")
    elif damage == "other features":
        write(path, features=["distance"])
    elif damage == "short weights":
        write(path, weights=[0.5])
    elif damage == "infinite scale":
        write(path, scale=[float("inf")] * len(FEATURE_NAMES))
    with pytest.raises(AdmissionModelError) as refused:
        admission_model(path)
    assert str(path) in str(refused.value) and said in str(refused.value)
    assert "bench.fit_admission" in str(refused.value)
