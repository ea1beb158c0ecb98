"""One checkout's schema path on one prepared channel (driven by ``bench/fixed_points.py``).

Run as a script, never imported: ``python bench/fixed_points_worker.py TREE DATA BATCH TICK``.
``TREE`` goes first on ``sys.path``, so the engine measured is that checkout's; ``DATA`` is a
copy of a data folder holding one channel's first messages (an import), with the messages that
follow it, prepared, in ``fixed_points_live.pkl``. The script plays what a deployment does: the
re-clustering job catches up over the import; then the live messages arrive ``BATCH`` at a time,
each one read as it comes, with a re-clustering every ``TICK`` of them (the scheduler's tick);
then earlier messages spread over the import are read.
Clusterings are counted by wrapping the ``cluster_run`` the runs module calls (both checkouts
have it). Prints one JSON line.
"""

import json
import pickle
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

EARLIER = 150  # earlier messages read, spread evenly over the import


def main() -> None:
    tree, data = sys.argv[1], Path(sys.argv[2])
    batch_size, tick = int(sys.argv[3]), int(sys.argv[4])
    sys.path.insert(0, tree)
    import awai_engine
    import awai_engine.schemas.runs as runs_module
    from awai_engine.settings import load_settings
    from awai_engine.visibility import EVERYTHING
    from bots.runtime import open_runtime
    from storage.schemas import SchemaRunRow

    made = Counter()
    real = runs_module.cluster_run

    def counted(*args, **kwargs):
        made[phase] += 1
        return real(*args, **kwargs)

    runs_module.cluster_run = counted
    with (data / "fixed_points_live.pkl").open("rb") as handle:
        live = pickle.load(handle)
    settings = load_settings(data_dir=data)
    found: dict = {"engine": awai_engine.__file__}
    with open_runtime(settings) as runtime:
        (channel,) = runtime.channels()
        phase = "catch-up"
        found["catch_up"] = _timed(lambda: runtime.schemas.recluster(channel, force=True))
        found["catch_up_runs"] = made["catch-up"]

        live_reads, live_clustering, ticks = [], 0, []
        for start in range(0, len(live), batch_size):
            batch = live[start : start + batch_size]
            runtime.store.save(channel, batch)
            for item in batch:
                phase = "live"
                before = made["live"]
                live_reads.append(
                    _timed(
                        lambda m=item.utterance.message_id: runtime.engine.read(
                            channel, m, EVERYTHING
                        )
                    )
                )
                live_clustering += made["live"] > before
            if (start + len(batch)) % tick == 0:
                phase = "tick"
                ticks.append(_timed(lambda: runtime.schemas.recluster(channel)))
        found["live_readings"] = len(live_reads)
        found["live_on_demand"] = live_clustering
        found["live_clusterings"] = made["live"]
        found["live_read_median"] = statistics.median(r["wall"] for r in live_reads)
        found["ticks"] = ticks
        found["tick_runs"] = made["tick"]

        timeline = runtime.store.timeline(channel)
        imported = len(timeline.messages) - len(live)
        chosen = sorted({int(k * imported / EARLIER) for k in range(EARLIER)})
        earlier_reads, earlier_clustering = [], 0
        phase = "earlier"
        for position in chosen:
            before = made["earlier"]
            message_id = timeline.messages[position].message_id
            earlier_reads.append(
                _timed(lambda m=message_id: runtime.engine.read(channel, m, EVERYTHING))
            )
            earlier_clustering += made["earlier"] > before
        found["earlier_readings"] = len(earlier_reads)
        found["earlier_on_demand"] = earlier_clustering
        found["earlier_clusterings"] = made["earlier"]
        found["earlier_read_median"] = statistics.median(r["wall"] for r in earlier_reads)
        with runtime.store.db.read() as session:
            per_speaker = Counter(
                speaker for (speaker,) in session.query(SchemaRunRow.speaker_id).all()
            )
        counts = sorted(per_speaker.values())
        found["runs_per_speaker"] = {
            "speakers": len(counts),
            "median": statistics.median(counts) if counts else 0,
            "max": max(counts, default=0),
            "total": sum(counts),
        }
    print(json.dumps(found))


def _timed(action) -> dict:
    start, start_cpu = time.perf_counter(), time.process_time()
    result = action()
    found = {"wall": time.perf_counter() - start, "cpu": time.process_time() - start_cpu}
    # A re-clustering's new versions: each is one summary a language model would write.
    return {**found, "versions": getattr(result, "new_versions", 0)}


if __name__ == "__main__":
    main()
