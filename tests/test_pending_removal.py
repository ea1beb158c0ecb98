"""A forget interrupted late is never reported as "ok": ``awai doctor`` counts it as a removal
unfinished (exit 1) until it is finished, and a command that only looks (``awai schemas``)
finishes it before showing anything, so nothing of the person is shown or left on disk.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bots.runtime import Runtime
from bots.terminal.cli import main
from tests.test_erasure import CHANNEL, PERSISTED, SPEAKER, WORDS, filled, hits


@pytest.fixture
def interrupted(make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch) -> Runtime:
    """A forget whose messages went and whose scrub of the files never ran (killed late)."""
    runtime = make_runtime(**PERSISTED)
    filled(runtime)
    monkeypatch.setattr(runtime.store, "finish_erasures", lambda channels=None: 0)
    runtime.schemas.forget_speaker(CHANNEL, SPEAKER)
    runtime.close()
    assert hits(runtime.settings.data_dir, SPEAKER)  # Chroma's log still holds the id
    return runtime


def doctor_row(data_dir: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(["--data-dir", data_dir, "doctor"])
    out = capsys.readouterr().out
    [row] = [line for line in out.split("\n") if line.startswith(f"│ {CHANNEL} ")]
    return code, [cell.strip() for cell in row.strip("│").split("│")]


def test_doctor_reports_an_unfinished_removal_until_it_is_finished(
    interrupted: Runtime, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    data_dir = str(interrupted.settings.data_dir)

    code, row = doctor_row(data_dir, capsys)

    assert code == 1 and row[-2] == "needs repair" and row[-3] == "1"  # removals unfinished
    assert main(["--data-dir", data_dir, "doctor", "--repair"]) == 0
    assert f"Finished forgetting {SPEAKER}" in capsys.readouterr().out
    code, row = doctor_row(data_dir, capsys)
    assert code == 0 and row[-2] == "ok" and row[-3] == "0"
    assert hits(interrupted.settings.data_dir, WORDS, SPEAKER) == []


def test_a_command_that_only_looks_finishes_an_unfinished_removal_first(
    interrupted: Runtime, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = interrupted.settings.data_dir

    assert main(["--data-dir", str(data_dir), "schemas", CHANNEL, "--json"]) == 0

    assert SPEAKER not in capsys.readouterr().out
    assert hits(data_dir, WORDS, SPEAKER) == []
