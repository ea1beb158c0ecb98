"""What the terminal writes is never lost or misnamed, and every path it cannot write is named.

Digest files are named from channels (bounded, unique per channel) and a digest is recorded only
once its files are written; an export goes whole to its path or not at all, and a stream path
(a FIFO, ``/dev/stdout``) is written through, never replaced; a read-only data folder still shows
preconceptions; two commands writing into one data folder at once take turns instead of refusing
messages.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from awai_engine.settings import Settings
from bots.terminal.cli import main
from bots.terminal.outputs import MAX_STEM_BYTES, file_stem
from bots.terminal.writing import WRITER_LOCK
from storage.file_lock import locked
from storage.store import AwaiStore
from tests.test_bad_input_cli import full_disk, read_only

LINES = [
    {"id": f"m{i}", "speaker": ("Ann", "Bo")[i % 2], "text": text, "ts": 1772442000 + 60 * i}
    for i, text in enumerate(
        [
            "The battery drains overnight.",
            "Since the last update?",
            "Yes, the battery drain started Tuesday.",
            "Is it the sync job again?",
            "The overnight battery drain is the top complaint.",
            "Maybe the sync job runs too often.",
        ]
    )
]


def _transcript(path: Path, lines: list[dict[str, object]] = LINES) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


class Awai:
    def __init__(self, data: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.data, self.capsys = data, capsys

    def __call__(self, *argv: str) -> tuple[int, str]:
        code = main(["--data-dir", str(self.data), *argv])
        captured = self.capsys.readouterr()
        said = " ".join((captured.out + captured.err).split())
        assert "Traceback" not in said
        return code, said

    def last_digest(self, channel: str) -> object:
        store = AwaiStore.open(Settings(data_dir=self.data, _env_file=None))  # type: ignore[call-arg]
        try:
            return store.schemas.last_digest(channel)
        finally:
            store.close()


@pytest.fixture
def awai(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Awai:
    return Awai(tmp_path / "data", capsys)


def test_file_names_from_channels_are_readable_bounded_and_unique_per_channel() -> None:
    assert file_stem("terminal:local:team") == "team"
    japanese = {file_stem("terminal:local:開発"), file_stem("terminal:local:営業")}
    assert japanese == {"開発", "営業"}
    lookalikes = ["terminal:local:a b", "terminal:local:a/b", "terminal:local:a-b", "slack:T1:a-b"]
    assert len({file_stem(channel) for channel in lookalikes}) == len(lookalikes)
    long = file_stem("terminal:local:" + "長" * 300)
    assert len(long.encode("utf-8")) <= MAX_STEM_BYTES + 9 and long.startswith("長")
    assert file_stem("terminal:local:" + "長" * 300) != file_stem("terminal:local:" + "長" * 301)
    assert file_stem("terminal:local:...") != file_stem("terminal:local:..")


def test_file_names_of_channels_differing_only_in_case_differ_where_names_ignore_case() -> None:
    stems = [file_stem(f"terminal:local:{name}") for name in ("team", "Team", "TEAM")]
    assert stems[0] == "team" and stems[1].startswith("Team-")
    assert len({stem.casefold() for stem in stems}) == 3, stems


def test_digests_of_channels_named_in_japanese_or_at_length_each_write_their_own_files(
    awai: Awai, tmp_path: Path
) -> None:
    transcript = _transcript(tmp_path / "chat.jsonl")
    out = tmp_path / "digests"
    channels = ["開発", "営業", "x" * 300]
    for channel in channels:
        assert awai("ingest", str(transcript), "--channel", channel)[0] == 0
        code, said = awai("digest", channel, "--out", str(out))
        assert code == 0, said
    written = sorted(path.name for path in out.iterdir())
    assert len(written) == 2 * len(channels)
    assert {"開発-digest.md", "営業-digest.md", "開発-digest.png"} <= set(written)
    for channel in channels:
        markdown = out / f"{file_stem(f'terminal:local:{channel}')}-digest.md"
        assert channel[:20] in markdown.read_text(encoding="utf-8")


def test_a_digest_that_cannot_be_written_names_the_path_and_is_not_recorded(
    awai: Awai, tmp_path: Path
) -> None:
    assert awai("ingest", str(_transcript(tmp_path / "chat.jsonl")), "--channel", "team")[0] == 0
    blocked = tmp_path / "blocked"
    (blocked / "team-digest.md").mkdir(parents=True)  # a folder named like the output
    code, said = awai("digest", "team", "--out", str(blocked))
    assert code == 2
    assert f"Cannot write {blocked / 'team-digest.md'}: a folder has that name" in said
    assert awai.last_digest("terminal:local:team") is None, "nobody received it"

    (tmp_path / "a-file").write_text("not a folder")
    code, said = awai("digest", "team", "--out", str(tmp_path / "a-file"))
    assert code == 2
    assert f"cannot write to {tmp_path / 'a-file'}: it is a file; give a folder" in said
    assert awai.last_digest("terminal:local:team") is None

    code, said = awai("digest", "team", "--out", str(tmp_path / "good"))
    assert code == 0, said
    assert awai.last_digest("terminal:local:team") is not None


@pytest.mark.parametrize(
    ("out", "says"),
    [
        ("a-file/backup.jsonl", "Not a directory ({base}/a-file is a file, not a folder)"),
        ("a-folder", "a folder has that name"),
        ("missing/backup.jsonl", "(the folder {base}/missing does not exist)"),
    ],
)
def test_an_export_path_that_cannot_be_written_is_named(
    awai: Awai, tmp_path: Path, out: str, says: str
) -> None:
    assert awai("ingest", str(_transcript(tmp_path / "chat.jsonl")), "--channel", "team")[0] == 0
    (tmp_path / "a-file").write_text("not a folder")
    (tmp_path / "a-folder").mkdir()
    before = sorted(tmp_path.rglob("*"))
    code, said = awai("export", "team", "--out", str(tmp_path / out))
    assert code == 2
    assert f"Cannot write {tmp_path / out}" in said
    assert says.format(base=tmp_path) in said
    assert sorted(tmp_path.rglob("*")) == before, "nothing half-written is left"


def test_an_export_onto_a_full_disk_says_so_and_leaves_no_half_file(
    awai: Awai, tmp_path: Path
) -> None:
    assert awai("ingest", str(_transcript(tmp_path / "chat.jsonl")), "--channel", "team")[0] == 0
    with full_disk(tmp_path / "disk") as disk:
        code, said = awai("export", "team", "--out", str(disk / "backup.jsonl"))
        left = sorted(path.name for path in disk.iterdir())
    assert code == 2
    assert f"Cannot write {disk / 'backup.jsonl'}: No space left on device" in said
    assert left == ["filler"]


def test_an_export_to_a_stream_is_written_through_and_the_stream_stays(
    awai: Awai, tmp_path: Path
) -> None:
    assert awai("ingest", str(_transcript(tmp_path / "chat.jsonl")), "--channel", "team")[0] == 0
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    code, said = awai("export", "team", "--out", str(fifo))
    reader.join(timeout=60)
    assert code == 0, said
    assert [json.loads(line)["id"] for line in received[0].splitlines()] == [
        line["id"] for line in LINES
    ]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_an_export_to_stdout_redirected_to_a_file_is_appended_there(
    awai: Awai, tmp_path: Path
) -> None:
    assert awai("ingest", str(_transcript(tmp_path / "chat.jsonl")), "--channel", "team")[0] == 0
    redirected = tmp_path / "out.jsonl"
    redirected.write_bytes(b"")
    command = [sys.executable, "-m", "bots.terminal.cli", "--data-dir", str(awai.data)]
    with redirected.open("ab") as stdout:
        stdout.write(b"printed before\n")
        stdout.flush()
        done = subprocess.run(
            [*command, "export", "team", "--out", "/dev/stdout"],
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=600,
        )
    assert done.returncode == 0, done.stderr
    first, *exported = redirected.read_bytes().splitlines()
    assert first == b"printed before"
    assert [json.loads(line)["id"] for line in exported] == [line["id"] for line in LINES]


def test_an_export_through_a_link_replaces_the_linked_file_and_keeps_the_link(
    awai: Awai, tmp_path: Path
) -> None:
    assert awai("ingest", str(_transcript(tmp_path / "chat.jsonl")), "--channel", "team")[0] == 0
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "team.jsonl"
    target.write_text("old\n", encoding="utf-8")
    link = tmp_path / "latest.jsonl"
    link.symlink_to(target)
    code, said = awai("export", "team", "--out", str(link))
    assert code == 0, said
    assert link.is_symlink() and link.resolve() == target
    assert [json.loads(line)["id"] for line in target.read_text().splitlines()] == [
        line["id"] for line in LINES
    ]
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "chat.jsonl",
        "data",
        "latest.jsonl",
        "real",
    ]


def test_a_read_only_data_folder_shows_preconceptions_never_summarised_before(
    awai: Awai, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from awai_engine.samples import SAMPLES

    assert awai("ingest", str(SAMPLES["en"].path), "--channel", "launch")[0] == 0
    with read_only(awai.data) as folder:
        code, said = Awai(folder, capsys)("schemas", "launch")
    assert code == 0, said
    assert "preconception" in said and "Carla" in said


def test_a_second_import_waits_for_the_first_before_opening_the_data_folder(
    awai: Awai, tmp_path: Path
) -> None:
    transcript = _transcript(tmp_path / "chat.jsonl")
    held, release = threading.Event(), threading.Event()

    def first_command() -> None:
        with locked(awai.data / WRITER_LOCK):
            held.set()
            release.wait(timeout=60)

    holder = threading.Thread(target=first_command)
    holder.start()
    held.wait(timeout=60)
    threading.Timer(2.0, release.set).start()
    started = time.monotonic()
    code, said = awai("import", str(transcript), "--channel", "team")
    holder.join()
    assert code == 0, said
    assert time.monotonic() - started >= 2.0
    assert f"Another awai command is writing into {awai.data}: waiting" in said
    assert f"{len(LINES)} added" in said


@pytest.mark.slow
def test_two_imports_of_different_files_into_an_existing_channel_refuse_nothing(
    tmp_path: Path,
) -> None:
    def lines(prefix: str, count: int) -> list[dict[str, object]]:
        return [
            {
                "id": f"{prefix}{i}",
                "speaker": "Ann",
                "text": f"Point {prefix}{i} on {i % 13}.",
                "ts": i,
            }
            for i in range(count)
        ]

    command = [sys.executable, "-m", "bots.terminal.cli", "--data-dir", str(tmp_path / "data")]
    seed = _transcript(tmp_path / "seed.jsonl", lines("s", 5))
    subprocess.run([*command, "import", str(seed), "--channel", "two"], check=True)
    imports = [
        subprocess.Popen(
            [
                *command,
                "import",
                str(_transcript(tmp_path / f"{prefix}.jsonl", lines(prefix, 300))),
                "--channel",
                "two",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for prefix in ("a", "b")
    ]
    said = [process.communicate(timeout=900)[0] for process in imports]
    assert [process.returncode for process in imports] == [0, 0], said
    assert all("300 added" in each and "0 refused" in each for each in said), said
    assert not any("Traceback" in each or "Error finding id" in each for each in said), said
