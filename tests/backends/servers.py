"""Real servers for the backend tests: `chroma run` on 127.0.0.1, and databases on a PostgreSQL.

Both hand out a fresh, empty database per store, so tests sharing one server never see each
other's data: a Chroma database (Chroma's own namespace inside a server) per store, and a
PostgreSQL database copied from a template that was migrated once.
"""

from __future__ import annotations

import itertools
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from sqlalchemy import create_engine, make_url, text

from storage.sql import Database

POSTGRES_ENV = "AWAI_TEST_POSTGRES_URL"
START_TIMEOUT_SECONDS = 30.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ChromaServer:
    """``chroma run`` (from the chromadb package in this virtualenv) on a loopback port."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        chroma = Path(sys.executable).with_name("chroma")
        self.log = path.with_suffix(".log")
        command = [str(chroma), "run", "--path", str(path), "--host", "127.0.0.1"]
        command += ["--port", str(self.port)]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                # As deploy/README.md runs it: freed memory cannot reach the index files.
                env={**os.environ, "ANONYMIZED_TELEMETRY": "False", "MALLOC_PERTURB_": "255"},
            )
        self._databases = itertools.count()
        self._wait_until_up()

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"chroma run exited: {self.log.read_text(errors='replace')}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(
            f"chroma run did not answer on {self.url} within {START_TIMEOUT_SECONDS} s"
        )

    def new_database_url(self) -> str:
        """The URL of a Chroma database nobody has used (created on first open)."""
        return f"{self.url}/awai-{os.getpid()}-{next(self._databases)}"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class PostgresDatabases:
    """Fresh databases on the PostgreSQL at ``url``, each a copy of one migrated template."""

    def __init__(self, url: str) -> None:
        self.url = make_url(url)
        self.admin = create_engine(self.url, isolation_level="AUTOCOMMIT", pool_pre_ping=True)
        prefix = f"awai_test_{os.getpid()}"
        self._names = (f"{prefix}_{n}" for n in itertools.count())
        self.template = f"{prefix}_template"
        self.created: list[str] = []
        self._create(self.template)
        migrated = Database(self.url_of(self.template))  # applies the migrations, then lets go
        migrated.dispose()

    def url_of(self, name: str) -> str:
        return self.url.set(database=name).render_as_string(hide_password=False)

    def new_database_url(self, migrated: bool = True) -> str:
        """A new database: a copy of the migrated template, or empty."""
        name = next(self._names)
        self._create(name, template=self.template if migrated else None)
        return self.url_of(name)

    def _create(self, name: str, template: str | None = None) -> None:
        with self.admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            copy = f' TEMPLATE "{template}"' if template else ""
            connection.execute(text(f'CREATE DATABASE "{name}"{copy}'))
        self.created.append(name)

    def drop_all(self) -> None:
        with self.admin.connect() as connection:
            for name in reversed(self.created):
                connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        self.admin.dispose()
