"""A speaker's runs stored together are the runs stored one at a time.

Why: a re-clustering stores a channel's runs by the thousand, so ``save_runs`` inserts a
speaker's runs and the links to their versions in bulk, each version once. What it stores must
be what storing the runs one by one stores (runs, their versions in order, which rows they share),
and runs that give one version two sets of members (never the runs of one history) keep the
one-by-one behaviour: the later removes the row the earlier linked, with that run.
"""

from __future__ import annotations

from collections.abc import Callable

from awai_engine.schemas.model import SchemaRun, SchemaState
from bots.runtime import Runtime
from tests.factories import schema_state

CHANNEL = "terminal:local:runs"


def _state(schema_id: str, version: int, members: list[str]) -> SchemaState:
    return schema_state(schema_id, members, version, summary=None)


def _run(count: int, *states: SchemaState) -> SchemaRun:
    return SchemaRun(
        channel=CHANNEL,
        speaker_id="ann",
        speaker_name="Ann",
        method="test",
        basis_count=count,
        basis_digest=f"digest-{count}",
        basis_message_id=f"m{count}",
        states=states,
    )


A4 = _state("sA", 4, ["m1#0", "m2#0", "m3#0"])
B6 = _state("sB", 6, ["m4#0", "m5#0", "m6#0"])
A8 = _state("sA", 8, ["m1#0", "m2#0", "m3#0", "m7#0"])
CHAIN = [_run(4, A4), _run(6, A4, B6), _run(8, A8, B6), _run(12, A8, B6)]


def _stored(runtime: Runtime) -> list[tuple[int, list[tuple[str, int, tuple[str, ...]]]]]:
    schemas = runtime.store.schemas
    found = []
    for run in CHAIN:
        stored = schemas.run_with_basis(CHANNEL, "ann", "test", run.basis_digest)
        assert stored is not None
        found.append(
            (stored.basis_count, [(s.schema_id, s.version, s.members) for s in stored.states])
        )
    return found


def test_a_speakers_runs_stored_together_are_those_stored_one_by_one(
    make_runtime: Callable[..., Runtime],
) -> None:
    together, one_by_one = make_runtime("together"), make_runtime("one-by-one")
    for runtime in (together, one_by_one):
        runtime.store.ensure_channel(CHANNEL, "model", 3)
    saved = together.store.schemas.save_runs(CHAIN)
    for run in CHAIN:
        one_by_one.store.schemas.save_runs([run])
    assert [run.run_id for run in saved] == sorted({run.run_id for run in saved})
    expected = [
        (run.basis_count, [(s.schema_id, s.version, s.members) for s in run.states])
        for run in CHAIN
    ]
    assert _stored(together) == _stored(one_by_one) == expected
    versions = [
        [(v.schema_id, v.version, v.members) for v in runtime.store.schemas.versions(CHANNEL)]
        for runtime in (together, one_by_one)
    ]
    assert versions[0] == versions[1]
    assert len(versions[0]) == 3  # A4, B6 and A8, each stored once though runs share them


def test_runs_giving_a_version_two_sets_of_members_are_stored_one_at_a_time(
    runtime: Runtime,
) -> None:
    runtime.store.ensure_channel(CHANNEL, "model", 3)
    other = _state("sA", 4, ["m1#0", "m9#0", "m3#0"])
    first, second = _run(4, A4), _run(5, other)
    runtime.store.schemas.save_runs([first, second])
    schemas = runtime.store.schemas
    assert schemas.run_with_basis(CHANNEL, "ann", "test", first.basis_digest) is None
    kept = schemas.run_with_basis(CHANNEL, "ann", "test", second.basis_digest)
    assert kept is not None and [s.members for s in kept.states] == [other.members]
    assert [v.members for v in schemas.versions(CHANNEL)] == [other.members]
