"""The in-process caches that hold message words, emptied when a message is forgotten.

Some pure functions of a text are cached because chats repeat themselves (a text's vector, its
index terms, its content words, a speaker's term counts). A forgotten message must be gone
everywhere, memory included: otherwise its words would stay in a long-running bot until the
cache happened to evict them. Each such cache registers here; whatever removes messages from the
store (a deletion, a "forget me", a channel dropped) calls :func:`forget_cached_texts`. The
caches are only a saving, so emptying all of them changes no result, only the next call's cost.

In a deployment of several processes, the process that removed the message empties its caches
at once, and every other one at its next removal check (``scheduler.removal_check_seconds``,
:meth:`awai_engine.engine.Engine.drop_removed_elsewhere`), which sees the removal in the
database. Until then they hold the words (no reader gets them from there: every reading starts
from the store, where they are gone). A reading that was already running when the message went
may also put a word back after the clearing.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from functools import lru_cache
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_lock = threading.Lock()
_clearers: list[Callable[[], None]] = []
_owned: weakref.WeakSet[Any] = weakref.WeakSet()


def register(clear: Callable[[], None]) -> None:
    """Have ``clear`` called whenever messages are forgotten (for a module-level cache)."""
    with _lock:
        _clearers.append(clear)


def register_owner(owner: Any) -> None:
    """Have ``owner.forget_cached_texts()`` called whenever messages are forgotten, for as long
    as ``owner`` lives (an object that holds a cache of its own, such as the embedder)."""
    with _lock:
        _owned.add(owner)


def text_cache(maxsize: int) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """``functools.lru_cache(maxsize)``, emptied when messages are forgotten."""

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        cached = lru_cache(maxsize=maxsize)(function)
        register(cached.cache_clear)
        return cached  # type: ignore[return-value]

    return decorate


def forget_cached_texts() -> None:
    """Empty every registered cache of message words (see the module)."""
    with _lock:
        clearers, owners = list(_clearers), list(_owned)
    for clear in clearers:
        clear()
    for owner in owners:
        owner.forget_cached_texts()
