"""``awai forget`` removes the person meant and no one else: a name that could be two people is
refused with both and their ids, and nothing is removed until one is named exactly.

Each test stores a real transcript through the terminal, forgets, and compares the channel's
export before and after: what is refused leaves every stored line; what is done removes exactly
one speaker's lines.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from bots.terminal.cli import main

NFC = unicodedata.normalize("NFC", "José")
NFD = unicodedata.normalize("NFD", "José")


class Channel:
    """A channel stored from ``lines`` through ``awai ingest``, in a data folder of its own."""

    def __init__(self, folder: Path, capsys: pytest.CaptureFixture[str], lines: list[dict]) -> None:
        self.folder, self.capsys = folder, capsys
        path = folder / "chat.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        assert self.awai("ingest", str(path), "--channel", "chat")[0] == 0

    def awai(self, *argv: str) -> tuple[int, str, str]:
        code = main(["--data-dir", str(self.folder / "data"), *argv])
        captured = self.capsys.readouterr()
        assert "Traceback" not in captured.err
        return code, captured.out, " ".join(captured.err.split())

    def speakers(self) -> list[str]:
        """Who said each stored message, by id, in channel order."""
        out = self.folder / "export.jsonl"
        assert self.awai("export", "chat", "--out", str(out))[0] == 0
        return [
            json.loads(line).get("speaker_id", json.loads(line)["speaker"])
            for line in out.read_text(encoding="utf-8").splitlines()
        ]


def said(number: int, speaker: str, speaker_id: str | None = None) -> dict[str, object]:
    line: dict[str, object] = {
        "id": f"m{number}",
        "speaker": speaker,
        "text": f"Message {number} about the launch plan.",
        "ts": 1772442000 + 60 * number,
    }
    if speaker_id is not None:
        line["speaker_id"] = speaker_id
    return line


@pytest.fixture
def one_name_is_anothers_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Channel:
    """Ann's display name is "U1"; Bob's platform id is "U1"."""
    return Channel(
        tmp_path,
        capsys,
        [said(n, *(("U1", "W9") if n % 2 else ("Bob", "U1"))) for n in range(1, 9)],
    )


def test_a_name_that_is_one_persons_name_and_anothers_id_is_refused_with_both(
    one_name_is_anothers_id: Channel,
) -> None:
    channel = one_name_is_anothers_id
    before = channel.speakers()

    code, out, said_ = channel.awai("forget", "chat", "--speaker", "U1", "--yes")

    assert code == 2 and "forgot" not in out
    assert "could be any of 2 speakers" in said_
    assert "'U1' (id 'W9')" in said_ and "'Bob' (id 'U1')" in said_
    assert "--speaker-id" in said_
    assert channel.speakers() == before  # nothing removed


def test_an_exact_id_forgets_that_person_only(one_name_is_anothers_id: Channel) -> None:
    channel = one_name_is_anothers_id

    code, out, _ = channel.awai("forget", "chat", "--speaker-id", "U1", "--yes")

    assert code == 0 and "forgot U1: 4 messages" in out
    assert channel.speakers() == ["W9"] * 4


def test_a_name_written_in_two_unicode_forms_matches_both_speakers_and_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    channel = Channel(
        tmp_path, capsys, [said(n, NFC if n % 2 else NFD) for n in range(1, 7)] + [said(7, "Kim")]
    )
    before = channel.speakers()

    code, _, said_ = channel.awai("forget", "chat", "--speaker", NFC, "--yes")

    assert code == 2 and "could be any of 2 speakers" in said_
    assert "'Jos\\xe9'" in said_ or "'José'" in said_
    assert "'Jose\\u0301'" in said_  # the decomposed one shown so that it can be told apart
    assert channel.speakers() == before

    code, out, _ = channel.awai("forget", "chat", "--speaker-id", NFD, "--yes")
    assert code == 0 and "3 messages" in out
    assert sorted(set(channel.speakers())) == sorted({NFC, "Kim"})


def test_a_name_that_names_one_speaker_still_forgets_them_in_any_case_or_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    channel = Channel(tmp_path, capsys, [said(n, NFD if n % 2 else "Kim") for n in range(1, 7)])

    code, out, _ = channel.awai("forget", "chat", "--speaker", NFC.upper(), "--yes")

    assert code == 0 and "3 messages" in out
    assert channel.speakers() == ["Kim"] * 3


def test_an_id_no_one_has_is_refused_naming_the_ids(one_name_is_anothers_id: Channel) -> None:
    code, _, said_ = one_name_is_anothers_id.awai("forget", "chat", "--speaker-id", "u1", "--yes")

    assert code == 2 and "no speaker has the id 'u1'" in said_ and "'U1', 'W9'" in said_
