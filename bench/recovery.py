"""Kill AWAI at random moments, damage what it leaves, and check that it opens again.

Each trial copies a stored data folder, starts one real ``awai`` command on it (ingest, forget,
recluster, import, or a reading of every message, which writes read models), SIGKILLs it at a
random moment — or just after Chroma begins rewriting an index file — then applies one kind of
damage (bytes flipped in an HNSW file, a torn index header, a segment folder deleted, Chroma's
database cut or flipped, a read-model record that decodes to the wrong type under a matching
checksum, a read-model pointer that is not a map, or none). Then, as an operator:

- the next ordinary command (``awai read``) must succeed, with its peak memory at most twice a
  clean run's: the largest of that reading, ``awai doctor --repair`` and an ``awai ingest`` on
  the undamaged folder (a reading whose read model is current loads neither the embedding model
  nor Chroma; one after a kill or damage must embed again, as the clean ingest does);
- ``awai doctor`` must be clean after at most one ``awai doctor --repair``;
- nothing stored is lost (every message of the stored folder is in ``awai export``, but the
  forgotten speaker's once their forget has begun), and nothing forgotten remains in any file.

``python -m bench.recovery --messages 5000 --kills 30`` is the large run; ``tests/
test_recovery_harness.py`` runs a few trials at a small size.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

SPEAKERS = ("Ann", "Bo", "Cy", "Zedekiah")
FORGOTTEN = "Zedekiah"
HIS_WORD = "quokkaish"
TOPICS = ("battery", "login", "sync", "charts", "release")
OPERATIONS = ("ingest", "forget", "recluster", "import", "read-models")
DAMAGES = (
    None,
    "level0-flip",
    "links-flip",
    "torn-header",
    "segment-deleted",
    "chroma-sqlite-cut",
    "chroma-sqlite-flip",
    "read-model-record",
    "pointer-list",
)
INDEX_FILES = ("header.bin", "data_level0.bin", "link_lists.bin", "length.bin")
# Kills come within this long of a command's start (reading every message of a large channel
# takes minutes; its first minute holds the start-up, the build and the first writes).
KILL_WITHIN_SECONDS = 60.0


def line(number: int) -> str:
    speaker = SPEAKERS[number % len(SPEAKERS)]
    topic = HIS_WORD if speaker == FORGOTTEN else TOPICS[number % len(TOPICS)]
    text = f"Note {number} on the {topic} work, {TOPICS[(number // 7) % len(TOPICS)]} too."
    return json.dumps({"id": f"m{number}", "speaker": speaker, "text": text, "ts": 60 * number})


@dataclass(frozen=True)
class Run:
    code: int
    output: str
    peak_kb: int
    seconds: float


def awai(data: Path, *argv: str, kill: KillPlan | None = None) -> Run:
    """One ``awai`` process; its exit status, what it printed, its peak resident memory."""
    with open(os.devnull, "w") as devnull, _scratch(data) as said:
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-m", "bots.terminal.cli", "--data-dir", str(data), *argv],
            stdout=devnull if "--all" in argv else said,
            stderr=said,
            env={**os.environ, "COLUMNS": "250"},
        )
        reaped = kill.wait_and_kill(process, data) if kill is not None else None
        _, status, usage = reaped or os.wait4(process.pid, 0)
        seconds = time.monotonic() - started
        said.seek(0)
        output = said.read().decode("utf-8", "replace")
    code = os.waitstatus_to_exitcode(status)
    process.returncode = code
    return Run(code, output, usage.ru_maxrss, seconds)


@contextmanager
def _scratch(data: Path) -> Iterator[BinaryIO]:
    """A temporary file beside the data folder for a process's output."""
    path = data.parent / f".out-{os.getpid()}-{time.monotonic_ns()}"
    try:
        with path.open("w+b") as handle:
            yield handle
    finally:
        path.unlink(missing_ok=True)


@dataclass
class KillPlan:
    """When to SIGKILL: after ``after`` seconds, or (``at_index_write``) as soon as an index file
    of the embedded Chroma changes (then ``after`` is the latest moment)."""

    after: float
    at_index_write: bool = False
    killed_at: str = ""

    def wait_and_kill(
        self, process: subprocess.Popen[bytes], data: Path
    ) -> tuple[int, int, object] | None:
        """Kill the process as planned; what :func:`os.wait4` said if it ended first."""
        deadline = time.monotonic() + self.after
        before = _index_stamp(data) if self.at_index_write else None
        while time.monotonic() < deadline:
            ended = os.wait4(process.pid, os.WNOHANG)
            if ended[0]:
                self.killed_at = "finished first"
                return ended
            if before is not None and _index_stamp(data) != before:
                self.killed_at = "index write"
                break
            time.sleep(0.002 if before is not None else 0.02)
        process.send_signal(signal.SIGKILL)
        self.killed_at = self.killed_at or f"{self.after:.1f} s"
        return None


def _index_stamp(data: Path) -> tuple[tuple[str, int, int], ...]:
    found = []
    for folder in (data / "chroma").glob("*-*-*-*-*"):
        for name in INDEX_FILES:
            try:
                stat = (folder / name).stat()
            except OSError:
                continue
            found.append((f"{folder.name}/{name}", stat.st_size, stat.st_mtime_ns))
    return tuple(sorted(found))


@dataclass(frozen=True)
class Base:
    """A stored data folder, the files its operations use, and its reference numbers."""

    folder: Path
    data: Path
    transcript: Path
    more: Path
    export: Path
    messages: int
    clean_peak_kb: int
    """The largest peak of a clean reading, ``doctor --repair`` and ``ingest``."""
    seconds: dict[str, float]

    @property
    def read_argv(self) -> tuple[str, ...]:
        return ("read", str(self.transcript), "--message", f"m{self.messages - 2}")

    def argv(self, operation: str) -> tuple[str, ...]:
        return {
            "ingest": ("ingest", str(self.more), "--channel", "chat"),
            "forget": ("forget", "chat", "--speaker", FORGOTTEN, "--yes"),
            "recluster": ("recluster", "--force"),
            "import": ("import", str(self.export), "--channel", "copy"),
            "read-models": ("read", str(self.transcript), "--all", "--json"),
        }[operation]


def build_base(folder: Path, messages: int, operations: tuple[str, ...] = OPERATIONS) -> Base:
    """Store ``messages`` messages, export them, and time each of ``operations`` on a clean
    copy (when to kill it is drawn from that time)."""
    folder.mkdir(parents=True, exist_ok=True)
    transcript, more = folder / "chat.jsonl", folder / "more.jsonl"
    transcript.write_text("".join(line(n) + "\n" for n in range(messages)), encoding="utf-8")
    extra = range(messages, messages + max(200, messages // 4))
    more.write_text("".join(line(n) + "\n" for n in extra), encoding="utf-8")
    data = folder / "base"
    _must(awai(data, "ingest", str(transcript), "--channel", "chat"), "storing the base")
    _must(awai(data, "recluster"), "clustering the base")
    export = folder / "export.jsonl"
    _must(awai(data, "export", "chat", "--out", str(export)), "exporting the base")
    clean = folder / "clean"
    shutil.copytree(data, clean)
    read = awai(clean, "read", str(transcript), "--message", f"m{messages - 2}")
    _must(read, "reading the clean copy")
    repair = awai(clean, "doctor", "--repair")
    _must(repair, "repairing the clean copy")
    seconds, peaks = {}, [read.peak_kb, repair.peak_kb]
    for operation in operations:
        shutil.rmtree(clean)
        shutil.copytree(data, clean)
        base_argv = Base(folder, data, transcript, more, export, messages, 0, {}).argv(operation)
        done = awai(clean, *base_argv, kill=KillPlan(KILL_WITHIN_SECONDS))
        seconds[operation] = min(done.seconds, KILL_WITHIN_SECONDS)
        if operation == "ingest":  # the ordinary command that loads the model and embeds
            peaks.append(done.peak_kb)
    shutil.rmtree(clean)
    reference = max(peaks)
    return Base(folder, data, transcript, more, export, messages, reference, seconds)


def _must(run: Run, what: str) -> None:
    if run.code != 0:
        raise RuntimeError(f"{what} failed ({run.code}): {run.output[-2000:]}")


@dataclass
class Trial:
    operation: str
    damage: str | None
    killed_at: str = ""
    damaged: str = ""
    next_code: int = 0
    next_peak_kb: int = 0
    doctor_codes: list[int] = field(default_factory=list)
    lost: int = 0
    forgotten_left: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def trial(base: Base, seed: int, operation: str, damage: str | None, at_index: bool) -> Trial:
    """One kill, one damage, then the operator's commands and the checks."""
    rng = random.Random(seed)
    data = base.folder / f"trial-{seed}"
    shutil.rmtree(data, ignore_errors=True)
    shutil.copytree(base.data, data)
    result = Trial(operation, damage)
    plan = KillPlan(rng.uniform(0.3, 1.0) * base.seconds[operation], at_index)
    killed = awai(data, *base.argv(operation), kill=plan)
    result.killed_at = plan.killed_at
    _no_traceback(result, "the killed command", killed)
    result.damaged = apply_damage(data, damage, rng) if damage else ""

    after = awai(data, *base.read_argv)
    result.next_code, result.next_peak_kb = after.code, after.peak_kb
    _no_traceback(result, "the next command", after)
    if after.code != 0:
        result.problems.append(f"the next command exited {after.code}: {after.output[-600:]}")
    if after.peak_kb > 2 * base.clean_peak_kb:
        result.problems.append(
            f"the next command peaked at {after.peak_kb // 1024} MB, over twice the clean"
            f" clean {base.clean_peak_kb // 1024} MB"
        )
    doctor = awai(data, "doctor")
    result.doctor_codes.append(doctor.code)
    _no_traceback(result, "doctor", doctor)
    if doctor.code != 0:
        repair = awai(data, "doctor", "--repair")
        _no_traceback(result, "doctor --repair", repair)
        again = awai(data, "doctor")
        result.doctor_codes += [repair.code, again.code]
        if again.code != 0:
            result.problems.append(f"doctor not clean after one repair: {again.output[-800:]}")
    _check_stored(base, data, result)
    shutil.rmtree(data, ignore_errors=True)
    return result


def _no_traceback(result: Trial, what: str, run: Run) -> None:
    if "Traceback" in run.output:
        result.problems.append(f"{what} printed a traceback: {run.output[-1500:]}")


def _check_stored(base: Base, data: Path, result: Trial) -> None:
    out = data.parent / f"{data.name}-export.jsonl"
    exported = awai(data, "export", "chat", "--out", str(out))
    if exported.code != 0:
        result.problems.append(f"export failed: {exported.output[-600:]}")
        return
    now = {json.loads(text)["id"] for text in out.read_text(encoding="utf-8").splitlines()}
    out.unlink()
    before = [json.loads(text) for text in base.export.read_text(encoding="utf-8").splitlines()]
    forgotten = not any(json.loads(line(int(i[1:])))["speaker"] == FORGOTTEN for i in now)
    expected = {item["id"] for item in before if not (forgotten and item["speaker"] == FORGOTTEN)}
    result.lost = len(expected - now)
    if result.lost:
        result.problems.append(f"{result.lost} stored message(s) lost")
    if forgotten:
        result.forgotten_left = hits(data, HIS_WORD)
        if result.forgotten_left:
            result.problems.append(f"forgotten words left in {result.forgotten_left[:3]}")


def hits(folder: Path, needle: str) -> list[str]:
    """Files under ``folder`` holding ``needle`` (UTF-8, UTF-16 or hex)."""
    forms = (needle.encode(), needle.encode("utf-16-le"), needle.encode().hex().encode())
    return sorted(
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_file() and any(form in path.read_bytes() for form in forms)
    )


def apply_damage(data: Path, damage: str, rng: random.Random) -> str:
    """Damage the folder as ``damage`` names; what was done, or why it could not be."""
    chroma = data / "chroma"
    segments = sorted(p for p in chroma.glob("*-*-*-*-*") if (p / "header.bin").is_file())
    segment = rng.choice(segments) if segments else None
    if damage in ("level0-flip", "links-flip", "torn-header", "segment-deleted"):
        if segment is None:
            return "no index file to damage"
        if damage == "level0-flip":
            return _flip(segment / "data_level0.bin", 256, rng)
        if damage == "links-flip":
            return _flip(segment / "link_lists.bin", 64, rng)
        if damage == "torn-header":
            return _torn(segment / "header.bin", rng)
        shutil.rmtree(segment)
        return f"removed {segment.name}"
    if damage == "chroma-sqlite-cut":
        path = chroma / "chroma.sqlite3"
        with path.open("r+b") as handle:
            handle.truncate(path.stat().st_size // 2)
        return "chroma.sqlite3 cut in half"
    if damage == "chroma-sqlite-flip":
        return _flip(chroma / "chroma.sqlite3", 64, rng)
    pointers = sorted((data / "read-models").glob("*/current.json"))
    if not pointers:
        return "no read model to damage"
    pointer = rng.choice(pointers)
    if damage == "pointer-list":
        pointer.write_text("[1, 2, 3]", encoding="utf-8")
        return f"{pointer.parent.name}/current.json holds a list"
    return _wrong_record(pointer, "message_ids")


def _wrong_record(pointer: Path, column: str) -> str:
    """The first record of a read model's ``column`` file made a JSON object where an id was,
    the file's length kept and its checksum in ``current.json`` made to match: the file passes
    every check before it is decoded and fails only as it is used (a type error, not a
    ``ValueError``), as a bug of an older writer could leave it."""
    try:
        meta = json.loads(pointer.read_text(encoding="utf-8"))
        length, _ = meta["files"][column]
        path = pointer.parent / str(meta["generation"]) / column
        raw = bytearray(path.read_bytes()[:length])
        end = raw.index(b",")
    except (OSError, ValueError, KeyError, TypeError):
        return f"no {column} records in {pointer.parent.name} to damage"
    raw[: end + 1] = b"{}" + b" " * (end - 2) + b","
    with path.open("r+b") as handle:
        handle.write(raw)
    meta["files"][column] = [length, zlib.crc32(bytes(raw))]
    pointer.write_text(json.dumps(meta), encoding="utf-8")
    return f"{pointer.parent.name[:8]}/{column}: first record an object, checksum matching"


def _flip(path: Path, count: int, rng: random.Random) -> str:
    raw = bytearray(path.read_bytes())
    if len(raw) <= count:
        return f"{path.name} too small to damage"
    at = rng.randrange(0, len(raw) - count)
    for i in range(at, at + count):
        raw[i] ^= rng.randrange(1, 256)
    path.write_bytes(bytes(raw))
    return f"{count} bytes flipped in {path.parent.name[:8]}/{path.name} at {at}"


def _torn(header: Path, rng: random.Random) -> str:
    """A header from a larger write than the other files hold (a kill mid-rewrite)."""
    raw = bytearray(header.read_bytes())
    count = int.from_bytes(raw[20:28], "little")
    grown = count + rng.randrange(100, 1500)
    raw[12:20] = max(grown, int.from_bytes(raw[12:20], "little")).to_bytes(8, "little")
    raw[20:28] = grown.to_bytes(8, "little")
    header.write_bytes(bytes(raw))
    return f"header.bin counts {grown} elements, the files {count}"


def plan(kills: int, seed: int) -> list[tuple[int, str, str | None, bool]]:
    """``kills`` trials: every operation and every damage kind in turn, a third of the kills
    just after an index file changes."""
    rng = random.Random(seed)
    return [
        (
            seed * 1000 + n,
            OPERATIONS[n % len(OPERATIONS)],
            DAMAGES[n % len(DAMAGES)],
            rng.random() < 1 / 3 and OPERATIONS[n % len(OPERATIONS)] != "recluster",
        )
        for n in range(kills)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--kills", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/awai-recovery"))
    args = parser.parse_args()
    shutil.rmtree(args.folder, ignore_errors=True)
    base = build_base(args.folder, args.messages)
    print(
        f"base: {args.messages} messages; clean peak {base.clean_peak_kb // 1024} MB;"
        f" clean seconds {json.dumps({k: round(v, 1) for k, v in base.seconds.items()})}"
    )
    failures = 0
    peaks = []
    for seed, operation, damage, at_index in plan(args.kills, args.seed):
        result = trial(base, seed, operation, damage, at_index)
        peaks.append(result.next_peak_kb)
        failures += not result.ok
        print(
            f"{seed} {operation:<11} killed at {result.killed_at:<15} damage {damage or '-'}"
            f" ({result.damaged or '-'}); next exit {result.next_code}, peak"
            f" {result.next_peak_kb // 1024} MB; doctor {result.doctor_codes};"
            f" lost {result.lost}; {'ok' if result.ok else 'FAILED: ' + '; '.join(result.problems)}",
            flush=True,
        )
    print(
        f"{args.kills} kills, {failures} failed; next-command peak max {max(peaks) // 1024} MB"
        f" ({max(peaks) / base.clean_peak_kb:.2f}x the clean run's {base.clean_peak_kb // 1024} MB)"
    )
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
