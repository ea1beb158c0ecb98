"""Preconceptions against labelled concerns: does each speaker's recurring concern land in a schema?

For every speaker of a labelled conversation and every concern they keep returning to, the table
shows **coverage** (the share of the concern's messages with a thought inside the one schema that
holds most of them) and **purity** (the share of that schema's messages that are about the
concern); per speaker, **chatter kept out** (the share of their chatter messages in no schema).
A message counts as inside a schema when one of its thoughts is a member. **Labelled purity**
counts only the schema's messages that carry a label: in the team chats every message does, so it
equals purity; in LoCoMo a message no question cites has none (it may well be on the topic), so
purity there is a lower bound and labelled purity the fairer share.

Every method runs in the same run, on the same stored thoughts and vectors:
- ``AWAI``: the schemas the product stores (the real runtime: ingest, re-cluster, list);
- ``hdbscan``: the hdbscan package with its defaults (``min_cluster_size`` 3) on the speaker's
  thought vectors, the plain anchor anyone would try first;
- ``hdbscan-1``: the same with ``allow_single_cluster=True``;
- ``+message``: AWAI's clustering on one vector per message (the mean of its thoughts), to see
  whether thoughts cut sentence by sentence are what hides a concern;
- ``before`` (with ``--before TREE``): the schemas an older checkout stores for the same
  conversations, made by this same file run in a fresh process on that checkout's engine, so
  before and after land in one table (``git worktree add /tmp/before <commit>``).

Data:
- ``tests/data/preconceptions/*.jsonl``: four team chats written for this (three English, one
  Japanese), each message labelled ``label``: a concern its speaker keeps returning to, ``work``
  (on-topic but one-off) or ``chatter`` (greetings, lunch, acknowledgements). Japanese is embedded
  with the multilingual encoder, as the Japanese demo is.
- ``../shared/data/locomo`` (when present; CC BY-NC 4.0, evaluation only): ten long two-person
  conversations. No concern labels ship with it, so they are derived from its questions: the
  evidence messages of a question, when all said by one speaker in at least two sessions, are one
  life topic of that speaker ("What has Melanie painted?"); topics sharing an evidence message are
  joined, and those of at least four messages count. There is no chatter label either, so the
  speaker's messages that no question cites stand in for it ("uncited kept out"): many of them are
  on some topic, so that column is a lower bound of what a reader would call chatter kept out.

Run: ``PYTHONPATH=$PWD .venv/bin/python -m bench.preconceptions [--locomo N] [--speakers]
[--before TREE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from awai_engine.schemas.clustering import NOISE, cluster_labels
from awai_engine.settings import Settings
from awai_engine.text import detect_language
from awai_engine.values import Utterance
from bots.runtime import Runtime, open_runtime
from bots.terminal.transcript import read_transcript

LABELLED = Path(__file__).resolve().parents[1] / "tests" / "data" / "preconceptions"
# ``shared/`` beside the checkout, or beside the folder of worktrees that holds it.
LOCOMO = next(
    (
        parent / "shared" / "data" / "locomo"
        for parent in Path(__file__).resolve().parents[1:4]
        if (parent / "shared" / "data" / "locomo").is_dir()
    ),
    Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo",
)
CHATTER = "chatter"
UNLABELLED = ("work", CHATTER)
MIN_LOCOMO_TOPIC = 4
METHODS = ("AWAI", "hdbscan", "hdbscan-1", "+message")


@dataclass
class Conversation:
    """One channel with a label per message: a concern, ``work``, or ``chatter``."""

    name: str
    language: str
    utterances: list[Utterance]
    labels: dict[str, set[str]]  # message id → its concerns (or {"work"} / {"chatter"})
    chatter_word: str = "chatter"
    chatter_is_unlabelled: bool = False  # LoCoMo: "chatter" means no question cites it


@dataclass
class SpeakerThoughts:
    """A speaker's thoughts in channel order: the message each came from, and its vector."""

    message_ids: list[str]
    keys: list[str]
    vectors: np.ndarray


@dataclass
class Row:
    conversation: str
    speaker: str
    concern: str
    messages: int
    coverage: dict[str, float] = field(default_factory=dict)
    purity: dict[str, float] = field(default_factory=dict)
    labelled_purity: dict[str, float] = field(default_factory=dict)


@dataclass
class SpeakerRow:
    conversation: str
    speaker: str
    chatter: int
    kept_out: dict[str, float] = field(default_factory=dict)
    schemas: dict[str, int] = field(default_factory=dict)


# -- data --------------------------------------------------------------------------------------


def labelled_conversations() -> list[Conversation]:
    found = []
    for path in sorted(LABELLED.glob("*.jsonl")):
        transcript = read_transcript(path, f"bench:labelled:{path.stem}", 10**9)
        if transcript.problems:
            raise SystemExit(f"{path}: {transcript.problems[0]}")
        labels = {
            record["id"]: {record["label"]}
            for record in map(json.loads, path.read_text(encoding="utf-8").splitlines())
        }
        text = " ".join(u.text for u in transcript.utterances)
        found.append(Conversation(path.stem, detect_language(text), transcript.utterances, labels))
    return found


def locomo_conversations(limit: int, folder: Path = LOCOMO) -> list[Conversation]:
    """LoCoMo's conversations with topics derived from its questions' evidence (see the top)."""
    if not (folder / "messages.jsonl").exists():
        return []
    messages: dict[str, list[dict]] = defaultdict(list)
    for line in (folder / "messages.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        messages[record["conversation_id"]].append(record)
    evidence: dict[str, list[list[int]]] = defaultdict(list)
    for line in (folder / "qa.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        evidence[record["conversation_id"]].append(record["evidence_index"])
    found = []
    for conversation_id in sorted(messages)[:limit]:
        rows = sorted(messages[conversation_id], key=lambda r: r["index"])
        by_index = {r["index"]: r for r in rows}
        channel = f"bench:locomo:{conversation_id}"
        utterances = [
            Utterance(
                channel=channel,
                message_id=f"m{r['index']:04d}",
                speaker_id=r["speaker"],
                speaker_name=r["speaker"],
                text=r["text"],
                ts=float(r["index"]),
            )
            for r in rows
            if r["text"].strip()
        ]
        topics = _joined_topics(evidence[conversation_id], by_index)
        labels: dict[str, set[str]] = {u.message_id: set() for u in utterances}
        for number, topic in enumerate(topics, start=1):
            for index in topic:
                labels[f"m{index:04d}"].add(f"topic{number}")
        cited = {i for question in evidence[conversation_id] for i in question}
        for utterance in utterances:
            index = int(utterance.message_id[1:])
            if not labels[utterance.message_id]:
                labels[utterance.message_id] = {"work"} if index in cited else {CHATTER}
        found.append(
            Conversation(f"locomo/{conversation_id}", "en", utterances, labels, "uncited", True)
        )
    return found


def _joined_topics(questions: list[list[int]], by_index: dict[int, dict]) -> list[set[int]]:
    """Evidence sets of one speaker over two or more sessions, joined when they share a message."""
    groups: list[set[int]] = []
    for question in questions:
        rows = [by_index[i] for i in question if i in by_index]
        if len({r["speaker"] for r in rows}) != 1 or len({r["session"] for r in rows}) < 2:
            continue
        joined = set(question)
        for group in [g for g in groups if g & joined]:
            joined |= group
            groups.remove(group)
        groups.append(joined)
    return [group for group in groups if len(group) >= MIN_LOCOMO_TOPIC]


# -- clustering by each method -----------------------------------------------------------------


def speaker_thoughts(runtime: Runtime, channel: str) -> dict[str, SpeakerThoughts]:
    timeline = runtime.store.timeline(channel)
    rows: dict[str, list[int]] = defaultdict(list)
    said: dict[str, SpeakerThoughts] = {}
    for message in timeline.messages:
        speaker = message.ref.speaker_id
        entry = said.setdefault(speaker, SpeakerThoughts([], [], np.empty(0)))
        for thought in message.thoughts:
            entry.message_ids.append(message.message_id)
            entry.keys.append(f"{message.message_id}#{thought.index}")
            rows[speaker].append(message.first_row + thought.index)
    for speaker, entry in said.items():
        entry.vectors = np.asarray(timeline.vectors[rows[speaker]], dtype=np.float32)
    return said


def awai_groups(runtime: Runtime, channel: str) -> dict[str, list[set[str]]]:
    """Each speaker's stored schemas, as sets of message ids."""
    runtime.schemas.recluster(channel, force=True)
    members = {(v.schema_id, v.version): v.members for v in runtime.store.schemas.versions(channel)}
    groups: dict[str, list[set[str]]] = {}
    for speaker in runtime.schemas.schemas(channel):
        groups[speaker.speaker_id] = [
            {key.rsplit("#", 1)[0] for key in members[(s.schema_id, s.version)]}
            for s in speaker.schemas
        ]
    return groups


def label_groups(labels: np.ndarray, message_ids: Sequence[str]) -> list[set[str]]:
    return [
        {message_ids[row] for row in np.flatnonzero(labels == cluster)}
        for cluster in sorted(set(labels.tolist()) - {NOISE})
    ]


def hdbscan_groups(said: SpeakerThoughts, single: bool) -> list[set[str]]:
    import hdbscan

    if len(said.keys) < 4:
        return []
    labels = hdbscan.HDBSCAN(min_cluster_size=3, allow_single_cluster=single).fit_predict(
        said.vectors.astype(np.float64)
    )
    return label_groups(labels, said.message_ids)


def per_message_groups(
    said: SpeakerThoughts, texts: dict[str, str], settings: Settings
) -> list[set[str]]:
    order = list(dict.fromkeys(said.message_ids))
    index = {message_id: row for row, message_id in enumerate(order)}
    sums = np.zeros((len(order), said.vectors.shape[1]), dtype=np.float64)
    np.add.at(sums, [index[m] for m in said.message_ids], said.vectors)
    sums /= np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    labels = cluster_labels(sums.astype(np.float32), settings.schemas, [texts[m] for m in order])
    return label_groups(labels, order)


# -- scoring -----------------------------------------------------------------------------------


def score(
    conversation: Conversation, groups_by_method: dict[str, dict[str, list[set[str]]]]
) -> tuple[list[Row], list[SpeakerRow]]:
    speakers = list(dict.fromkeys(u.speaker_id for u in conversation.utterances))
    rows, speaker_rows = [], []
    for speaker in speakers:
        mine = [u.message_id for u in conversation.utterances if u.speaker_id == speaker]
        concerns = sorted({c for m in mine for c in conversation.labels[m]} - set(UNLABELLED))
        chatter = {m for m in mine if CHATTER in conversation.labels[m]}
        speaker_row = SpeakerRow(conversation.name, speaker, len(chatter))
        for concern in concerns:
            said = {m for m in mine if concern in conversation.labels[m]}
            row = Row(conversation.name, speaker, concern, len(said))
            for method, groups in groups_by_method.items():
                best = max(
                    groups.get(speaker, []), key=lambda g: (len(g & said), -len(g)), default=set()
                )
                row.coverage[method] = len(best & said) / len(said)
                row.purity[method] = len(best & said) / len(best) if best & said else 0.0
                known = best - chatter if conversation.chatter_is_unlabelled else best
                row.labelled_purity[method] = len(best & said) / len(known) if best & said else 0.0
            rows.append(row)
        for method, groups in groups_by_method.items():
            inside = set().union(*groups.get(speaker, [])) if groups.get(speaker) else set()
            speaker_row.kept_out[method] = (
                1 - len(chatter & inside) / len(chatter) if chatter else 1.0
            )
            speaker_row.schemas[method] = len(groups.get(speaker, []))
        speaker_rows.append(speaker_row)
    return rows, speaker_rows


def ingested(conversation: Conversation, runtime: Runtime) -> str:
    channel = conversation.utterances[0].channel
    report = runtime.engine.ingest(conversation.utterances)
    if report.problems:
        raise SystemExit(f"{conversation.name}: {report.problems[0]}")
    return channel


def evaluate(
    conversation: Conversation, runtime: Runtime, before: dict[str, list[set[str]]] | None
) -> tuple[list[Row], list[SpeakerRow]]:
    channel = ingested(conversation, runtime)
    said = speaker_thoughts(runtime, channel)
    groups: dict[str, dict[str, list[set[str]]]] = {}
    if before is not None:
        groups["before"] = before
    groups["AWAI"] = awai_groups(runtime, channel)
    groups["hdbscan"] = {s: hdbscan_groups(t, single=False) for s, t in said.items()}
    groups["hdbscan-1"] = {s: hdbscan_groups(t, single=True) for s, t in said.items()}
    texts = {u.message_id: u.text for u in conversation.utterances}
    groups["+message"] = {
        s: per_message_groups(t, texts, runtime.settings) for s, t in said.items()
    }
    return score(conversation, groups)


# -- the table ---------------------------------------------------------------------------------


def mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if values else float("nan")


def methods_of(rows: list[Row]) -> list[str]:
    return [m for m in ("before", *METHODS) if rows and m in rows[0].coverage]


def summary(name: str, rows: list[Row], speakers: list[SpeakerRow], word: str) -> list[str]:
    lines = [
        f"\n{name}: {len(rows)} concerns of {len(speakers)} speakers"
        f" (mean of per-concern / per-speaker shares)",
        f"{'method':<10} {'coverage':>9} {'purity':>7} {'labelled purity':>16}"
        f" {word + ' kept out':>17} {'schemas/speaker':>16}",
    ]
    for method in methods_of(rows):
        lines.append(
            f"{method:<10} {mean([r.coverage[method] for r in rows]):>9.2f}"
            f" {mean([r.purity[method] for r in rows]):>7.2f}"
            f" {mean([r.labelled_purity[method] for r in rows]):>16.2f}"
            f" {mean([s.kept_out[method] for s in speakers if s.chatter]):>17.2f}"
            f" {mean([s.schemas[method] for s in speakers]):>16.1f}"
        )
    return lines


def detail(rows: list[Row], speakers: list[SpeakerRow], word: str) -> list[str]:
    """Per speaker: mean coverage / labelled purity of their concerns, share of chatter kept out
    and number of schemas, for every method."""
    methods = methods_of(rows)
    head = f"{'conversation':<22} {'speaker':<9} {'concerns':>8} {word:>8} " + " ".join(
        f"{m:>22}" for m in methods
    )
    lines = [f"\nPer speaker: coverage / labelled purity / {word} kept out (schemas)", head]
    for s in speakers:
        mine = [r for r in rows if r.conversation == s.conversation and r.speaker == s.speaker]
        cells = " ".join(
            f"{mean([r.coverage[m] for r in mine]):>5.2f}/"
            f"{mean([r.labelled_purity[m] for r in mine]):<4.2f}/"
            f"{s.kept_out[m]:<4.2f} ({s.schemas[m]:>3})"
            for m in methods
        )
        lines.append(
            f"{s.conversation:<22} {s.speaker[:9]:<9} {len(mine):>8} {s.chatter:>8} {cells}"
        )
    return lines


def dumped_awai(conversations: list[Conversation], folder: Path) -> dict:
    """Every conversation's stored schemas as message ids: what ``--before`` reads back."""
    runtimes: dict[str, Runtime] = {}
    found: dict[str, dict[str, list[list[str]]]] = {}
    try:
        for conversation in conversations:
            if conversation.language not in runtimes:
                runtimes[conversation.language] = runtime_for(
                    folder / conversation.language, conversation.language
                )
            runtime = runtimes[conversation.language]
            channel = ingested(conversation, runtime)
            groups = awai_groups(runtime, channel)
            found[conversation.name] = {s: [sorted(g) for g in gs] for s, gs in groups.items()}
    finally:
        for runtime in runtimes.values():
            runtime.close()
    return found


def before_groups(tree: Path, argv: list[str]) -> dict[str, dict[str, list[set[str]]]]:
    """The schemas ``tree``'s engine stores for the same data, from a fresh process."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "groups.json"
        subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), *argv, "--dump-awai", str(out)],
            check=True,
            cwd=tree,
            env={**os.environ, "PYTHONPATH": str(tree)},
        )
        found = json.loads(out.read_text(encoding="utf-8"))
    return {c: {s: [set(g) for g in gs] for s, gs in by.items()} for c, by in found.items()}


def runtime_for(data_dir: Path, language: str) -> Runtime:
    """A runtime as the bots build it, offline; Japanese with the multilingual encoder."""
    settings = Settings(data_dir=data_dir, _env_file=None)  # type: ignore[call-arg]
    if language == "ja":
        settings = settings.model_copy(
            update={
                "embedding": settings.embedding.model_copy(update={"backend": "multilingual-use"})
            }
        )
    return open_runtime(settings)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", type=int, default=10, help="LoCoMo conversations (0: none)")
    parser.add_argument("--locomo-dir", type=Path, default=LOCOMO, help="folder of LoCoMo")
    parser.add_argument("--speakers", action="store_true", help="print every speaker")
    parser.add_argument("--before", type=Path, help="older checkout to compare with (one table)")
    parser.add_argument("--dump-awai", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    datasets: list[tuple[str, list[Conversation]]] = [
        ("labelled team chats", labelled_conversations())
    ]
    if args.locomo:
        datasets.append(
            (
                "LoCoMo (topics from question evidence)",
                locomo_conversations(args.locomo, args.locomo_dir),
            )
        )
    if args.dump_awai is not None:
        with tempfile.TemporaryDirectory() as folder:
            everything = [c for _, conversations in datasets for c in conversations]
            found = dumped_awai(everything, Path(folder))
        args.dump_awai.write_text(json.dumps(found), encoding="utf-8")
        return 0
    before = None
    if args.before is not None:
        before = before_groups(
            args.before.resolve(),
            ["--locomo", str(args.locomo), "--locomo-dir", str(args.locomo_dir.resolve())],
        )
    printed: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        runtimes: dict[str, Runtime] = {}
        try:
            for name, conversations in datasets:
                rows: list[Row] = []
                speakers: list[SpeakerRow] = []
                for conversation in conversations:
                    if conversation.language not in runtimes:
                        runtimes[conversation.language] = runtime_for(
                            Path(folder) / conversation.language, conversation.language
                        )
                    found, who = evaluate(
                        conversation,
                        runtimes[conversation.language],
                        before.get(conversation.name, {}) if before is not None else None,
                    )
                    rows += found
                    speakers += who
                word = conversations[0].chatter_word if conversations else CHATTER
                if args.speakers:
                    printed += detail(rows, speakers, word)
                printed += summary(name, rows, speakers, word)
        finally:
            for runtime in runtimes.values():
                runtime.close()
    print("\n".join(printed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
