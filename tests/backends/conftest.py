"""The backend tests: the storage and reading tests again, on a Chroma server and PostgreSQL.

One ``chroma run`` per session on 127.0.0.1 (a free port, a temp data path) and the PostgreSQL of
``AWAI_TEST_POSTGRES_URL`` (``eval "$(deploy/postgres-local.sh)"`` starts one; ``.ci/run`` does).
Every store a test opens gets its own Chroma database and PostgreSQL database; the same store
name within one test is the same store, as the same data folder is in ``tests/conftest.py``.

Without ``AWAI_TEST_POSTGRES_URL`` these tests still run against the Chroma server, with SQLite,
and the PostgreSQL checks report a skip; under ``CI=true`` a missing PostgreSQL fails instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.backends.servers import POSTGRES_ENV, ChromaServer, PostgresDatabases
from tests.conftest import StorageOverrides


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    server = ChromaServer(tmp_path_factory.mktemp("chroma-server") / "data")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresDatabases | None]:
    """Databases on the test PostgreSQL; ``None`` when none is configured outside CI."""
    url = os.environ.get(POSTGRES_ENV)
    if url is None:
        if in_ci():
            pytest.fail(
                f"CI=true but {POSTGRES_ENV} is unset: .ci/run starts PostgreSQL with"
                " deploy/postgres-local.sh and exports it."
            )
        yield None
        return
    databases = PostgresDatabases(url)
    yield databases
    databases.drop_all()


@pytest.fixture
def require_postgres(postgres: PostgresDatabases | None) -> PostgresDatabases:
    if postgres is None:
        pytest.skip(f'{POSTGRES_ENV} is unset: eval "$(deploy/postgres-local.sh)" starts one')
    return postgres


@pytest.fixture
def storage_overrides(
    chroma_server: ChromaServer, postgres: PostgresDatabases | None, tmp_path: Path
) -> StorageOverrides:
    stores: dict[str, dict[str, object]] = {}

    def overrides(name: str) -> dict[str, object]:
        if name not in stores:
            stores[name] = {"chroma_url": chroma_server.new_database_url()}
            if postgres is not None:
                stores[name]["database_url"] = postgres.new_database_url()
        return stores[name]

    return overrides
