"""The ``awai`` subcommands, one module each; each module has ``register(subparsers)``.

Modules are discovered, so a new command is a new module here and nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def _discover() -> tuple[ModuleType, ...]:
    modules = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda item: item.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "register"):
            modules.append(module)
    return tuple(modules)


COMMANDS = _discover()
