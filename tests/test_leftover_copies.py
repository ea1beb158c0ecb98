"""Copies of a channel's vectors a crash left are dropped, so a removal leaves no bytes in them.

A removal's last step copies the channel's live vectors into a new collection, switches SQL to it
and drops the old one (storage.reembed.Reembedder.compact): dropping is what removes a deleted
vector's bytes from Chroma's log. A process killed between the switch and the drop left the old
collection, with every removed vector still in its log, and nothing ever dropped it; one killed
before the switch left a copy nobody used. The next compaction (the next start finishes the
interrupted removal) now drops both kinds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from bots.runtime import Runtime
from storage.reembed import LEFTOVER_SECONDS
from storage.vectors import ChromaVectors, collection_name
from tests.factories import utterance
from tests.test_vector_segments import _files_holding, _vector_bytes

CHANNEL = "terminal:local:segments"  # the channel tests.test_vector_segments' helpers read


def said(number: int, speaker: str) -> Any:
    text = f"Line {number} is about the staging disk number {number} and its backups."
    return utterance(f"m{number:03d}", text, speaker=speaker, channel=CHANNEL)


def copy_name(made_at_ns: int) -> str:
    """A copy's name as a compaction or a re-embed makes it (storage.reembed)."""
    return f"{collection_name(CHANNEL)[:490]}-{made_at_ns:x}"


def collections_of_the_channel(runtime: Runtime) -> set[str]:
    return set(runtime.store.vectors.made_for(CHANNEL))


def in_use(runtime: Runtime) -> str:
    with runtime.store.db.read() as session:
        row = runtime.store.db.channel(session, CHANNEL)
        assert row is not None
        return row.collection


class Killed(BaseException):
    """What a SIGKILL is to the code it stops: nothing after it runs."""


def test_a_forget_killed_between_its_switch_and_its_drop_leaves_no_byte_once_finished(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = make_runtime()
    lines = [said(n, "zed" if n % 3 == 0 else "ann") for n in range(1, 13)]
    runtime.engine.ingest(lines)
    runtime.close()  # Chroma's files written
    runtime = make_runtime()
    zed = [u.message_id for u in lines if u.speaker_id == "zed"]
    needles = _vector_bytes(runtime, zed)
    first = in_use(runtime)
    dropping = ChromaVectors.drop

    def killed_at_the_old_ones_drop(self: ChromaVectors, name: str) -> None:
        if name == first:
            raise Killed
        dropping(self, name)

    monkeypatch.setattr(ChromaVectors, "drop", killed_at_the_old_ones_drop)
    with pytest.raises(Killed):
        runtime.schemas.forget_speaker(CHANNEL, "zed")
    monkeypatch.undo()
    runtime.close()
    assert in_use(make_runtime()) != first  # switched, and the old collection is still there
    runtime = make_runtime()
    assert first in collections_of_the_channel(runtime)

    runtime.schemas.resume_erasures()  # what the next start does

    assert _files_holding(runtime, needles) == []
    assert collections_of_the_channel(runtime) == {in_use(runtime)}
    assert runtime.store.audit(CHANNEL, thorough=True).clean


def test_a_copy_nobody_switched_to_is_dropped_once_old_and_kept_while_it_may_be_in_the_making(
    runtime: Runtime,
) -> None:
    runtime.engine.ingest([said(n, "ann") for n in range(1, 5)])
    vectors, now = runtime.store.vectors, time.time_ns()
    stale = copy_name(now - (LEFTOVER_SECONDS + 60) * 1_000_000_000)
    recent = copy_name(now - 60 * 1_000_000_000)
    for name in (stale, recent):
        vectors.create(name, CHANNEL)
    other = "terminal:local:another"
    runtime.engine.ingest([utterance("x1", "Another room's line.", channel=other)])
    others = set(vectors.made_for(other))

    runtime.engine.delete(CHANNEL, "m002")
    runtime.store.finish_erasures()  # its last step (the next start's or the scheduled job's)

    kept = collections_of_the_channel(runtime)
    assert stale not in kept and recent in kept and in_use(runtime) in kept
    assert set(vectors.made_for(other)) == others  # another channel's are not touched


def test_the_collections_made_for_a_channel_are_its_own_and_its_copies_with_their_times(
    runtime: Runtime,
) -> None:
    runtime.engine.ingest([said(n, "ann") for n in range(1, 3)])
    vectors, own = runtime.store.vectors, collection_name(CHANNEL)
    made_at = time.time_ns()
    vectors.create(copy_name(made_at), CHANNEL)
    vectors.create(f"{copy_name(made_at)}.s1", CHANNEL)  # a segment of the copy
    vectors.create(f"{own}.s1", CHANNEL)  # a segment of the channel's own
    vectors.create(collection_name("terminal:local:segments2"), "terminal:local:segments2")

    assert vectors.made_for(CHANNEL) == {own: 0, copy_name(made_at): made_at}
