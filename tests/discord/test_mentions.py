"""``@AWAI read``: a reply or a mention reads a message, and the reading reaches only the asker.

Messages arrive as MESSAGE_CREATE payloads through discord.py's own ``parse_message_create``, so
the bot's command processing (``when_mentioned`` prefix) and the cog's listener both run, as in
production. A plain message has no private answer on Discord: the reading is a direct message
(recorded by the fake as seen only by the asker), and the channel gets at most a pointer.
"""

from __future__ import annotations

from typing import Any

import pytest

from bots.actions.read import LOOK_BACK
from tests.discord import payloads
from tests.discord.conftest import Harness
from tests.discord.payloads import ANN, BOB, CAROL, SNOWFLAKES

AWAI = f"<@{payloads.APPLICATION_ID}>"
SECRET = "quokkafish"

CONVERSATION = [
    (ANN, "Should we pin the parser version before the release?"),
    (BOB, "Yes, the new parser broke two plugins last week."),
    (CAROL, "Pinning it is fine as long as we upgrade after the release."),
]


def _said(person: dict[str, Any], text: str, channel_id: int = payloads.CHANNEL_ID, **extra: Any):  # type: ignore[no-untyped-def]
    data = payloads.message(SNOWFLAKES.next(), channel_id=channel_id, author=person, content=text)
    data.update(extra)
    return data


def _ask(
    person: dict[str, Any] = ANN,
    words: str = "read",
    replying_to: dict[str, Any] | None = None,
    channel_id: int = payloads.CHANNEL_ID,
) -> dict[str, Any]:
    data = _said(person, f"{AWAI} {words}", channel_id)
    data["mentions"] = [{**payloads.BOT_USER, "member": payloads.member(payloads.BOT_USER)}]
    if replying_to is not None:
        data.update(
            type=19,  # a reply
            message_reference={
                "message_id": replying_to["id"],
                "channel_id": replying_to["channel_id"],
                "guild_id": str(payloads.GUILD_ID),
            },
            referenced_message=replying_to,
        )
    return data


async def _conversation(harness: Harness, live: int = len(CONVERSATION)) -> list[dict[str, Any]]:
    """The conversation on Discord; only the first ``live`` messages reached AWAI yet."""
    datas = [_said(person, text) for person, text in CONVERSATION]
    harness.server.add_channel(payloads.text_channel(payloads.CHANNEL_ID, "general"), datas)
    for data in datas[:live]:
        await harness.say(data)
    return datas


async def _say(harness: Harness, data: dict[str, Any]) -> None:
    harness.server.messages.setdefault(int(data["channel_id"]), []).append(data)
    await harness.say(data)


async def test_at_awai_read_after_a_message_reads_it_and_sends_the_reading_privately(
    harness: Harness,
):
    datas = await _conversation(harness)
    await _say(harness, _ask())

    (reading,) = harness.server.private(payloads.ANN_ID)
    assert reading.route == "dm"
    assert "Pinning it is fine" in reading.embeds[0]["description"]
    assert harness.server.public() == []
    assert datas[-1]["id"] in reading.content  # says which message it read
    assert not any(text.split()[-1] == "read" for text in harness.stored().values())


async def test_at_awai_read_looks_back_as_far_as_on_slack(harness: Harness):
    await _conversation(harness, live=1)
    await _say(harness, _ask())

    (history,) = [r for r in harness.server.calls("GET", "/messages") if "before" in r.query]
    assert int(history.query["limit"]) == LOOK_BACK  # the one value both platforms use


async def test_the_message_before_is_read_even_before_awai_has_stored_it(harness: Harness):
    datas = await _conversation(harness, live=1)  # two messages still on their way to AWAI
    await _say(harness, _ask())

    (reading,) = harness.server.private(payloads.ANN_ID)
    assert "Pinning it is fine" in reading.embeds[0]["description"]
    assert list(harness.stored()) == [data["id"] for data in datas]  # the line is whole
    assert "history from before it joined" in reading.embeds[0]["footer"]["text"]


@pytest.mark.slow
async def test_a_stored_message_read_by_mention_carries_no_history_note(harness: Harness):
    await _conversation(harness)
    await _say(harness, _ask())

    (reading,) = harness.server.private(payloads.ANN_ID)
    assert "history from before" not in reading.embeds[0]["footer"]["text"]


@pytest.mark.slow
async def test_a_reply_with_at_awai_read_reads_the_message_it_replies_to(harness: Harness):
    datas = await _conversation(harness)
    await _say(harness, _ask(replying_to=datas[0]))

    (reading,) = harness.server.private(payloads.ANN_ID)
    assert "pin the parser version" in reading.embeds[0]["description"]


async def test_closed_direct_messages_get_a_pointer_in_the_channel_with_none_of_the_words(
    harness: Harness,
):
    await _conversation(harness)
    harness.server.dms_closed.add(payloads.ANN_ID)
    await _say(harness, _ask())

    (pointer,) = harness.server.public()
    assert "Read with AWAI" in pointer.content and not pointer.embeds
    assert "parser" not in pointer.content.lower()
    asked_again = _ask()
    harness.server.dms_closed.clear()
    await _say(harness, asked_again)  # the failed delivery did not use up the request
    assert harness.server.private(payloads.ANN_ID)


@pytest.mark.slow
async def test_a_mention_that_is_no_command_gets_the_short_help(harness: Harness):
    await _conversation(harness)
    await _say(harness, _ask(words="what do you think?"))
    (answer,) = harness.server.public()
    assert "@AWAI read" in answer.content


async def test_a_reply_to_a_bot_s_post_says_awai_reads_only_what_people_said(harness: Harness):
    await _conversation(harness)
    post = _said(payloads.BOT_USER, "Shared by @Ann: a reading.")
    harness.server.messages[payloads.CHANNEL_ID].append(post)
    await _say(harness, _ask(BOB, replying_to=post))

    (answer,) = harness.server.private(payloads.BOB_ID)
    assert "reads only what people said" in answer.content and not answer.embeds


async def test_a_private_thread_is_read_only_for_its_member_and_never_in_public(
    harness: Harness,
):
    thread_id = harness.private_thread(payloads.BOB_ID)
    secret = _said(BOB, f"The {SECRET} budget is cut, keep it quiet.", thread_id)
    await _say(harness, secret)
    await _say(harness, _ask(BOB, channel_id=thread_id))  # Bob, in the thread

    (reading,) = harness.server.private(payloads.BOB_ID)
    assert SECRET in reading.embeds[0]["description"], reading
    link = f"https://discord.com/channels/{payloads.GUILD_ID}/{thread_id}/{secret['id']}"
    await _say(harness, _ask(ANN, words=f"read {link}"))  # Ann, not in it, from #general

    (refusal,) = harness.server.private(payloads.ANN_ID)
    assert "not one you are in" in refusal.content
    everything = [
        m.content + str(m.embeds) for m in harness.server.delivered if m.user_id != payloads.BOB_ID
    ]
    assert not any(SECRET in text for text in everything)


async def test_a_non_member_learns_nothing_of_which_ids_exist_in_a_private_thread(
    harness: Harness,
):
    thread_id = harness.private_thread(payloads.BOB_ID)
    secret = _said(BOB, f"The {SECRET} budget is cut, keep it quiet.", thread_id)
    await _say(harness, secret)
    answers = []
    for message_id in (secret["id"], SNOWFLAKES.next()):  # one that exists, one that does not
        link = f"https://discord.com/channels/{payloads.GUILD_ID}/{thread_id}/{message_id}"
        await _say(harness, _ask(ANN, words=f"read {link}"))
        answers.append(harness.server.private(payloads.ANN_ID)[-1].content)
    assert answers[0] == answers[1] and "not one you are in" in answers[0]
    assert not harness.server.calls("GET", f"/messages/{secret['id']}")


@pytest.mark.slow
async def test_in_public_mode_at_awai_read_shares_the_reading_once_as_a_reply(start_bot):
    harness = await start_bot(discord={"ephemeral_readings": False})
    datas = await _conversation(harness)
    await _say(harness, _ask(replying_to=datas[1]))
    await _say(harness, _ask(BOB, replying_to=datas[1]))

    shared, pointer = harness.server.public()
    assert shared.reference == int(datas[1]["id"])
    assert "broke two plugins" in shared.embeds[0]["description"]
    assert "already shared" in pointer.content and str(shared.message_id) in pointer.content


async def test_in_public_mode_a_message_awai_never_received_is_shared_with_the_history_note(
    start_bot,
):
    harness = await start_bot(discord={"ephemeral_readings": False})
    datas = await _conversation(harness, live=1)
    await _say(harness, _ask(replying_to=datas[2]))

    (shared,) = harness.server.public()
    assert shared.reference == int(datas[2]["id"])
    assert "history from before it joined" in shared.embeds[0]["footer"]["text"]
