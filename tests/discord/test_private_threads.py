"""A private thread's words reach only the people Discord lets read the thread, by every route.

The thread is created through discord.py's own THREAD_CREATE parser, its messages arrive through
the cog's listener, and each reading or digest is asked for through the command tree, as Discord
delivers interactions. The fake Discord server answers thread membership
(``GET /channels/{thread}/thread-members/{user}``) from ``thread_members``; what AWAI sent is read
back from the requests it recorded, so "never shown" means never sent.

Bob and Carol are in the private thread; Ann reads #general but is not in it; Mod is not in it
either but may manage threads.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import delete

from bots.discord.links import jump_url
from storage.state import ClaimRow
from tests.discord import payloads
from tests.discord.conftest import KEY, Harness
from tests.discord.payloads import ANN, BOB, CAROL, MOD, SNOWFLAKES

PRIVATE_THREAD_ID = SNOWFLAKES.next()
MANAGE_THREADS = 1 << 34
SECRET = "zebracorn"  # a word only the private thread says

PUBLIC = [
    (ANN, "Should we move the release because the tests are flaky?"),
    (CAROL, "The release date is up to the release team."),
]
PRIVATE = [
    (BOB, f"Between us: the {SECRET} migration broke the release tests, keep it quiet."),
    (CAROL, f"Right, the {SECRET} migration is why the release tests are flaky."),
]
LATER_PUBLIC = (BOB, "I think the flaky release tests come from a migration.")


def _private_thread(archived: bool = False) -> dict[str, Any]:
    data = payloads.thread(PRIVATE_THREAD_ID, payloads.CHANNEL_ID, "secret-plans", private=True)
    data["thread_metadata"]["archived"] = archived
    return data


async def _conversation(harness: Harness) -> dict[str, dict[str, Any]]:
    """#general, then the private thread, then #general again; returns the messages by role."""
    harness.bot._connection.parse_thread_create(_private_thread())  # type: ignore[attr-defined]
    harness.server.add_channel(_private_thread())
    harness.server.thread_members[PRIVATE_THREAD_ID] = {payloads.BOB_ID, payloads.CAROL_ID}
    public = [
        payloads.message(SNOWFLAKES.next(), author=person, content=text) for person, text in PUBLIC
    ]
    private = [
        payloads.message(
            SNOWFLAKES.next(), channel_id=PRIVATE_THREAD_ID, author=person, content=text
        )
        for person, text in PRIVATE
    ]
    later = payloads.message(SNOWFLAKES.next(), author=LATER_PUBLIC[0], content=LATER_PUBLIC[1])
    harness.server.add_channel(payloads.text_channel(payloads.CHANNEL_ID, "general"), public)
    await harness.post(*public, *private, later)
    return {"private": private[-1], "later": later}


def _sent(harness: Harness) -> str:
    """Everything the bot sent to Discord since the last call, as text."""
    bodies = [r.body for r in harness.server.requests if r.method in {"POST", "PATCH"}]
    harness.server.requests.clear()
    return json.dumps(bodies, ensure_ascii=False)


async def _read(
    harness: Harness, data: dict[str, Any], person: dict[str, Any], **options: Any
) -> str:
    """Ask as ``person``; the one-reading-a-minute claims are cleared first, so one person can
    ask for the same message by several routes in a test."""
    with harness.runtime.store.db.session() as session:
        session.execute(delete(ClaimRow))
    await harness.interact(payloads.interaction(data=data, person=person, **options))
    return _sent(harness)


def test_private_thread_messages_are_stored_with_the_thread_as_their_scope() -> None:
    from bots.discord.keys import private_thread_of, private_thread_scope

    assert private_thread_of(private_thread_scope(PRIVATE_THREAD_ID)) == PRIVATE_THREAD_ID
    assert private_thread_of("channel") is None


async def test_a_non_member_gets_no_private_words_by_id_by_link_or_through_recall(
    harness: Harness,
) -> None:
    messages = await _conversation(harness)
    assert harness.runtime.engine.scopes_of(KEY) == {
        "channel",
        f"private-thread:{PRIVATE_THREAD_ID}",
    }
    secret_id = messages["private"]["id"]

    by_id = await _read(harness, payloads.slash("read", message=secret_id), ANN)
    assert SECRET not in by_id and "could not find that message" in by_id

    forged = jump_url(payloads.GUILD_ID, payloads.CHANNEL_ID, int(secret_id))
    by_link = await _read(harness, payloads.slash("read", message=forged), ANN)
    assert SECRET not in by_link and "could not find that message" in by_link

    direct = jump_url(payloads.GUILD_ID, PRIVATE_THREAD_ID, int(secret_id))
    assert SECRET not in await _read(harness, payloads.slash("read", message=direct), ANN)

    menu = await _read(harness, payloads.message_menu(messages["later"]), ANN)
    assert "embeds" in menu and SECRET not in menu
    assert str(PRIVATE_THREAD_ID) not in menu  # no jump link into the thread either

    # The same reading for a member of the thread does recall it: the test can see a leak.
    member = await _read(harness, payloads.message_menu(messages["later"]), BOB)
    assert SECRET in member


@pytest.mark.slow
async def test_a_member_and_a_moderator_may_read_the_thread_but_a_public_post_in_general_may_not(
    start_bot: Any,
) -> None:
    harness = await start_bot()
    messages = await _conversation(harness)
    secret_id = messages["private"]["id"]
    in_thread = jump_url(payloads.GUILD_ID, PRIVATE_THREAD_ID, int(secret_id))

    assert SECRET in await _read(harness, payloads.slash("read", message=in_thread), BOB)
    moderator = await _read(
        harness,
        payloads.slash("read", message=in_thread),
        MOD,
        permissions=payloads.VIEW_AND_HISTORY | MANAGE_THREADS,
    )
    assert SECRET in moderator

    shared = await start_bot(discord={"ephemeral_readings": False})
    messages = await _conversation(shared)
    public = await _read(shared, payloads.message_menu(messages["later"]), BOB)
    assert "embeds" in public and SECRET not in public  # everyone in #general sees this post


async def test_a_thread_the_asker_left_and_an_archived_thread_are_checked_with_discord(
    harness: Harness,
) -> None:
    messages = await _conversation(harness)
    secret_id = messages["private"]["id"]
    in_thread = jump_url(payloads.GUILD_ID, PRIVATE_THREAD_ID, int(secret_id))

    harness.server.thread_members[PRIVATE_THREAD_ID].discard(payloads.BOB_ID)  # Bob left
    left = await _read(harness, payloads.slash("read", message=in_thread), BOB)
    assert SECRET not in left and "not one you are in" in left
    assert SECRET not in await _read(harness, payloads.message_menu(messages["later"]), BOB)

    # Archived: discord.py drops it from the cache; AWAI asks Discord for it and its members.
    harness.bot._connection.parse_thread_update(_private_thread(archived=True))  # type: ignore[attr-defined]
    assert harness.guild.get_thread(PRIVATE_THREAD_ID) is None
    harness.server.add_channel(_private_thread(archived=True))
    assert SECRET in await _read(harness, payloads.slash("read", message=in_thread), CAROL)
    assert SECRET not in await _read(harness, payloads.slash("read", message=in_thread), ANN)


@pytest.mark.parametrize("person", [ANN, BOB])
@pytest.mark.slow
async def test_a_digest_holds_private_words_only_for_people_in_the_thread(
    harness: Harness, person: dict[str, Any]
) -> None:
    await _conversation(harness)
    for speaker, text in PRIVATE * 2:  # enough of Bob's and Carol's thoughts to cluster
        await harness.post(
            payloads.message(
                SNOWFLAKES.next(), channel_id=PRIVATE_THREAD_ID, author=speaker, content=text
            )
        )
    _sent(harness)
    digest = await _read(harness, payloads.slash("digest"), person)
    assert "embeds" in digest
    assert (SECRET in digest) == (person is BOB)


async def test_the_first_message_of_a_private_thread_not_stored_yet_is_read_for_a_member(
    harness: Harness,
) -> None:
    """Nothing of the thread is stored when Bob asks, so his scopes are known only once the
    message is: they are asked again after storing it, or he would be told it does not exist."""
    harness.bot._connection.parse_thread_create(_private_thread())  # type: ignore[attr-defined]
    harness.server.thread_members[PRIVATE_THREAD_ID] = {payloads.BOB_ID, payloads.CAROL_ID}
    first = payloads.message(
        SNOWFLAKES.next(), channel_id=PRIVATE_THREAD_ID, author=CAROL, content=PRIVATE[1][1]
    )
    harness.server.add_channel(_private_thread(), [first])
    assert f"private-thread:{PRIVATE_THREAD_ID}" not in harness.runtime.engine.scopes_of(KEY)

    shown = await _read(
        harness,
        payloads.message_menu(first),
        BOB,
        channel=_private_thread(),
    )

    assert SECRET in shown
    assert f"private-thread:{PRIVATE_THREAD_ID}" in harness.runtime.engine.scopes_of(KEY)
