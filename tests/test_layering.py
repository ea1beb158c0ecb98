"""The layers, checked on the source: the engine imports neither storage nor the adapters,
storage imports no adapter, and the adapters reach what is stored only through the runtime.

``bots/runtime.py`` and ``bots/records.py`` are the door: every other module of ``bots/`` (the
scheduler included) uses their operations, never the store, a database session or a storage
module other than its errors. A test that fails here names the file and line to move.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOOR = {"bots/runtime.py", "bots/records.py"}
# What an adapter may import from storage: what it raises, the heap switch every command
# turns on first, before anything is read or stored (storage/heap.py), and the lock file a
# writing command takes before it opens the store (storage/file_lock.py).
STORAGE_ALLOWED = {"storage.errors", "storage.heap", "storage.file_lock"}
# ``awai db`` migrates the database's schema before any store may open it: storage's own tool.
MIGRATIONS = {"bots/terminal/commands/db.py": {"storage", "storage.sql"}}


def _modules(folder: str) -> list[tuple[str, ast.Module]]:
    return [
        (str(path.relative_to(ROOT)), ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted((ROOT / folder).rglob("*.py"))
    ]


def _imports(tree: ast.Module) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
    return found


def test_the_engine_imports_neither_storage_nor_bots() -> None:
    wrong = [
        f"{path}:{line} imports {name}"
        for path, tree in _modules("awai_engine")
        for line, name in _imports(tree)
        if name.split(".")[0] in {"storage", "bots"}
    ]
    assert not wrong, wrong


@pytest.mark.slow
def test_storage_imports_no_adapter() -> None:
    wrong = [
        f"{path}:{line} imports {name}"
        for path, tree in _modules("storage")
        for line, name in _imports(tree)
        if name.split(".")[0] == "bots"
    ]
    assert not wrong, wrong


def test_no_adapter_module_touches_the_store_or_a_database_session() -> None:
    wrong = []
    for path, tree in _modules("bots"):
        if path in DOOR:
            continue
        allowed = STORAGE_ALLOWED | MIGRATIONS.get(path, set())
        for line, name in _imports(tree):
            if name.split(".")[0] == "storage" and name not in allowed:
                wrong.append(f"{path}:{line} imports {name}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and (
                node.attr in {"db", "session"} or (node.attr == "store" and _is_runtime(node.value))
            ):
                wrong.append(f"{path}:{node.lineno} uses .{node.attr}")
    assert not wrong, wrong


def _is_runtime(node: ast.expr) -> bool:
    """``runtime`` or ``<anything>.runtime`` (Slack's own installation ``store`` is not ours)."""
    return (isinstance(node, ast.Name) and node.id == "runtime") or (
        isinstance(node, ast.Attribute) and node.attr == "runtime"
    )


def test_no_adapter_package_imports_itself_in_a_circle():
    """Type-only imports count: a circle among an adapter's modules (the bot importing its cog,
    the cog's helpers importing the bot back) hides which module depends on which."""
    for package in ("bots/slack", "bots/discord", "bots/actions"):
        dotted = package.replace("/", ".")
        graph: dict[str, set[str]] = {}
        for path, tree in _modules(package):
            here = path.removesuffix(".py").replace("/", ".")
            graph[here] = {name for _, name in _imports(tree) if name.startswith(dotted + ".")}
            graph[here] |= {
                f"{dotted}.{alias.name}"
                for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module == dotted
                for alias in node.names
            }
        circles = [
            f"{module} reaches itself through {' → '.join(path)}"
            for module in graph
            if (path := _path_back(graph, module)) is not None
        ]
        assert not circles, circles


def _path_back(graph: dict[str, set[str]], start: str) -> list[str] | None:
    """A chain of imports from ``start`` back to itself, or ``None``."""
    stack, seen = [(start, [start])], set()
    while stack:
        module, path = stack.pop()
        for imported in graph.get(module, ()):
            if imported == start:
                return [*path, start]
            if imported not in seen:
                seen.add(imported)
                stack.append((imported, [*path, imported]))
    return None
