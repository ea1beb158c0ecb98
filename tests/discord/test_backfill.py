"""Backfill: history read oldest first in pages, a persisted cursor, a restart in the middle."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bots.discord.backfill import BackfillProgress
from bots.discord.keys import channel_key
from tests.discord import payloads
from tests.discord.conftest import KEY, Harness
from tests.discord.payloads import BOB, MOD, SNOWFLAKES

PAGE = 10


def _history(count: int) -> list[dict[str, Any]]:
    """``count`` messages, every seventh one a bot's (skipped, but the cursor passes it)."""
    return [
        payloads.message(
            SNOWFLAKES.next(),
            author=payloads.BOT_USER if n % 7 == 6 else (payloads.ANN, BOB)[n % 2],
            content=f"History message {n} about the garden.",
        )
        for n in range(count)
    ]


def _backfill_command() -> dict[str, Any]:
    return payloads.interaction(
        data=payloads.slash("backfill"),
        person=MOD,
        roles=(payloads.MODERATOR_ROLE_ID,),
        permissions=payloads.VIEW_AND_HISTORY | payloads.MANAGE_MESSAGES,
    )


async def _run(harness: Harness) -> BackfillProgress | None:
    await harness.interact(_backfill_command())
    task = harness.cog.running_backfill(payloads.CHANNEL_ID)
    assert task is not None
    return await asyncio.wait_for(task, 60)


def _afters(harness: Harness) -> list[int]:
    return [
        int(r.query["after"])
        for r in harness.server.calls("GET", "/messages")
        if "after" in r.query
    ]


@pytest.mark.slow
async def test_backfill_across_pages_with_a_restart_midway_loses_nothing_and_stores_nothing_twice(
    start_bot, make_runtime, fake_discord
):
    history = _history(35)
    people = [m["id"] for m in history if not m["author"].get("bot")]
    fake_discord.add_channel(payloads.text_channel(payloads.CHANNEL_ID, "general"), history)
    settings = {"discord": {"backfill_page_size": PAGE}}

    first = await start_bot(make_runtime("data", **settings))
    await first.post(history[3])  # one message already arrived live
    fake_discord.hold_history_from = 3  # the third page request never answers: the process dies
    await first.interact(_backfill_command())
    task = first.cog.running_backfill(payloads.CHANNEL_ID)
    assert task is not None
    for _ in range(600):
        saved = first.runtime.store.cursors.get(KEY)
        if saved and saved.fetched == 2 * PAGE:
            break
        await asyncio.sleep(0.05)
    assert saved is not None and saved.cursor == history[2 * PAGE - 1]["id"]
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await first.bot.close()
    first.runtime.close()
    fake_discord.hold_history_from = None
    fake_discord.release()

    afters_before_restart = len(_afters(first))
    second = await start_bot(make_runtime("data", **settings))
    progress = await _run(second)

    assert progress is not None and progress.done and progress.resumed
    assert list(second.stored()) == people  # everything, in order, once
    assert second.runtime.store.message_count(KEY) == len(people)
    stored_in_first_run = [m for m in people[:] if int(m) <= int(history[2 * PAGE - 1]["id"])]
    assert progress.added == len(people) - len(stored_in_first_run)  # no page stored twice
    afters = _afters(second)[afters_before_restart:]
    assert afters[0] == int(history[2 * PAGE - 1]["id"])  # resumed at the cursor
    status_edits = [r.body["content"] for r in fake_discord.calls("PATCH", "/messages/")]
    assert "has read this channel's history" in status_edits[-1]


async def test_a_second_backfill_reads_only_what_came_after(harness: Harness):
    history = _history(12)
    harness.server.add_channel(payloads.text_channel(payloads.CHANNEL_ID, "general"), history)
    await _run(harness)
    newer = _history(3)
    harness.server.messages[payloads.CHANNEL_ID].extend(newer)
    requests_before = len(_afters(harness))
    progress = await _run(harness)
    assert progress is not None and progress.added == 3
    assert _afters(harness)[requests_before] == int(history[-1]["id"])
    assert len(harness.stored()) == len([m for m in history + newer if not m["author"].get("bot")])


@pytest.mark.slow
async def test_a_thread_is_backfilled_into_its_parent_channel(harness: Harness):
    replies = [
        payloads.message(SNOWFLAKES.next(), channel_id=payloads.THREAD_ID, content=f"Reply {n}.")
        for n in range(3)
    ]
    harness.server.add_channel(
        payloads.thread(payloads.THREAD_ID, payloads.CHANNEL_ID, "plans"), replies
    )
    thread_channel = payloads.thread(payloads.THREAD_ID, payloads.CHANNEL_ID, "plans")
    command = {**_backfill_command(), "channel": thread_channel, "channel_id": thread_channel["id"]}
    await harness.interact(command)
    task = harness.cog.running_backfill(payloads.THREAD_ID)
    assert task is not None
    await asyncio.wait_for(task, 60)
    utterances = harness.utterances(channel_key(payloads.GUILD_ID, payloads.CHANNEL_ID))
    assert [u.text for u in utterances] == ["Reply 0.", "Reply 1.", "Reply 2."]
    assert {u.thread_root for u in utterances} == {str(payloads.THREAD_ID)}


async def test_backfill_is_for_people_who_may_manage_messages(harness: Harness):
    await harness.interact(payloads.interaction(data=payloads.slash("backfill")))
    (callback,) = [r.body for r in harness.server.calls("POST", "/callback")]
    assert callback["type"] == 4 and "manage messages" in callback["data"]["content"]
    assert harness.cog.running_backfill(payloads.CHANNEL_ID) is None


async def test_an_owner_may_backfill_without_managing_messages(start_bot):
    harness = await start_bot(discord={"owner_ids": [payloads.ANN_ID]})
    harness.server.add_channel(payloads.text_channel(payloads.CHANNEL_ID, "general"), _history(2))
    await harness.interact(payloads.interaction(data=payloads.slash("backfill")))
    task = harness.cog.running_backfill(payloads.CHANNEL_ID)
    assert task is not None
    progress = await asyncio.wait_for(task, 60)
    assert progress is not None and progress.added == 2


@pytest.mark.slow
async def test_a_backfill_that_fails_says_so_in_its_status_and_the_next_one_goes_on(
    harness: Harness,
):
    history = _history(12)
    harness.server.add_channel(payloads.text_channel(payloads.CHANNEL_ID, "general"), history)
    ingest = harness.runtime.engine.ingest

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    harness.runtime.engine.ingest = full_disk  # type: ignore[method-assign]

    assert await _run(harness) is None
    status = [r.body["content"] for r in harness.server.calls("PATCH", "/messages/")]
    assert "stopped" in status[-1] and "run `/awai backfill` again" in status[-1].lower()
    assert "disk full" not in status[-1]

    harness.runtime.engine.ingest = ingest  # type: ignore[method-assign]
    progress = await _run(harness)
    assert progress is not None and progress.done
    assert len(harness.stored()) == len([m for m in history if not m["author"].get("bot")])


@pytest.mark.slow
async def test_a_backfill_a_stop_interrupted_is_finished_by_the_next_start_on_its_own(
    start_bot, make_runtime, fake_discord
):
    history = _history(25)
    people = [m["id"] for m in history if not m["author"].get("bot")]
    fake_discord.add_channel(payloads.text_channel(payloads.CHANNEL_ID, "general"), history)
    settings = {"discord": {"backfill_page_size": PAGE}}
    first = await start_bot(make_runtime("data", **settings))
    fake_discord.hold_history_from = 2  # the second page never answers: the process stops
    await first.interact(_backfill_command())
    task = first.cog.running_backfill(payloads.CHANNEL_ID)
    assert task is not None
    for _ in range(600):
        if (saved := first.runtime.store.cursors.get(KEY)) and saved.fetched == PAGE:
            break
        await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await first.bot.close()
    first.runtime.close()
    fake_discord.hold_history_from = None
    fake_discord.release()

    second = await start_bot(make_runtime("data", **settings))
    await second._dispatched(lambda: second.bot._connection.parse_resumed({}))  # type: ignore[arg-type]
    catching_up = second.cog.catch_up.running(payloads.GUILD_ID)
    assert catching_up is not None
    await asyncio.wait_for(catching_up, 60)

    assert list(second.stored()) == people  # no command needed, nothing twice
    saved = second.runtime.store.cursors.get(KEY)
    assert saved is not None and saved.done
