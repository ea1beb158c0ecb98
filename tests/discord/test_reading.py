"""Readings: the message menu and ``/awai read``, acknowledged at once, answered with an embed.

What the bot sent is read back from the fake Discord server: the interaction callback (type 5 is
"thinking", 4 an immediate message; flag 64 is ephemeral) and the follow-up with the embed.
"""

from __future__ import annotations

import threading
from typing import Any

import discord
import pytest

from bots.discord.cog import READ_MENU_NAME
from bots.discord.links import jump_url
from tests.discord import payloads
from tests.discord.conftest import Harness
from tests.discord.payloads import BOB, CAROL, MOD, SNOWFLAKES

DEFERRED, IMMEDIATE, EPHEMERAL = 5, 4, 64

CONVERSATION = [
    (payloads.ANN, "We should move the release to next week because the tests are flaky."),
    (BOB, "I agree, the flaky tests block the release."),
    (CAROL, "What about the marketing announcement planned for Friday?"),
    (payloads.ANN, "The announcement can wait; we will post it after the release is out."),
]


async def _conversation(
    harness: Harness, channel_id: int = payloads.CHANNEL_ID
) -> list[dict[str, Any]]:
    datas = [
        payloads.message(SNOWFLAKES.next(), channel_id=channel_id, author=person, content=text)
        for person, text in CONVERSATION
    ]
    harness.server.add_channel(payloads.text_channel(channel_id, "any"), datas)
    await harness.post(*datas)
    return datas


def _answers(harness: Harness) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    callbacks = [r.body for r in harness.server.calls("POST", "/callback")]
    followups = [r.body for r in harness.server.calls("POST", "/webhooks/")]
    return callbacks, followups  # type: ignore[return-value]


def _embed_text(embed: dict[str, Any]) -> str:
    fields = "\n".join(f"{f['name']}\n{f['value']}" for f in embed.get("fields", []))
    return f"{embed.get('title', '')}\n{embed.get('description', '')}\n{fields}"


async def test_the_message_menu_defers_then_answers_with_an_embed_citing_earlier_messages(
    harness: Harness,
):
    datas = await _conversation(harness)
    target = datas[-1]
    await harness.interact(payloads.interaction(data=payloads.message_menu(target)))

    callbacks, followups = _answers(harness)
    assert [c["type"] for c in callbacks] == [DEFERRED]
    assert callbacks[0]["data"]["flags"] & EPHEMERAL  # readings are private by default
    (followup,) = followups
    assert followup["flags"] & EPHEMERAL
    (embed,) = followup["embeds"]
    assert embed["url"] == jump_url(payloads.GUILD_ID, payloads.CHANNEL_ID, target["id"])
    assert "The announcement can wait" in embed["description"]
    text = _embed_text(embed)
    for earlier in datas[:-1]:  # the flow cites each earlier message by its jump link
        assert jump_url(payloads.GUILD_ID, payloads.CHANNEL_ID, earlier["id"]) in text
    assert len(discord.Embed.from_dict(embed)) <= 6000


async def test_a_reading_is_in_the_askers_discord_language_with_buttons_to_match(
    harness: Harness,
):
    datas = await _conversation(harness)
    await harness.interact(payloads.interaction(data=payloads.message_menu(datas[-1]), locale="ja"))

    _, followups = _answers(harness)
    (followup,) = followups
    text = _embed_text(followup["embeds"][0])
    assert "読み" in text and "直前の流れ" in text, (
        "Japanese words for a reader who set Discord to it"
    )
    assert "Reading" not in text and "Just before" not in text
    labels = [b["label"] for row in followup["components"] for b in row["components"]]
    assert labels == ["共有", "詳細"]


async def test_one_japanese_message_in_an_english_channel_reads_in_english_for_a_french_reader(
    harness: Harness,
):
    await _conversation(harness)
    japanese = payloads.message(SNOWFLAKES.next(), author=CAROL, content="行きます！")
    harness.server.messages[payloads.CHANNEL_ID].append(japanese)
    await harness.post(japanese)
    await harness.interact(payloads.interaction(data=payloads.message_menu(japanese), locale="fr"))

    _, followups = _answers(harness)
    text = _embed_text(followups[0]["embeds"][0])
    assert "行きます" in text, "the message itself is quoted as said"
    assert "Reading: Carol" in text and "Just before" in text, "the channel talks in English"
    assert "読み" not in text


async def test_slash_read_with_a_message_link_reads_that_message(harness: Harness):
    datas = await _conversation(harness)
    link = jump_url(payloads.GUILD_ID, payloads.CHANNEL_ID, datas[1]["id"])
    await harness.interact(payloads.interaction(data=payloads.slash("read", message=link)))
    callbacks, followups = _answers(harness)
    assert [c["type"] for c in callbacks] == [DEFERRED]
    (embed,) = followups[0]["embeds"]
    assert embed["url"] == link
    assert "flaky tests block the release" in embed["description"]


async def test_slash_read_with_a_bare_id_reads_in_this_channel(harness: Harness):
    datas = await _conversation(harness)
    await harness.interact(
        payloads.interaction(data=payloads.slash("read", message=datas[2]["id"]))
    )
    _, followups = _answers(harness)
    assert "marketing announcement" in followups[0]["embeds"][0]["description"]


async def test_slash_read_with_a_malformed_link_is_answered_at_once_and_privately(harness: Harness):
    await harness.interact(
        payloads.interaction(data=payloads.slash("read", message="https://example.com/not/a/link"))
    )
    callbacks, followups = _answers(harness)
    assert [c["type"] for c in callbacks] == [IMMEDIATE]
    assert callbacks[0]["data"]["flags"] & EPHEMERAL
    assert "Copy Message Link" in callbacks[0]["data"]["content"]
    assert followups == []


async def test_slash_read_with_a_link_to_another_server_is_refused(harness: Harness):
    link = jump_url(payloads.OTHER_GUILD_ID, payloads.CHANNEL_ID, SNOWFLAKES.next())
    await harness.interact(payloads.interaction(data=payloads.slash("read", message=link)))
    callbacks, followups = _answers(harness)
    assert [c["type"] for c in callbacks] == [IMMEDIATE]
    assert "another server" in callbacks[0]["data"]["content"]
    assert followups == []


async def test_a_public_reading_of_another_channel_is_refused(start_bot):
    harness = await start_bot(discord={"ephemeral_readings": False})
    datas = await _conversation(harness, payloads.PRIVATE_CHANNEL_ID)
    link = jump_url(payloads.GUILD_ID, payloads.PRIVATE_CHANNEL_ID, datas[0]["id"])
    await harness.interact(
        payloads.interaction(
            data=payloads.slash("read", message=link),
            person=MOD,
            roles=(payloads.MODERATOR_ROLE_ID,),
        )
    )
    callbacks, followups = _answers(harness)
    assert [c["type"] for c in callbacks] == [IMMEDIATE]
    assert "its own channel" in callbacks[0]["data"]["content"]
    assert followups == []


async def test_a_private_reading_of_a_channel_the_asker_cannot_see_is_refused(harness: Harness):
    datas = await _conversation(harness, payloads.PRIVATE_CHANNEL_ID)
    link = jump_url(payloads.GUILD_ID, payloads.PRIVATE_CHANNEL_ID, datas[0]["id"])
    await harness.interact(payloads.interaction(data=payloads.slash("read", message=link)))
    callbacks, followups = _answers(harness)
    assert [c["type"] for c in callbacks] == [DEFERRED]
    (followup,) = followups
    assert followup["flags"] & EPHEMERAL
    assert "cannot read the message history" in followup["content"]
    assert "embeds" not in followup or not followup["embeds"]


async def test_a_private_reading_of_another_channel_the_asker_can_read_is_given(harness: Harness):
    datas = await _conversation(harness, payloads.PRIVATE_CHANNEL_ID)
    link = jump_url(payloads.GUILD_ID, payloads.PRIVATE_CHANNEL_ID, datas[3]["id"])
    await harness.interact(
        payloads.interaction(
            data=payloads.slash("read", message=link),
            person=MOD,
            roles=(payloads.MODERATOR_ROLE_ID,),
        )
    )
    _, followups = _answers(harness)
    (embed,) = followups[0]["embeds"]
    assert embed["url"] == link
    text = _embed_text(embed)
    assert jump_url(payloads.GUILD_ID, payloads.PRIVATE_CHANNEL_ID, datas[2]["id"]) in text
    assert str(payloads.CHANNEL_ID) not in text  # nothing from another channel


async def test_someone_who_cannot_read_history_here_gets_no_reading(harness: Harness):
    datas = await _conversation(harness)
    await harness.interact(
        payloads.interaction(
            data=payloads.message_menu(datas[-1]),
            permissions=1 << 10,  # view, but no history
        )
    )
    callbacks, followups = _answers(harness)
    assert [c["type"] for c in callbacks] == [IMMEDIATE]
    assert "cannot read the message history" in callbacks[0]["data"]["content"]
    assert followups == []


def _on_discord_only(harness: Harness, person: dict[str, Any], text: str) -> dict[str, Any]:
    """A message Discord has in the channel that never reached AWAI (older than AWAI, say)."""
    data = payloads.message(SNOWFLAKES.next(), author=person, content=text)
    harness.server.messages[payloads.CHANNEL_ID].append(data)
    return data


async def test_a_linked_message_awai_never_received_is_fetched_stored_and_read_with_a_note(
    harness: Harness,
):
    await _conversation(harness)
    unseen = _on_discord_only(harness, BOB, "The flaky tests are fixed on the release branch now.")
    link = jump_url(payloads.GUILD_ID, payloads.CHANNEL_ID, unseen["id"])
    await harness.interact(payloads.interaction(data=payloads.slash("read", message=link)))

    _, followups = _answers(harness)
    (embed,) = followups[0]["embeds"]
    assert "flaky tests are fixed" in embed["description"]
    assert "history from before it joined" in embed["footer"]["text"]  # context may lack some
    assert unseen["id"] in harness.stored()
    assert harness.server.calls("GET", f"/messages/{unseen['id']}")


async def test_the_menu_stores_a_message_awai_never_received_from_what_discord_sent_with_it(
    harness: Harness,
):
    await _conversation(harness)
    unseen = _on_discord_only(harness, CAROL, "Friday still works for the announcement.")
    await harness.interact(payloads.interaction(data=payloads.message_menu(unseen)))

    _, followups = _answers(harness)
    assert "Friday still works" in followups[0]["embeds"][0]["description"]
    assert unseen["id"] in harness.stored()
    assert not harness.server.calls("GET", f"/messages/{unseen['id']}")  # no second fetch


async def test_a_public_reading_of_a_message_awai_never_received_is_shared_with_the_history_note(
    start_bot,
):
    harness = await start_bot(discord={"ephemeral_readings": False})
    await _conversation(harness)
    unseen = _on_discord_only(harness, BOB, "The flaky tests are fixed on the release branch now.")
    await harness.interact(payloads.interaction(data=payloads.message_menu(unseen)))

    (posted,) = harness.server.public()
    assert posted.reference == int(unseen["id"])
    assert "flaky tests are fixed" in posted.embeds[0]["description"]
    assert "history from before it joined" in posted.embeds[0]["footer"]["text"]  # for everyone


@pytest.mark.slow
async def test_a_stored_message_is_read_without_fetching_it_or_a_history_note(harness: Harness):
    datas = await _conversation(harness)
    await harness.interact(payloads.interaction(data=payloads.message_menu(datas[1])))

    _, followups = _answers(harness)
    assert "history from before" not in followups[0]["embeds"][0]["footer"]["text"]
    assert not harness.server.calls("GET", f"/messages/{datas[1]['id']}")


async def test_a_link_to_a_message_discord_does_not_have_says_it_could_not_be_found(
    harness: Harness,
):
    await _conversation(harness)
    await harness.interact(
        payloads.interaction(data=payloads.slash("read", message=str(SNOWFLAKES.next())))
    )
    _, followups = _answers(harness)
    assert "could not find that message" in followups[0]["content"]
    assert not followups[0].get("embeds")


async def test_a_link_pairing_this_channel_with_a_hidden_thread_message_reads_as_unknown(
    harness: Harness,
):
    await _conversation(harness)
    thread_id = harness.private_thread(payloads.BOB_ID)
    secret = payloads.message(SNOWFLAKES.next(), channel_id=thread_id, author=BOB, content="Hush.")
    harness.server.messages[thread_id].append(secret)
    await harness.post(secret)
    answers = []
    for message_id in (secret["id"], str(SNOWFLAKES.next())):  # stored but hidden; unknown
        link = jump_url(payloads.GUILD_ID, payloads.CHANNEL_ID, message_id)
        await harness.interact(payloads.interaction(data=payloads.slash("read", message=link)))
        answers.append(_answers(harness)[1][-1]["content"])
    assert answers[0] == answers[1] and "could not find that message" in answers[0]


async def test_a_bot_s_message_is_refused_as_not_said_by_a_person_and_not_stored(
    harness: Harness,
):
    await _conversation(harness)
    posted = _on_discord_only(harness, payloads.BOT_USER, "Shared by someone: a reading.")
    await harness.interact(payloads.interaction(data=payloads.message_menu(posted)))
    _, followups = _answers(harness)
    assert "reads only what people said" in followups[0]["content"]
    assert posted["id"] not in harness.stored()


async def test_a_message_without_words_is_refused_as_having_none(harness: Harness):
    await _conversation(harness)
    image = _on_discord_only(harness, BOB, "")
    await harness.interact(payloads.interaction(data=payloads.message_menu(image)))
    _, followups = _answers(harness)
    assert "has no words for AWAI to read" in followups[0]["content"]


@pytest.mark.slow
async def test_a_forgotten_message_is_not_fetched_back_into_awai_by_a_reading(harness: Harness):
    datas = await _conversation(harness)  # Ann says the first and the last message
    await harness.interact(payloads.interaction(data=payloads.slash("forget-me")))
    await harness.interact(payloads.interaction(data=payloads.message_menu(datas[0]), person=BOB))
    *_, answer = _answers(harness)[1]
    assert not answer.get("embeds")
    assert "has not read that message" in answer["content"]
    assert datas[0]["id"] not in harness.stored()


@pytest.mark.slow
async def test_asking_twice_for_the_same_reading_gives_one_reading(harness: Harness):
    datas = await _conversation(harness)
    for _ in range(2):
        await harness.interact(payloads.interaction(data=payloads.message_menu(datas[-1])))
    _, followups = _answers(harness)
    assert [bool(f.get("embeds")) for f in followups] == [True, False]
    assert "already on its way" in followups[1]["content"]


@pytest.mark.slow
async def test_public_readings_are_posted_for_the_channel_as_a_reply_and_the_asker_told_privately(
    start_bot,
):
    harness = await start_bot(discord={"ephemeral_readings": False})
    datas = await _conversation(harness)
    await harness.interact(payloads.interaction(data=payloads.message_menu(datas[-1])))
    callbacks, _ = _answers(harness)
    assert [c["type"] for c in callbacks] == [DEFERRED]
    assert callbacks[0]["data"]["flags"] & EPHEMERAL  # acknowledged privately even so
    (posted,) = harness.server.public()
    assert posted.route == "channel" and posted.reference == int(datas[-1]["id"])
    assert "The announcement can wait" in posted.embeds[0]["description"]
    (told,) = harness.server.private(payloads.ANN_ID)
    assert str(posted.message_id) in told.content and not told.embeds


async def test_the_menu_is_on_the_tree_while_the_cog_is_loaded(harness: Harness):
    menu = discord.AppCommandType.message
    assert harness.bot.tree.get_command(READ_MENU_NAME, type=menu) is harness.cog.read_menu
    assert harness.bot.tree.get_command("awai") is not None
    await harness.bot.remove_cog("AwaiCog")
    assert harness.bot.tree.get_command(READ_MENU_NAME, type=menu) is None
    assert harness.bot.tree.get_command("awai") is None


@pytest.mark.slow
async def test_engine_work_runs_in_worker_threads_not_on_the_event_loop(harness: Harness):
    loop_thread = threading.get_ident()
    seen: dict[str, int] = {}
    engine = harness.runtime.engine
    for name in ("ingest", "read"):
        original = getattr(engine, name)

        def spy(*args, _original=original, _name=name, **kwargs):  # type: ignore[no-untyped-def]
            seen[_name] = threading.get_ident()
            return _original(*args, **kwargs)

        setattr(engine, name, spy)
    datas = await _conversation(harness)
    await harness.interact(payloads.interaction(data=payloads.message_menu(datas[-1])))
    assert set(seen) == {"ingest", "read"}
    assert loop_thread not in seen.values()
