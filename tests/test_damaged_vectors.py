"""A vector index whose files a full disk cut short is rebuilt from the SQL record.

The real embedded Chroma writes a channel's index under the data folder (``header.bin``,
``data_level0.bin``, ``index_metadata.pickle`` once it holds enough vectors); a disk that fills
while Chroma flushes them leaves them truncated, and Chroma then fails on every later call
("Error deserializing pickle file", "Error loading hnsw index") or whenever vectors are read
("Error getting embedding"). Here the real files are truncated as a full disk does, and the
`awai` commands a person would run next must say what happened in one line, rebuild the index
from the stored messages, and leave every stored message and every reading as it was.
"""

from __future__ import annotations

import io
import json
import pickle
import shutil
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from bots.terminal.cli import main
from storage.hnsw_files import UnknownLayout, held_count, index_damage, segment_of
from storage.index_probe import probe_index
from storage.vectors import PERSIST_EVERY

SPEAKERS = ("Ann", "Bo", "Cy")
TOPICS = ("battery", "login", "sync", "charts", "release")
# Chroma 1.5 keeps a collection's vectors in its log until it holds PERSIST_EVERY (2,000); from
# then on the index files under the data folder are what it reads, so only then can a full disk
# hurt them.
MESSAGES = int(PERSIST_EVERY["hnsw:sync_threshold"])


def transcript_line(number: int) -> dict[str, object]:
    """One short message (short, so that rebuilding a thousand of them stays quick)."""
    return {
        "id": f"m{number}",
        "speaker": SPEAKERS[number % len(SPEAKERS)],
        "text": f"Note {number} on {TOPICS[number % len(TOPICS)]}.",
        "ts": 1772442000 + 60 * number,
    }


class Awai:
    """`awai` run in one data folder, with what it printed (stdout, and stderr on one line).

    Each test copies the stored folder to a path of its own before damaging it, so the damaged
    files are opened fresh, as by the next process: an embedded Chroma keeps an index it has
    opened in memory for the life of the process.
    """

    def __init__(self, data: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.data = data
        self.capsys = capsys

    def __call__(self, *argv: str) -> tuple[int, str, str]:
        code = main(["--data-dir", str(self.data), *argv])
        captured = self.capsys.readouterr()
        assert "Traceback" not in captured.err + captured.out
        return code, captured.out, " ".join(captured.err.split())

    def doctor(self, *options: str) -> tuple[int, dict[str, str]]:
        """``awai doctor``'s exit status and the channel's row, cell by column heading (the
        table shows only the columns some channel has)."""
        code, out, _ = self("doctor", *options)
        [heading] = [line for line in out.split("\n") if line.startswith("┃ channel ")]
        [row] = [line for line in out.split("\n") if line.startswith("│ chat ")]
        cells = [cell.strip() for cell in row.strip("│").split("│")]
        names = [cell.strip() for cell in heading.strip("┃").split("┃")]
        return code, dict(zip(names, cells, strict=True))

    def export(self, out: Path) -> bytes:
        code, _, said = self("export", "chat", "--out", str(out))
        assert code == 0, said
        return out.read_bytes()

    def index_file(self, name: str) -> Path:
        """A file of the channel's vector index, as Chroma wrote it under the data folder."""
        chroma = self.data / "chroma"
        with sqlite3.connect(chroma / "chroma.sqlite3") as connection:
            [(segment,)] = connection.execute(
                "SELECT s.id FROM segments s JOIN collections c ON s.collection = c.id"
                " WHERE s.scope = 'VECTOR'"
            ).fetchall()
        return chroma / segment / name


@dataclass(frozen=True)
class Stored:
    """A data folder holding one channel, with its transcript, its export and the reading of
    its last message but one, all taken before any damage."""

    data: Path
    transcript: Path
    messages: int
    export: bytes
    reading: dict[str, object]

    @property
    def read(self) -> str:
        return f"m{self.messages - 2}"

    def copy(self, folder: Path, capsys: pytest.CaptureFixture[str]) -> Awai:
        """`awai` on a copy of the folder, at a path of its own."""
        awai = Awai(folder / "data", capsys)
        shutil.copytree(self.data, awai.data)
        return awai


def store_channel(folder: Path, messages: int) -> Stored:
    path = folder / "chat.jsonl"
    path.write_text(
        "".join(json.dumps(transcript_line(n)) + "\n" for n in range(messages)), encoding="utf-8"
    )
    data, read = folder / "data", f"m{messages - 2}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "stdout", io.StringIO())
        assert main(["--data-dir", str(data), "read", str(path), "--message", read, "--json"]) == 0
        reading = json.loads(sys.stdout.getvalue())
    assert main(["--data-dir", str(data), "export", "chat", "--out", str(folder / "x.jsonl")]) == 0
    return Stored(data, path, messages, (folder / "x.jsonl").read_bytes(), reading)


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Stored:
    return store_channel(tmp_path_factory.mktemp("stored"), MESSAGES)


@pytest.fixture
def awai(stored: Stored, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Awai:
    return stored.copy(tmp_path, capsys)


@pytest.fixture(autouse=True)
def wide_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Room for the doctor's whole table (rich reads COLUMNS)."""
    monkeypatch.setenv("COLUMNS", "250")


def cut_read_model(awai: Awai) -> None:
    """The read model AWAI keeps beside the data cut short too: readings then need Chroma's
    vectors (while that file is whole, readings come from it, and Chroma is not read)."""
    [vectors] = (awai.data / "read-models").rglob("vectors")
    cut(vectors, vectors.stat().st_size // 2)


def cut(path: Path, kept_bytes: int) -> None:
    """What a write cut off by a full disk leaves: the file's first bytes only."""
    assert path.stat().st_size > kept_bytes
    with path.open("r+b") as handle:
        handle.truncate(kept_bytes)


NOTICE = (
    "The vector index of terminal:local:chat was damaged (cut short by a crash or a full disk,"
    f" or changed); rebuilt from the stored messages: {MESSAGES:,} thought(s)."
)


def one_more(tmp_path: Path) -> Path:
    path = tmp_path / "more.jsonl"
    path.write_text(json.dumps(transcript_line(MESSAGES)) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
def test_an_index_chroma_cannot_open_is_rebuilt_when_awai_starts_and_nothing_is_lost(
    awai: Awai, stored: Stored, tmp_path: Path
) -> None:
    damaged = awai.index_file("index_metadata.pickle")
    cut(damaged, 100)  # then every Chroma call fails: "Error deserializing pickle file"
    code, row = awai.doctor()
    assert code == 1 and row["vector index"] == "damaged" and row["state"] == "needs repair"

    code, _, said = awai("ingest", str(one_more(tmp_path)), "--channel", "chat")

    assert code == 0, said
    assert said.count(NOTICE) == 1, said
    assert "chat: 1 added, 0 edited, 0 unchanged, 0 refused" in said
    code, reading, said = awai("read", str(stored.transcript), "--message", stored.read, "--json")
    assert code == 0 and "vector index" not in said
    assert json.loads(reading) == stored.reading
    code, row = awai.doctor()
    assert code == 0 and row["vector index"] == "readable" and row["state"] == "ok"
    exported = awai.export(tmp_path / "after.jsonl").splitlines()
    assert exported[:-1] == stored.export.splitlines()
    assert json.loads(exported[-1])["id"] == f"m{MESSAGES}"
    assert not damaged.parent.exists()  # the damaged files (vectors too) left the data folder


@pytest.mark.slow
def test_vectors_that_cannot_be_read_back_are_rebuilt_by_the_ingest_that_needs_them(
    awai: Awai, stored: Stored, tmp_path: Path
) -> None:
    cut(awai.index_file("data_level0.bin"), 5000)  # counting still works; reading vectors fails
    cut_read_model(awai)
    code, row = awai.doctor()  # the doctor reads every vector
    assert code == 1 and row["vector index"] == "damaged"

    code, _, said = awai("ingest", str(one_more(tmp_path)), "--channel", "chat")

    assert code == 0, said
    assert said.count(NOTICE) == 1, said
    assert "chat: 1 added, 0 edited, 0 unchanged, 0 refused" in said
    code, row = awai.doctor()
    assert code == 0 and row["vector index"] == "readable" and row["state"] == "ok"
    assert awai.export(tmp_path / "after.jsonl").splitlines()[:-1] == stored.export.splitlines()


@pytest.mark.slow
def test_vectors_that_cannot_be_read_back_are_rebuilt_by_a_reading_which_says_so(
    awai: Awai, stored: Stored, tmp_path: Path
) -> None:
    cut(awai.index_file("data_level0.bin"), 5000)
    cut_read_model(awai)

    code, out, said = awai("read", str(stored.transcript), "--message", stored.read)

    assert code == 0, said
    assert (  # in the reading's notes, as the terminal shows them
        "This channel's vector index was damaged (probably by a full disk); it was rebuilt from"
        f" the stored messages: {MESSAGES} thoughts."
    ) in " ".join(out.split())
    code, reading, _ = awai("read", str(stored.transcript), "--message", stored.read, "--json")
    assert json.loads(reading) == stored.reading
    assert awai.export(tmp_path / "after.jsonl") == stored.export


@pytest.mark.slow
def test_doctor_repair_rebuilds_a_damaged_index_from_the_stored_messages(
    awai: Awai, stored: Stored, tmp_path: Path
) -> None:
    cut(awai.index_file("header.bin"), 0)  # then every Chroma call fails: "Error loading hnsw"

    code, row = awai.doctor("--repair")

    assert (
        code == 0
        and row["vector index"] == f"rebuilt ({MESSAGES:,} thoughts)"
        and row["state"] == "repaired"
    )
    code, row = awai.doctor()
    assert code == 0 and row["vector index"] == "readable" and row["state"] == "ok"
    assert awai.export(tmp_path / "after.jsonl") == stored.export


def flip(path: Path, count: int, at: int) -> None:
    """``count`` bytes changed from ``at`` on (a bad sector, a stray write)."""
    data = bytearray(path.read_bytes())
    for i in range(at, at + count):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))


def torn_header(awai: Awai) -> None:
    """A kill while Chroma rewrote the index: the header counts the new write's elements, the
    other files still hold the old write's."""
    header = awai.index_file("header.bin")
    data = bytearray(header.read_bytes())
    grown = int.from_bytes(data[20:28], "little") + 700
    data[12:20] = grown.to_bytes(8, "little")
    data[20:28] = grown.to_bytes(8, "little")
    header.write_bytes(bytes(data))


DAMAGE = {
    "a kill while the index was rewritten": torn_header,
    "the segment folder deleted": lambda awai: shutil.rmtree(awai.index_file("header.bin").parent),
    "256 bytes flipped in data_level0.bin": lambda awai: flip(
        awai.index_file("data_level0.bin"), 256, 40_000
    ),
    "64 bytes flipped in link_lists.bin": lambda awai: flip(
        awai.index_file("link_lists.bin"), 64, 1_000
    ),
    "chroma.sqlite3 cut in half": lambda awai: cut(
        awai.data / "chroma" / "chroma.sqlite3",
        (awai.data / "chroma" / "chroma.sqlite3").stat().st_size // 2,
    ),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damage_chroma_would_crash_or_fail_on_is_found_before_loading_and_rebuilt(
    damage: str, awai: Awai, stored: Stored, tmp_path: Path
) -> None:
    DAMAGE[damage](awai)
    cut_read_model(awai)  # so that the reading needs Chroma's vectors
    code, row = awai.doctor()
    assert code == 1 and row["vector index"] == "damaged" and row["state"] == "needs repair"

    code, out, said = awai("read", str(stored.transcript), "--message", stored.read)

    assert code == 0, said
    assert "rebuilt from the stored messages" in said + " ".join(out.split())
    code, out, _ = awai("read", str(stored.transcript), "--message", stored.read, "--json")
    assert json.loads(out) == stored.reading
    code, row = awai.doctor()
    assert code == 0 and row["vector index"] == "readable" and row["state"] == "ok"
    assert awai.export(tmp_path / "after.jsonl") == stored.export
    leftovers = [p.name for p in awai.data.iterdir() if ".damaged-" in p.name]
    assert leftovers == []  # a damaged folder set aside is gone with its vectors


def test_an_index_loaded_in_the_child_probe_fails_there_and_this_process_lives_on(
    awai: Awai,
) -> None:
    """What the check cannot judge (a layout it does not know) is loaded in a child process
    under a memory limit: a whole index passes, a torn one fails there, not here."""
    chroma = awai.data / "chroma"
    [name] = [
        row[0]
        for row in sqlite3.connect(chroma / "chroma.sqlite3").execute(
            "SELECT name FROM collections"
        )
    ]
    assert probe_index(chroma, name) is None

    torn_header(awai)
    said = probe_index(chroma, name)

    assert said is not None and said.startswith("loading it")
    header = awai.index_file("header.bin")
    header.write_bytes((2).to_bytes(4, "little") + header.read_bytes()[4:])
    segment = segment_of(chroma, name)
    assert segment is not None
    with pytest.raises(UnknownLayout):
        index_damage(segment)


def collection_of(awai: Awai) -> str:
    [name] = [
        row[0]
        for row in sqlite3.connect(awai.data / "chroma" / "chroma.sqlite3").execute(
            "SELECT name FROM collections"
        )
    ]
    return str(name)


@pytest.mark.slow
def test_an_index_holding_fewer_vectors_than_stored_is_rebuilt_by_the_next_command_using_it(
    awai: Awai, stored: Stored
) -> None:
    """The map of an older write (100 vectors fewer), every file whole: found by its count
    before Chroma loads it (loaded, it fails "Error finding id" on whatever it lacks)."""
    path = awai.index_file("index_metadata.pickle")
    raw = path.read_bytes()
    meta = pickle.loads(raw)
    for vector in sorted(meta["id_to_label"])[:100]:
        del meta["label_to_id"][meta["id_to_label"].pop(vector)]
    path.write_bytes(pickle.dumps(meta, protocol=raw[1]))
    assert held_count(awai.data / "chroma", collection_of(awai)) == MESSAGES - 100
    code, row = awai.doctor()
    assert code == 1 and row["vector index"] == "damaged" and row["state"] == "needs repair"
    cut_read_model(awai)  # so that the reading needs Chroma's vectors

    code, out, said = awai("read", str(stored.transcript), "--message", stored.read)

    assert code == 0, said
    assert "rebuilt from the stored messages" in said + " ".join(out.split())
    code, out, _ = awai("read", str(stored.transcript), "--message", stored.read, "--json")
    assert json.loads(out) == stored.reading
    assert held_count(awai.data / "chroma", collection_of(awai)) == MESSAGES
    code, row = awai.doctor()
    assert code == 0 and row["vector index"] == "readable" and row["state"] == "ok"


@pytest.mark.slow
def test_an_index_restored_from_before_a_forget_is_found_rebuilt_and_keeps_none_of_the_person(
    awai: Awai, tmp_path: Path
) -> None:
    """Chroma answers from its own record, which no longer has Bo, so nothing fails: only the
    index's own count, against Chroma's record and SQL, shows his vectors are still on disk."""
    before = tmp_path / "index-before"
    shutil.copytree(awai.index_file("header.bin").parent, before)
    code, _, said = awai("forget", "chat", "--speaker", "Bo", "--yes")
    assert code == 0, said
    kept = MESSAGES - len(range(1, MESSAGES, len(SPEAKERS)))
    now = awai.index_file("header.bin").parent
    for file in before.iterdir():
        shutil.copy(file, now / file.name)  # his vectors back on disk, under today's index
    assert held_count(awai.data / "chroma", collection_of(awai)) == MESSAGES

    code, row = awai.doctor()
    assert code == 1 and row["vector index"] == "damaged"
    code, row = awai.doctor("--repair")
    assert code == 0 and row["vector index"] == f"rebuilt ({kept:,} thoughts)", row

    assert held_count(awai.data / "chroma", collection_of(awai)) == kept
    bo = {f"m{n}#0" for n in range(1, MESSAGES, len(SPEAKERS))}
    for index_map in awai.data.rglob("index_metadata.pickle"):
        assert not bo & set(pickle.loads(index_map.read_bytes())["id_to_label"])
    code, row = awai.doctor()
    assert code == 0 and row["state"] == "ok"


def not_finite_in_log(awai: Awai, tmp_path: Path) -> Awai:
    """One more message stored (its vector in Chroma's log, not yet in the index files), then,
    in a copy of the folder (opened fresh: Chroma keeps what it opened in memory), that vector's
    bytes changed into NaNs inside ``chroma.sqlite3``: SQLite's checks pass (a value changed, not
    a page), and Chroma gives the vector back as it is."""
    code, _, said = awai("ingest", str(one_more(tmp_path)), "--channel", "chat")
    assert code == 0, said
    damaged = Awai(tmp_path / "damaged", awai.capsys)
    shutil.copytree(awai.data, damaged.data)
    with sqlite3.connect(damaged.data / "chroma" / "chroma.sqlite3") as connection:
        [(seq, size)] = connection.execute(
            "SELECT seq_id, length(vector) FROM embeddings_queue WHERE id = ?", (f"m{MESSAGES}#0",)
        ).fetchall()
        connection.execute(
            "UPDATE embeddings_queue SET vector = ? WHERE seq_id = ?",
            (b"\xff\xff\xff\x7f" * (size // 4), seq),
        )
    return damaged


@pytest.mark.slow
def test_a_vector_chroma_gives_back_not_finite_is_damage_found_and_a_forget_meeting_it_finishes(
    awai: Awai, stored: Stored, tmp_path: Path
) -> None:
    """A forget copies every vector of the channel into a new collection: one that is not
    finite is damage, so the forget rebuilds the index from the stored messages, says so in one
    line, and finishes in the same run (never a traceback, never stopped part-way)."""
    awai = not_finite_in_log(awai, tmp_path)
    code, row = awai.doctor()
    assert code == 1 and row["vector index"] == "damaged"
    # Someone other than the damaged vector's speaker, so the forget has to copy that vector.
    forgotten = SPEAKERS[(MESSAGES + 1) % len(SPEAKERS)]

    code, out, said = awai("forget", "chat", "--speaker", forgotten, "--yes")

    assert code == 0, said
    assert said.count("rebuilt from the stored messages") == 1, said
    assert f"forgot {forgotten}" in out and "Traceback" not in said
    kept = f"m{MESSAGES - 3}"  # the damaged one's speaker; the next command has nothing to repair
    code, _, said = awai("read", str(stored.transcript), "--message", kept)
    assert code == 0 and "rebuilt" not in said, said
    code, row = awai.doctor()
    assert code == 0 and row["vector index"] == "readable" and row["state"] == "ok"
    exported = awai.export(tmp_path / "after.jsonl").decode()
    assert f'"speaker": "{forgotten}"' not in exported and f'"id": "m{MESSAGES}"' in exported
