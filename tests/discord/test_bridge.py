"""The one bridge between discord.py's event loop and the actions' worker threads.

An action runs in a worker thread; every call it makes to Discord runs on the bot's event loop
and the worker waits for the answer. These tests hold the bridge to that on a real loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

import pytest

from bots.discord import bridge
from bots.discord.bridge import OnLoop


async def test_a_worker_gets_what_a_coroutine_returned_on_the_loop():
    loop_thread = threading.get_ident()
    on_loop = OnLoop.here()

    async def where() -> tuple[int, asyncio.AbstractEventLoop]:
        await asyncio.sleep(0)
        return threading.get_ident(), asyncio.get_running_loop()

    def worker() -> tuple[int, tuple[int, asyncio.AbstractEventLoop]]:
        return threading.get_ident(), on_loop.run(where())

    worker_thread, (ran_in, ran_on) = await asyncio.to_thread(worker)

    assert worker_thread != loop_thread
    assert ran_in == loop_thread and ran_on is asyncio.get_running_loop()


async def test_what_a_coroutine_raises_on_the_loop_is_raised_in_the_worker():
    on_loop = OnLoop.here()

    async def refused() -> None:
        raise LookupError("Unknown Message")

    with pytest.raises(LookupError, match="Unknown Message"):
        await asyncio.to_thread(on_loop.run, refused())


async def test_waiting_on_the_loops_own_thread_is_refused_instead_of_hanging():
    on_loop = OnLoop.here()
    ran = False

    async def never_awaited() -> None:
        nonlocal ran
        ran = True

    with pytest.raises(RuntimeError, match="worker thread"):
        on_loop.run(never_awaited())
    await asyncio.sleep(0)
    assert not ran


async def test_a_call_to_discord_that_never_answers_fails_the_worker_and_is_cancelled(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setattr(bridge, "PLATFORM_TIMEOUT_SECONDS", 0.2)
    on_loop = OnLoop.here()
    cancelled = asyncio.Event()

    async def hangs() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with pytest.raises(concurrent.futures.TimeoutError):
        await asyncio.to_thread(on_loop.run, hangs())
    await asyncio.wait_for(cancelled.wait(), 5)
