"""Server settings that cannot work stop AWAI with a message saying which setting and why."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from awai_engine.settings import SettingsError, load_settings
from storage.store import AwaiStore, StorageError
from storage.vectors import ChromaVectors
from tests.backends.servers import ChromaServer, PostgresDatabases, free_port


def test_a_chroma_url_that_is_not_a_server_address_names_the_setting() -> None:
    for url in ("chroma:8000", "ftp://host:8000", "http://host:8000/a b", "http://host/x/y"):
        with pytest.raises(SettingsError, match="AWAI_CHROMA_URL") as raised:
            load_settings(chroma_url=url, _env_file=None)
        assert "http(s)://host[:port][/database]" in str(raised.value)


def test_an_unreachable_chroma_server_is_a_storage_error_naming_the_setting(
    tmp_path: Path,
) -> None:
    url = f"http://127.0.0.1:{free_port()}/awai"  # nothing listens there
    settings = load_settings(data_dir=tmp_path, chroma_url=url, _env_file=None)
    with pytest.raises(StorageError, match="AWAI_CHROMA_URL") as raised:
        AwaiStore.open(settings)
    assert url in str(raised.value)
    assert not (tmp_path / "chroma").exists()  # no embedded folder made behind the user's back


def test_a_wrong_postgresql_password_is_reported_without_the_password(
    require_postgres: PostgresDatabases, tmp_path: Path
) -> None:
    url = require_postgres.url.set(password="not-the-password-42")
    settings = load_settings(
        data_dir=tmp_path,
        database_url=url.render_as_string(hide_password=False),
        _env_file=None,
    )
    with pytest.raises(StorageError, match="password authentication failed") as raised:
        AwaiStore.open(settings)
    assert "not-the-password-42" not in str(raised.value)


@pytest.mark.slow
def test_processes_opening_one_new_chroma_database_at_once_all_get_it(
    chroma_server: ChromaServer,
) -> None:
    url = chroma_server.new_database_url()
    with ThreadPoolExecutor(8) as pool:
        opened = list(pool.map(lambda _: ChromaVectors.server(url), range(8)))
    opened[0].create("awai-shared", "k")
    assert all(vectors.count("awai-shared") == 0 for vectors in opened)
