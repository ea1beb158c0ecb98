"""AWAI killed at random moments and its data folder damaged, then used as an operator would:
the next command succeeds within twice a clean run's memory, ``awai doctor`` is clean after at
most one ``--repair``, nothing stored is lost and nothing forgotten is left in any file.

A fast size of ``bench/recovery.py`` (which runs 30 kills on 5,000 messages): real ``awai``
processes, SIGKILLed, on a channel just large enough for Chroma to have written its index files.
"""

from __future__ import annotations

import pytest

from bench.recovery import Base, build_base, trial

MESSAGES = 1100  # Chroma writes index files from 1,000 vectors on


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Base:
    return build_base(tmp_path_factory.mktemp("recovery"), MESSAGES, ("ingest", "forget"))


@pytest.mark.parametrize(
    ("seed", "operation", "damage", "at_index_write"),
    [
        (1, "forget", "torn-header", True),
        (2, "ingest", "links-flip", True),
        (3, "forget", "chroma-sqlite-cut", False),
        (4, "ingest", "read-model-record", False),
    ],
)
@pytest.mark.slow
def test_after_a_kill_and_damage_the_folder_opens_repairs_and_keeps_everything_stored(
    base: Base, seed: int, operation: str, damage: str, at_index_write: bool
) -> None:
    result = trial(base, seed, operation, damage, at_index_write)

    assert result.damaged and not result.damaged.startswith("no "), result.damaged  # it landed
    assert result.ok, result.problems
    assert result.lost == 0 and result.forgotten_left == []
    assert len(result.doctor_codes) in (1, 3) and result.doctor_codes[-1] == 0
