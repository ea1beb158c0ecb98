"""The embedding backends side by side: speed, and what association makes of the Japanese sample.

Run: ``.venv/bin/python -m bench.embedding_backends [--repeat N]``. Every backend is measured in
the same run on the same texts (the thoughts of both shipped samples, Japanese and English), so
the ratios between rows are what counts; absolute numbers move with the machine's load. On a
shared, busy machine torch's default of one thread per core oversubscribes the CPU and MiniLM
slows down many times over; ``OMP_NUM_THREADS=1`` gives every backend one thread and a fairer
comparison there. The load average and thread settings are printed with the tables.

Speed: load time (to the first vector), batched throughput (``encode_uncached`` on all thoughts, the configured batch
size), and the median latency of one message embedded alone (what a live bot pays per message).

Association on the Japanese sample (thresholds calibrated per model, as ``open_runtime`` does):
- *return*: of the late return to the restore test (m034–m037, partly in English), how many of
  its messages recall one of the early messages that named it (m002, m003, m005);
- *precision*: the share of those messages' recalled sources that belong to the topic (m002–m007);
- *worry*: of 田中's later mentions of losing data (m010, m024, m031, m036), how many recall m004;
- *en→ja*: whether the English m036 recalls the Japanese m004 that says the same fear;
- *recalled/msg*: associations per message over the whole sample (MiniLM recalls almost anything
  Japanese, since nearly every Japanese pair passes its thresholds);
- *pairs ≥ θ_max*: the share of all Japanese thought pairs at or above the model's θ_max, the
  threshold for the furthest distances: pairs that would be recalled from any distance.
The last columns re-measure the calibration line (``awai_engine.calibration``) to compare with
the stored one.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from awai_engine.backends.offline import OfflineBackend
from awai_engine.calibration import KNOWN_SCALES, calibrated, measure_scale
from awai_engine.embedding import Embedder
from awai_engine.engine import Engine
from awai_engine.samples import SAMPLES
from awai_engine.settings import EmbeddingSettings, Settings
from awai_engine.visibility import EVERYTHING
from bots.terminal.transcript import read_transcript
from storage.store import AwaiStore

BACKENDS = ("sentence-transformers", "multilingual-use", "multilingual-e5")
LATE_RETURN = ("m034", "m035", "m036", "m037")
NAMES_THE_TOPIC = {"m002", "m003", "m005"}
TOPIC = {"m002", "m003", "m005", "m006", "m007"}
LATER_WORRY = ("m010", "m024", "m031", "m036")


def thoughts_of(lang: str) -> list[str]:
    sample = SAMPLES[lang]
    transcript = read_transcript(sample.path, sample.channel, 10**7)
    backend = OfflineBackend()
    return [t.text for u in transcript.utterances for t in backend.extract_one(u.text).thoughts]


def speed(embedder: Embedder, texts: list[str], repeat: int) -> tuple[float, float]:
    """Batched texts per second (best of ``repeat``) and median single-text latency in ms."""
    embedder.encode_uncached(texts[:8])  # warm up
    rates = []
    for _ in range(repeat):
        started = time.perf_counter()
        embedder.encode_uncached(texts)
        rates.append(len(texts) / (time.perf_counter() - started))
    latencies = []
    for text in texts[:60]:
        started = time.perf_counter()
        embedder.encode_uncached([text])
        latencies.append((time.perf_counter() - started) * 1000)
    return max(rates), statistics.median(latencies)


def association(embedder: Embedder, folder: Path) -> dict[str, str]:
    sample = SAMPLES["ja"]
    settings = Settings(data_dir=folder, _env_file=None, embedding=embedder.settings)  # type: ignore[call-arg]
    settings = calibrated(settings, embedder)
    store = AwaiStore.open(settings)
    engine = Engine(settings, store, embedder, OfflineBackend(settings.limits))
    transcript = read_transcript(sample.path, sample.channel, 10**7)
    engine.ingest(transcript.utterances)

    def recalled(message_id: str) -> list[str]:
        context = engine.context(transcript.channel, message_id, EVERYTHING)
        return [item.source.message_id for item in context.associations]

    late = {message_id: recalled(message_id) for message_id in LATE_RETURN}
    returned = sum(1 for sources in late.values() if NAMES_THE_TOPIC & set(sources))
    pooled = [source for sources in late.values() for source in sources]
    precision = sum(source in TOPIC for source in pooled) / len(pooled) if pooled else 0.0
    worry = sum("m004" in recalled(message_id) for message_id in LATER_WORRY)
    fear = engine.context(transcript.channel, "m036", EVERYTHING).associations
    crossed = any(
        item.source.message_id == "m004" and item.thought.index == 0 and item.cue_index == 1
        for item in fear
    )
    per_message = statistics.mean(len(recalled(u.message_id)) for u in transcript.utterances)
    store.close()

    vectors = embedder.encode(thoughts_of("ja"))
    similarity = vectors @ vectors.T
    pairs = similarity[np.triu_indices(len(vectors), 1)]
    above = float((pairs >= settings.association.theta_max).mean())
    return {
        "θ_0": f"{settings.association.theta_0:.3f}",
        "return": f"{returned}/{len(LATE_RETURN)}",
        "precision": f"{precision:.2f} ({len(pooled)})",
        "worry": f"{worry}/{len(LATER_WORRY)}",
        "en→ja": "yes" if crossed else "no",
        "recalled/msg": f"{per_message:.1f}",
        "pairs ≥ θ_max": f"{above:.1%}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="Batched runs; the best counts.")
    args = parser.parse_args()
    texts = thoughts_of("ja") + thoughts_of("en")

    speed_table = Table(title=f"Embedding speed ({len(texts)} thoughts, ja + en samples)")
    for column in ("backend", "model", "dim", "load s", "batched /s", "single ms"):
        speed_table.add_column(
            column, justify="left" if column in ("backend", "model") else "right"
        )
    result_table = Table(title="Association on the Japanese sample (calibrated thresholds)")
    result_table.add_column("backend")
    result_table.add_column("θ_0", justify="right")
    for column in ("return", "precision", "worry", "en→ja", "recalled/msg", "pairs ≥ θ_max"):
        result_table.add_column(column, justify="right")
    result_table.add_column("line stored", justify="right")
    result_table.add_column("line measured", justify="right")

    for backend in BACKENDS:
        started = time.perf_counter()
        embedder = Embedder(EmbeddingSettings(backend=backend))
        embedder.encode_uncached(["起動"])  # USE reads its weights on first use
        loaded = time.perf_counter() - started
        rate, single = speed(embedder, texts, args.repeat)
        speed_table.add_row(
            backend,
            embedder.model_name,
            str(embedder.dimension),
            f"{loaded:.1f}",
            f"{rate:.0f}",
            f"{single:.1f}",
        )
        with tempfile.TemporaryDirectory() as folder:
            found = association(embedder, Path(folder))
        stored, measured = KNOWN_SCALES.get(embedder.model_name), measure_scale(embedder)
        result_table.add_row(
            backend,
            *found.values(),
            f"{stored.offset:+.3f} {stored.factor:.3f}×" if stored else "—",
            f"{measured.offset:+.3f} {measured.factor:.3f}×",
        )
    console = Console(width=160)
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    threads = os.environ.get("OMP_NUM_THREADS", "default")
    console.print(f"load average {load} on {os.cpu_count()} cores; OMP_NUM_THREADS={threads}")
    console.print(speed_table)
    console.print(result_table)


if __name__ == "__main__":
    main()
