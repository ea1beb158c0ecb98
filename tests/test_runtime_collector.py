"""A started process keeps what its start opened out of the garbage collector's full passes,
and gives it back when the runtime closes."""

from __future__ import annotations

import gc
from pathlib import Path

from bots.runtime import open_runtime
from bots.settings import BotSettings


def test_what_a_start_opened_is_out_of_full_collections_until_the_runtime_closes(
    tmp_path: Path,
) -> None:
    gc.unfreeze()
    runtime = open_runtime(BotSettings(data_dir=tmp_path / "data", _env_file=None))  # type: ignore[call-arg]
    try:
        assert gc.get_freeze_count() > 0  # the modules, settings and store: not walked again
    finally:
        runtime.close()
    assert gc.get_freeze_count() == 0  # a closed runtime's cycles are collectable again
