"""Every route ends with an answer the asker sees, and only the asker sees a refusal or an error.

Interactions arrive as Discord sends them, through discord.py's own
``ConnectionState.parse_interaction_create`` and the command tree's dispatch (the path where a
context menu's errors reach only ``CommandTree.on_error``). What people see is read from the fake
server's :attr:`~tests.discord.fake_discord.FakeDiscord.delivered`, which applies Discord's rule
that the first follow-up after a deferral keeps the deferral's visibility whatever its flags say.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.discord import payloads
from tests.discord.conftest import Harness
from tests.discord.payloads import BOB, CAROL, MOD, SNOWFLAKES

INTERNALS = ("Traceback", "RuntimeError", "disk I/O", "discord:")

CONVERSATION = [
    (payloads.ANN, "Should we pin the parser version before the release?"),
    (BOB, "Yes, the new parser broke two plugins last week."),
    (CAROL, "Pinning it is fine as long as we upgrade after the release."),
]


async def _conversation(harness: Harness) -> list[dict[str, Any]]:
    datas = [
        payloads.message(SNOWFLAKES.next(), author=person, content=text)
        for person, text in CONVERSATION
    ]
    harness.server.add_channel(payloads.text_channel(payloads.CHANNEL_ID, "general"), datas)
    await harness.post(*datas)
    return datas


def _fail_once(owner: object, name: str) -> list[int]:
    """Make ``owner.name`` raise once, as a broken disk would; returns the calls made."""
    original = getattr(owner, name)
    calls: list[int] = []

    def failing(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("disk I/O error in /var/lib/awai (internal detail)")
        return original(*args, **kwargs)

    setattr(owner, name, failing)
    return calls


def _menu(datas: list[dict[str, Any]]) -> dict[str, Any]:
    return payloads.message_menu(datas[-1])


def _slash(datas: list[dict[str, Any]]) -> dict[str, Any]:
    return payloads.slash("read", message=datas[-1]["id"])


@pytest.mark.parametrize("route", [_menu, _slash], ids=["read-with-awai-menu", "slash-read"])
async def test_a_failing_reading_ends_with_a_private_apology_and_asking_again_reads_it(
    harness: Harness, route: Callable[[list[dict[str, Any]]], dict[str, Any]]
):
    datas = await _conversation(harness)
    _fail_once(harness.runtime.engine, "read")

    await harness.interact(payloads.interaction(data=route(datas)))

    (apology,) = harness.server.private(payloads.ANN_ID)
    assert "could not finish" in apology.content and "try again" in apology.content
    assert not any(word in apology.content for word in INTERNALS)
    assert harness.server.public() == []

    await harness.interact(payloads.interaction(data=route(datas)))  # at once, same person

    apology_then_reading = harness.server.private(payloads.ANN_ID)
    assert len(apology_then_reading) == 2
    assert "Pinning it is fine" in apology_then_reading[1].embeds[0]["description"]


@pytest.mark.parametrize(
    ("command", "owner", "method"),
    [("digest", "schemas", "digest"), ("forget-me", "schemas", "forget_speaker")],
)
async def test_a_failing_command_ends_with_a_private_apology(
    harness: Harness, command: str, owner: str, method: str
):
    await _conversation(harness)
    _fail_once(getattr(harness.runtime, owner), method)

    await harness.interact(payloads.interaction(data=payloads.slash(command)))

    (apology,) = harness.server.private(payloads.ANN_ID)
    assert "could not finish" in apology.content
    assert not any(word in apology.content for word in INTERNALS)
    assert harness.server.public() == []


async def test_a_command_discord_still_offers_but_awai_no_longer_has_is_answered(
    harness: Harness,
):
    stale = {**payloads.slash("read"), "options": [{"name": "summarise", "type": 1}]}
    await harness.interact(payloads.interaction(data=stale))
    (answer,) = harness.server.private(payloads.ANN_ID)
    assert "out of date" in answer.content
    assert answer.route == "response"


async def test_in_public_mode_a_refusal_after_acknowledging_is_seen_only_by_the_asker(start_bot):
    harness = await start_bot(discord={"ephemeral_readings": False})
    await _conversation(harness)
    never_read = str(SNOWFLAKES.next())

    await harness.interact(
        payloads.interaction(data=payloads.slash("read", message=never_read), person=BOB)
    )

    (refusal,) = harness.server.private(payloads.BOB_ID)
    assert "could not find that message" in refusal.content
    assert harness.server.public() == []


async def test_in_public_mode_an_empty_digest_is_refused_only_to_the_asker(start_bot):
    harness = await start_bot(discord={"ephemeral_readings": False})
    await harness.interact(payloads.interaction(data=payloads.slash("digest")))
    (refusal,) = harness.server.private(payloads.ANN_ID)
    assert "has not read anything" in refusal.content
    assert harness.server.public() == []


async def test_in_public_mode_a_second_asker_gets_the_link_to_the_one_shared_reading(start_bot):
    harness = await start_bot(discord={"ephemeral_readings": False})
    datas = await _conversation(harness)
    for person in (payloads.ANN, BOB):
        await harness.interact(payloads.interaction(data=_menu(datas), person=person))
    (posted,) = harness.server.public()
    assert posted.reference == int(datas[-1]["id"])
    assert "already shared" in harness.server.private(payloads.BOB_ID)[0].content


def _slow(harness: Harness, seconds: float) -> None:
    """Every engine, schema and bookkeeping call now takes ``seconds`` on the fake's clock, as a
    model call or a large channel would: a route that works before acknowledging misses
    Discord's 3-second deadline."""
    clock = harness.server.clock
    targets = [
        (harness.runtime.engine, ("read", "scopes_of", "ingest")),
        (harness.runtime.schemas, ("digest", "forget_speaker")),
        (harness.runtime, ("claim", "cursor", "save_cursor")),
    ]
    for owner, names in targets:
        for name in names:
            original = getattr(owner, name)

            def slow(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
                clock.advance(seconds)
                return _original(*args, **kwargs)

            setattr(owner, name, slow)


MODERATOR = {
    "person": MOD,
    "roles": (payloads.MODERATOR_ROLE_ID,),
    "permissions": payloads.VIEW_AND_HISTORY | payloads.MANAGE_MESSAGES,
}


@pytest.mark.parametrize(
    "data",
    [
        lambda datas: payloads.message_menu(datas[-1]),
        lambda datas: payloads.slash("read", message=datas[0]["id"]),
        lambda datas: payloads.slash("digest"),
        lambda datas: payloads.slash("forget-me"),
        lambda datas: payloads.slash("backfill"),
        lambda datas: payloads.slash("help"),
    ],
    ids=["menu", "read", "digest", "forget-me", "backfill", "help"],
)
@pytest.mark.slow
async def test_every_command_is_acknowledged_within_discords_three_seconds_however_slow_the_work(
    harness: Harness, data: Callable[[list[dict[str, Any]]], dict[str, Any]]
):
    datas = await _conversation(harness)
    _slow(harness, 4.0)

    await harness.interact(payloads.interaction(data=data(datas), **MODERATOR))
    task = harness.cog.running_backfill(payloads.CHANNEL_ID)
    if task is not None:
        await task

    answers = harness.server.private(payloads.MOD_ID)
    assert answers, "the asker was never answered"
    assert not any("could not finish" in answer.content for answer in answers)


async def test_a_reading_slower_than_the_tokens_15_minutes_is_logged_and_may_be_asked_again(
    harness: Harness, caplog
):
    datas = await _conversation(harness)
    read, clock = harness.runtime.engine.read, harness.server.clock

    def slow_read(*args: Any, **kwargs: Any) -> Any:
        clock.advance(15 * 60 + 1)  # the interaction's token expires meanwhile
        return read(*args, **kwargs)

    harness.runtime.engine.read = slow_read  # type: ignore[method-assign]
    await harness.interact(payloads.interaction(data=_menu(datas)))

    assert harness.server.private(payloads.ANN_ID) == []  # nobody left to tell on Discord
    assert "could not tell the asker" in caplog.text
    harness.runtime.engine.read = read  # type: ignore[method-assign]
    await harness.interact(payloads.interaction(data=_menu(datas)))
    assert harness.server.private(payloads.ANN_ID)[0].embeds  # the claim was given back


async def test_a_link_naming_a_channel_of_a_server_awai_is_not_in_is_refused_privately(
    harness: Harness,
):
    elsewhere = payloads.text_channel(SNOWFLAKES.next(), "elsewhere")
    elsewhere["guild_id"] = str(payloads.OTHER_GUILD_ID)
    harness.server.add_channel(elsewhere)  # Discord answers 403 Missing Access for it
    forged = (
        f"https://discord.com/channels/{payloads.GUILD_ID}/{elsewhere['id']}/{SNOWFLAKES.next()}"
    )

    await harness.interact(payloads.interaction(data=payloads.slash("read", message=forged)))

    (refusal,) = harness.server.private(payloads.ANN_ID)
    assert "cannot see that channel" in refusal.content
    assert harness.server.public() == []


@pytest.mark.slow
async def test_an_interaction_two_bot_processes_receive_is_answered_once_and_quietly(
    start_bot, make_runtime, caplog
):
    first = await start_bot(make_runtime("first"))
    second = await start_bot(make_runtime("second"))
    datas = await _conversation(first)
    await second.post(*datas)
    data = payloads.interaction(data=_menu(datas))

    await first.interact(data)  # Discord sends the same interaction to both
    await second._dispatched(lambda: second.bot._connection.parse_interaction_create(data))  # type: ignore[arg-type]

    (reading,) = first.server.private(payloads.ANN_ID)
    assert reading.embeds
    assert [r.body["type"] for r in first.server.calls("POST", "/callback")] == [5, 5]
    assert "failed" not in caplog.text and "Traceback" not in caplog.text
