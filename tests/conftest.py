"""Shared fixtures: real parts everywhere (MiniLM, embedded Chroma, SQLite) in temp folders.

The embedding model loads once per test session; every test gets its own data folder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from awai_engine.backends.offline import OfflineBackend
from awai_engine.embedding import Embedder
from awai_engine.settings import EmbeddingSettings, Settings
from bots.runtime import Runtime
from bots.settings import BotSettings
from storage.store import AwaiStore


@pytest.fixture(autouse=True)
def _no_real_anthropic(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's own ANTHROPIC_API_KEY must not turn tests' offline runtimes into paid calls
    to the real API (tests that want the model point it at the local fake explicitly)."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return Embedder(EmbeddingSettings())


StorageOverrides = Callable[[str], dict[str, object]]


@pytest.fixture
def storage_overrides() -> StorageOverrides:
    """Where the store called ``name`` keeps its data besides its folder: nothing here (SQLite and
    embedded Chroma in the folder). ``tests/backends`` answers with PostgreSQL and a Chroma server."""
    return lambda name: {}


@pytest.fixture
def settings(tmp_path: Path, storage_overrides: StorageOverrides) -> Settings:
    return Settings(data_dir=tmp_path / "data", _env_file=None, **storage_overrides("data"))  # type: ignore[call-arg]


@pytest.fixture
def make_runtime(
    tmp_path: Path, embedder: Embedder, storage_overrides: StorageOverrides
) -> Iterator[Callable[..., Runtime]]:
    """Build runtimes on fresh data folders (``name`` picks the folder), closed after the test."""
    opened: list[Runtime] = []

    def make(name: str = "data", **overrides: object) -> Runtime:
        settings = BotSettings(  # type: ignore[call-arg]
            data_dir=tmp_path / name, _env_file=None, **storage_overrides(name), **overrides
        )
        store = AwaiStore.open(settings)
        runtime = Runtime(settings, store, embedder, OfflineBackend(settings.limits))
        opened.append(runtime)
        return runtime

    yield make
    for runtime in opened:
        runtime.close()


@pytest.fixture
def runtime(make_runtime: Callable[..., Runtime]) -> Runtime:
    return make_runtime()
