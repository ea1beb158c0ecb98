"""Threads in backfill, and catching up after downtime, channels and threads alike.

The fake Discord lists a guild's active threads and a channel's archived public and private
threads as Discord does (private archived ones only with Manage Threads; otherwise the ones the
bot joined). Catch-up is started by the events discord.py dispatches from its own parsers:
``GUILD_CREATE`` of an available guild (start, reconnect) and ``RESUMED``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from bots.actions.catchup import catch_up
from bots.discord.bridge import OnLoop
from bots.discord.catchup import DiscordServer
from bots.discord.keys import private_thread_scope
from tests.discord import payloads
from tests.discord.conftest import KEY, Harness
from tests.discord.fake_discord import MANAGE_THREADS
from tests.discord.payloads import ANN, BOB, MOD, SNOWFLAKES

MODERATOR = {
    "person": MOD,
    "roles": (payloads.MODERATOR_ROLE_ID,),
    "permissions": payloads.VIEW_AND_HISTORY | payloads.MANAGE_MESSAGES,
}


def _thread(name: str, archived: bool = False, private: bool = False) -> dict[str, Any]:
    data = payloads.thread(SNOWFLAKES.next(), payloads.CHANNEL_ID, name, private=private)
    data["thread_metadata"]["archived"] = archived
    if archived:
        data["thread_metadata"]["archive_timestamp"] = payloads.iso_now()
    return data


def _messages(channel_id: int, count: int, topic: str) -> list[dict[str, Any]]:
    return [
        payloads.message(
            SNOWFLAKES.next(),
            channel_id=channel_id,
            author=(ANN, BOB)[n % 2],
            content=f"{topic} message {n} about the garden.",
        )
        for n in range(count)
    ]


def _add(harness: Harness, thread: dict[str, Any], count: int) -> list[dict[str, Any]]:
    said = _messages(int(thread["id"]), count, thread["name"])
    harness.server.add_channel(thread, said)
    return said


async def _backfill(harness: Harness):  # type: ignore[no-untyped-def]
    await harness.interact(payloads.interaction(data=payloads.slash("backfill"), **MODERATOR))
    task = harness.cog.running_backfill(payloads.CHANNEL_ID)
    assert task is not None
    return await asyncio.wait_for(task, 60)


def _may_manage_threads(harness: Harness) -> None:
    """The bot gets the moderators' role, with Manage Threads: on the fake server and in the
    guild the gateway sent (which is what discord.py computes the bot's permissions from)."""
    harness.server.bot_permissions[payloads.CHANNEL_ID] = payloads.VIEW_AND_HISTORY | MANAGE_THREADS
    guild = payloads.guild()
    guild["roles"][1]["permissions"] = str(int(guild["roles"][1]["permissions"]) | MANAGE_THREADS)
    guild["members"] = [payloads.member(payloads.BOT_USER, roles=(payloads.MODERATOR_ROLE_ID,))]
    harness.bot._connection._add_guild_from_data(guild)  # type: ignore[arg-type]


def _texts(harness: Harness) -> list[str]:
    return list(harness.stored().values())


async def test_backfill_of_a_channel_reads_its_active_and_archived_threads(harness: Harness):
    harness.server.add_channel(
        payloads.text_channel(payloads.CHANNEL_ID, "general"),
        _messages(payloads.CHANNEL_ID, 3, "channel"),
    )
    _may_manage_threads(harness)
    active = _add(harness, _thread("active"), 2)
    archived = _add(harness, _thread("archived", archived=True), 2)
    hidden = _thread("hidden", archived=True, private=True)
    private = _add(harness, hidden, 2)

    progress = await _backfill(harness)

    texts = _texts(harness)
    for said in (active, archived, private):
        assert [m["content"] for m in said] == [
            t for t in texts if t.split()[0] == said[0]["content"].split()[0]
        ]
    assert private_thread_scope(int(hidden["id"])) in harness.runtime.engine.scopes_of(KEY)
    assert progress.added == 3 + 2 + 2 + 2
    status = [r.body["content"] for r in harness.server.calls("PATCH", "/messages/")]
    assert "and 4 of its threads" in status[-1]  # the guild's own "plans" thread too


async def test_without_manage_threads_only_private_archived_threads_awai_joined_are_read(
    harness: Harness,
):
    harness.server.add_channel(payloads.text_channel(payloads.CHANNEL_ID, "general"))
    joined = _thread("joined", archived=True, private=True)
    other = _thread("other", archived=True, private=True)
    joined_said = _add(harness, joined, 2)
    _add(harness, other, 2)
    harness.server.thread_members[int(joined["id"])] = {payloads.APPLICATION_ID}

    await _backfill(harness)

    assert _texts(harness) == [m["content"] for m in joined_said]


async def test_a_second_backfill_goes_on_from_each_threads_cursor(harness: Harness):
    harness.server.add_channel(payloads.text_channel(payloads.CHANNEL_ID, "general"))
    thread = _thread("ideas")
    first = _add(harness, thread, 3)
    await _backfill(harness)
    later = _messages(int(thread["id"]), 2, "ideas")
    harness.server.messages[int(thread["id"])].extend(later)

    progress = await _backfill(harness)

    assert progress.added == 2
    afters = [
        r.query.get("after")
        for r in harness.server.calls("GET", f"/channels/{thread['id']}/messages")
    ]
    assert afters[-1] == first[-1]["id"]  # resumed after the last page stored
    assert _texts(harness) == [m["content"] for m in first + later]


async def _away(harness: Harness) -> dict[str, list[dict[str, Any]]]:
    """AWAI read a channel and its "plans" thread, then was away while people went on talking:
    in the channel, in "plans", in a thread started meanwhile, in one archived meanwhile."""
    channel = payloads.text_channel(payloads.CHANNEL_ID, "general")
    plans = payloads.thread(payloads.THREAD_ID, payloads.CHANNEL_ID, "plans")
    seen_channel = _messages(payloads.CHANNEL_ID, 2, "seen")
    seen_thread = _messages(payloads.THREAD_ID, 1, "seen-plans")
    harness.server.add_channel(channel, seen_channel)
    harness.server.add_channel(plans, seen_thread)
    await harness.post(*seen_channel, *seen_thread)
    away = {
        "channel": _messages(payloads.CHANNEL_ID, 3, "missed"),
        "plans": _messages(payloads.THREAD_ID, 2, "missed-plans"),
    }
    harness.server.messages[payloads.CHANNEL_ID].extend(away["channel"])
    harness.server.messages[payloads.THREAD_ID].extend(away["plans"])
    away["new"] = _add(harness, _thread("new"), 2)
    away["archived"] = _add(harness, _thread("archived", archived=True), 2)
    return away


async def _caught_up(harness: Harness) -> None:
    task = harness.cog.catch_up.running(payloads.GUILD_ID)
    assert task is not None, "no catch-up was started"
    await asyncio.wait_for(task, 60)


@pytest.mark.slow
async def test_when_the_server_becomes_available_what_was_said_meanwhile_is_read(
    harness: Harness, caplog
):
    caplog.set_level(logging.INFO, logger="bots.actions.catchup")
    away = await _away(harness)
    harness.server.rate_limits["/messages"] = 2  # Discord asks AWAI to slow down twice

    await harness._dispatched(lambda: harness.bot._connection.parse_guild_create(payloads.guild()))  # type: ignore[arg-type]
    await _caught_up(harness)

    texts = _texts(harness)
    for said in away.values():
        assert all(m["content"] in texts for m in said)
    assert len(texts) == len(set(texts)) == 3 + sum(len(said) for said in away.values())
    assert "Caught up server" in caplog.text and "9 new message(s)" in caplog.text


async def test_on_resume_only_what_is_new_is_fetched(harness: Harness):
    away = await _away(harness)
    await harness._dispatched(lambda: harness.bot._connection.parse_resumed({}))  # type: ignore[arg-type]
    await _caught_up(harness)
    stored = len(harness.stored())
    before = len(harness.server.calls("GET", "/messages"))

    await harness._dispatched(lambda: harness.bot._connection.parse_resumed({}))  # type: ignore[arg-type]
    await _caught_up(harness)

    assert len(harness.stored()) == stored == 3 + sum(len(s) for s in away.values())
    afters = [r.query.get("after") for r in harness.server.calls("GET", "/messages")[before:]]
    assert afters and all(after is not None for after in afters)  # never from the beginning


@pytest.mark.slow
async def test_an_interrupted_catch_up_resumes_where_it_stopped_though_newer_messages_arrived(
    start_bot, make_runtime, fake_discord
):
    settings = {"discord": {"backfill_page_size": 10}}
    first = await start_bot(make_runtime("data", **settings))
    seen = _messages(payloads.CHANNEL_ID, 1, "seen")
    fake_discord.add_channel(payloads.text_channel(payloads.CHANNEL_ID, "general"), seen)
    await first.post(*seen)
    missed = _messages(payloads.CHANNEL_ID, 25, "missed")
    fake_discord.messages[payloads.CHANNEL_ID].extend(missed)
    fake_discord.hold_history_from = fake_discord.history_requests + 2  # the second page hangs
    await first._dispatched(lambda: first.bot._connection.parse_resumed({}))  # type: ignore[arg-type]
    task = first.cog.catch_up.running(payloads.GUILD_ID)
    assert task is not None
    for _ in range(600):
        if len(first.stored()) == 11:
            break
        await asyncio.sleep(0.05)
    live = _messages(payloads.CHANNEL_ID, 1, "live")
    fake_discord.messages[payloads.CHANNEL_ID].extend(live)
    await first.post(*live)  # stored past the gap while the catch-up is stuck
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await first.bot.close()
    first.runtime.close()
    fake_discord.hold_history_from = None
    fake_discord.release()

    second = await start_bot(make_runtime("data", **settings))
    await second._dispatched(lambda: second.bot._connection.parse_resumed({}))  # type: ignore[arg-type]
    await _caught_up(second)

    assert list(second.stored()) == [m["id"] for m in seen + missed + live]
    assert second.runtime.store.message_count(KEY) == 27


async def test_a_catch_up_the_bot_stopped_reads_no_further_channel(harness: Harness):
    away = await _away(harness)
    server = DiscordServer(OnLoop.here(), harness.guild, harness.runtime)
    before = harness.server.history_requests

    server.stopped.set()  # what cancelling the catch-up's task does
    caught = await asyncio.to_thread(catch_up, harness.runtime, server)

    assert (caught.channels, caught.added) == (0, 0)
    assert harness.server.history_requests == before, "nothing more was asked of Discord"
    assert not any(m["content"] in _texts(harness) for m in away["channel"])
