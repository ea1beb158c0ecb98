"""The fake Discord is as strict as Discord where Discord is strict (see tests/discord/README.md).

Driven over HTTP as any client would; each rule once, so a bot test that passes against the fake
has met it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from tests.discord import payloads
from tests.discord.fake_discord import FakeDiscord
from tests.discord.fake_rules import EPHEMERAL

API = "/api/v10"


@pytest.fixture
async def http(fake_discord: FakeDiscord) -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(f"http://127.0.0.1:{fake_discord.port}") as session:
        yield session


def _opened(fake_discord: FakeDiscord) -> dict[str, Any]:
    data = payloads.interaction(data=payloads.slash("help"))
    fake_discord.open_interaction(data)
    return data


async def _callback(http: aiohttp.ClientSession, data: dict[str, Any], body: dict[str, Any]):  # type: ignore[no-untyped-def]
    url = f"{API}/interactions/{data['id']}/{data['token']}/callback"
    async with http.post(url, json=body) as response:
        return response.status, await response.json()


async def _followup(http: aiohttp.ClientSession, data: dict[str, Any], body: dict[str, Any]):  # type: ignore[no-untyped-def]
    url = f"{API}/webhooks/{payloads.APPLICATION_ID}/{data['token']}?wait=true"
    async with http.post(url, json=body) as response:
        return response.status, await response.json()


async def test_an_interaction_answered_after_three_seconds_is_unknown(fake_discord, http):
    data = _opened(fake_discord)
    fake_discord.clock.advance(3.01)
    status, body = await _callback(http, data, {"type": 5, "data": {"flags": EPHEMERAL}})
    assert (status, body["code"]) == (404, 10062)


async def test_an_interaction_answers_once(fake_discord, http):
    data = _opened(fake_discord)
    assert (await _callback(http, data, {"type": 5}))[0] == 200
    status, body = await _callback(http, data, {"type": 4, "data": {"content": "again"}})
    assert (status, body["code"]) == (400, 40060)


async def test_the_first_follow_up_after_a_public_deferral_is_public_whatever_its_flags(
    fake_discord, http
):
    data = _opened(fake_discord)
    await _callback(http, data, {"type": 5, "data": {"flags": 0}})
    first = await _followup(http, data, {"content": "meant privately", "flags": EPHEMERAL})
    second = await _followup(http, data, {"content": "private", "flags": EPHEMERAL})
    assert first[0] == second[0] == 200
    assert [m.ephemeral for m in fake_discord.delivered] == [False, True]


async def test_a_follow_up_needs_an_answer_first_and_a_token_younger_than_15_minutes(
    fake_discord, http
):
    data = _opened(fake_discord)
    status, body = await _followup(http, data, {"content": "too early"})
    assert (status, body["code"]) == (404, 10015)
    await _callback(http, data, {"type": 5, "data": {"flags": EPHEMERAL}})
    fake_discord.clock.advance(15 * 60 + 1)
    status, body = await _followup(http, data, {"content": "too late"})
    assert (status, body["code"]) == (401, 50027)


@pytest.mark.parametrize(
    "message",
    [
        {"content": "x" * 2001},
        {"content": "😀" * 1001},  # 2002 UTF-16 units
        {"embeds": [{"title": "x" * 257}]},
        {"embeds": [{"description": "x" * 4097}]},
        {"embeds": [{"fields": [{"name": "n", "value": "v"}] * 26}]},
        {"embeds": [{"fields": [{"name": "x" * 257, "value": "v"}]}]},
        {"embeds": [{"fields": [{"name": "n", "value": "x" * 1025}]}]},
        {"embeds": [{"footer": {"text": "x" * 2049}}]},
        {"embeds": [{"description": "x" * 4000}, {"description": "x" * 2001}]},
        {"embeds": [{"title": "t"}] * 11},
    ],
    ids=[
        "content",
        "content-utf16",
        "title",
        "description",
        "25-fields",
        "field-name",
        "field-value",
        "footer",
        "6000-in-all",
        "10-embeds",
    ],
)
async def test_a_message_over_discords_limits_is_refused(fake_discord, http, message):
    channel = f"{API}/channels/{payloads.CHANNEL_ID}/messages"
    async with http.post(channel, json=message) as response:
        assert response.status == 400 and (await response.json())["code"] == 50035
    assert fake_discord.delivered == []


async def test_an_empty_message_is_refused(fake_discord, http):
    async with http.post(f"{API}/channels/{payloads.CHANNEL_ID}/messages", json={}) as response:
        assert (await response.json())["code"] == 50006


async def test_a_channel_of_a_guild_the_bot_is_not_in_is_missing_access(fake_discord, http):
    elsewhere = {**payloads.text_channel(payloads.SNOWFLAKES.next(), "elsewhere")}
    elsewhere["guild_id"] = str(payloads.OTHER_GUILD_ID)
    fake_discord.add_channel(elsewhere)
    for method, path in [
        ("GET", f"channels/{elsewhere['id']}"),
        ("GET", f"channels/{elsewhere['id']}/messages"),
        ("POST", f"channels/{elsewhere['id']}/messages"),
        ("GET", f"guilds/{payloads.OTHER_GUILD_ID}/threads/active"),
    ]:
        async with http.request(method, f"{API}/{path}", json={"content": "hi"}) as response:
            assert (response.status, (await response.json())["code"]) == (403, 50001), path
    async with http.get(f"{API}/channels/{payloads.SNOWFLAKES.next()}") as response:
        assert (response.status, (await response.json())["code"]) == (404, 10003)


async def test_private_archived_threads_need_manage_threads(fake_discord, http):
    path = f"{API}/channels/{payloads.CHANNEL_ID}/threads/archived/private"
    async with http.get(path) as response:
        assert (response.status, (await response.json())["code"]) == (403, 50013)
    joined = f"{API}/channels/{payloads.CHANNEL_ID}/users/@me/threads/archived/private"
    async with http.get(joined) as response:
        assert response.status == 200
