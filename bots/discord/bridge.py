"""The one bridge between discord.py's event loop and AWAI's blocking work.

Why one: an action (:mod:`bots.actions`) is written once, as plain blocking code, for Slack's
worker threads and Discord alike; storage and the engine block for milliseconds to seconds, and
the event loop must keep answering Discord's heartbeats meanwhile. So a Discord listener hands a
whole action to a worker thread (``await asyncio.to_thread(action, …)``), and the few things the
action asks of Discord (fetch a message, post, edit) come back to the loop through
:class:`OnLoop`, the worker waiting for their answer. One hop each way per action, instead of an
``asyncio.to_thread`` around every storage call; the scheduler's threads post through it too.

One rule keeps it from locking up: a coroutine run through :meth:`OnLoop.run` talks to Discord
only, and never waits on a worker thread itself (``asyncio.to_thread``): its caller already holds
one, and enough callers doing so would leave the pool no thread to run the inner work.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

Result = TypeVar("Result")

PLATFORM_TIMEOUT_SECONDS = 120.0
"""The longest a worker waits for one call to Discord (discord.py retries rate limits itself);
beyond it the action fails as any failed call does, rather than holding its thread for ever."""


class OnLoop:
    """Runs Discord's coroutines on the bot's event loop for code in a worker thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    @classmethod
    def here(cls) -> OnLoop:
        """The bridge to the loop running now (call it from a coroutine, before the hop)."""
        return cls(asyncio.get_running_loop())

    def run(self, coroutine: Coroutine[Any, Any, Result]) -> Result:
        """Run ``coroutine`` on the loop and wait for its result (its exception is raised here).

        Only from a worker thread: waiting on the loop's own thread would stop the loop that
        has to run it, so that is refused at once instead of hanging.
        """
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            coroutine.close()
            raise RuntimeError("OnLoop.run waits for the event loop; call it from a worker thread")
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            return future.result(PLATFORM_TIMEOUT_SECONDS)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise
