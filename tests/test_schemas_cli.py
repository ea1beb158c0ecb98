"""The terminal commands for schemas: recluster, schemas, digest and forget, end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from awai_engine.samples import SAMPLES
from bots.terminal.cli import main


@pytest.mark.slow
def test_recluster_schemas_digest_and_forget_from_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def awai(*args: str) -> int:
        return main(["--data-dir", str(tmp_path / "data"), *args])

    assert awai("ingest", str(SAMPLES["en"].path), "--channel", "launch") == 0
    assert awai("recluster") == 0
    said = capsys.readouterr().out
    assert said.startswith("launch: ") and "terminal:local:" not in said  # as the user named it
    assert awai("recluster") == 0
    assert "No channel has new thoughts" in capsys.readouterr().out

    assert awai("schemas", "launch", "--speaker", "carla", "--as-of", "m046", "--json") == 0
    (carla,) = json.loads(capsys.readouterr().out)
    # The run in force for m046: her first F(n) thoughts before it, stored by the re-clustering.
    assert carla["speaker_name"] == "Carla" and carla["stored"]
    assert 0 < carla["clustered"] <= carla["thoughts"]
    assert carla["schemas"]
    assert all(int(s["as_of_message_id"][1:]) < 46 for s in carla["schemas"])
    assert awai("schemas", "launch", "--speaker", "carla", "--as-of", "m046") == 0
    said = " ".join(capsys.readouterr().out.split())
    assert said.startswith("Carla: ") and " thoughts before message m046, " in said
    assert "as the last re-clustering grouped them" in said  # stored, as the JSON says

    out = tmp_path / "digests"
    assert awai("digest", "launch", "--out", str(out)) == 0
    markdown = (out / "launch-digest.md").read_text(encoding="utf-8")
    assert "## Carla:" in markdown
    assert (out / "launch-digest.png").read_bytes().startswith(b"\x89PNG")

    assert awai("forget", "launch", "--speaker", "Carla") == 1  # no terminal to confirm on
    assert "add --yes" in capsys.readouterr().err
    assert awai("forget", "launch", "--speaker", "Carla", "--yes") == 0
    said_by_carla = sum(
        json.loads(line)["speaker"] == "Carla"
        for line in SAMPLES["en"].path.read_text(encoding="utf-8").splitlines()
    )
    assert f"forgot Carla: {said_by_carla} messages" in capsys.readouterr().out
    assert awai("schemas", "launch", "--speaker", "Carla") == 2
    assert "nobody called 'Carla'" in capsys.readouterr().err
    assert awai("digest", "nowhere", "--out", str(out)) == 2
    assert 'No channel "nowhere"' in capsys.readouterr().err
    # A mistyped channel leaves no folder behind.
    assert awai("digest", "nowhere", "--out", str(tmp_path / "never")) == 2
    assert not (tmp_path / "never").exists()
