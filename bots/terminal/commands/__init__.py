"""The ``awai`` subcommands, one module each; each module has ``register(subparsers)``."""

from __future__ import annotations

from bots.terminal.commands import demo, ingest, read

COMMANDS = (demo, ingest, read)
