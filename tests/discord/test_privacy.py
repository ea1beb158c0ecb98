"""Privacy: leaving a server purges it (a setting), a deleted channel goes, forget-me."""

from __future__ import annotations

import pytest

from awai_engine.values import Utterance
from bots.discord.keys import channel_key
from bots.records import catch_up_key
from tests.discord import payloads
from tests.discord.conftest import KEY, Harness
from tests.discord.payloads import BOB, SNOWFLAKES

ELSEWHERE = channel_key(payloads.OTHER_GUILD_ID, payloads.CHANNEL_ID)


async def _fill(harness: Harness) -> None:
    await harness.post(
        payloads.message(SNOWFLAKES.next(), content="Top level words."),
        payloads.message(
            SNOWFLAKES.next(), channel_id=payloads.THREAD_ID, author=BOB, content="Thread words."
        ),
        payloads.message(
            SNOWFLAKES.next(), channel_id=payloads.PRIVATE_CHANNEL_ID, content="Private words."
        ),
    )
    harness.runtime.engine.ingest(
        [
            Utterance(
                channel=ELSEWHERE,
                message_id="1",
                speaker_id="9",
                speaker_name="Zed",
                text="Another server's words.",
                ts=1.0,
            )
        ]
    )
    harness.runtime.store.cursors.save(KEY, "123", 1, True)
    harness.runtime.store.cursors.save(channel_key(payloads.GUILD_ID, payloads.THREAD_ID), "5", 1)


@pytest.mark.slow
async def test_leaving_a_server_purges_its_channels_and_cursors_and_nothing_else(harness: Harness):
    await _fill(harness)
    await harness.cog.on_guild_remove(harness.guild)
    assert harness.runtime.store.channels() == [ELSEWHERE]
    assert harness.runtime.store.cursors.get(KEY) is None
    assert (
        harness.runtime.store.cursors.get(channel_key(payloads.GUILD_ID, payloads.THREAD_ID))
        is None
    )
    assert harness.stored(ELSEWHERE) == {"1": "Another server's words."}


@pytest.mark.slow
async def test_leaving_a_server_purges_its_threads_catch_up_cursors_and_no_other_servers(
    harness: Harness,
):
    await _fill(harness)
    cursors = harness.runtime.store.cursors
    archived = channel_key(payloads.GUILD_ID, 424242)  # a thread the server no longer lists
    ours = [
        catch_up_key(channel_key(payloads.GUILD_ID, payloads.THREAD_ID)),
        catch_up_key(archived),
        archived,
    ]
    theirs = [catch_up_key(ELSEWHERE), ELSEWHERE]
    for key in ours + theirs:
        cursors.save(key, "77", 3)

    await harness.cog.on_guild_remove(harness.guild)

    assert [key for key in ours if cursors.get(key) is not None] == []
    assert [key for key in theirs if cursors.get(key) is None] == []


@pytest.mark.slow
async def test_with_purging_off_leaving_a_server_keeps_its_data(start_bot):
    harness = await start_bot(discord={"purge_on_guild_leave": False})
    await _fill(harness)
    await harness.cog.on_guild_remove(harness.guild)
    assert len(harness.runtime.store.channels()) == 3
    assert list(harness.stored().values()) == ["Top level words.", "Thread words."]


async def test_a_deleted_channel_takes_its_messages_with_it(harness: Harness):
    await _fill(harness)
    private = harness.guild.get_channel(payloads.PRIVATE_CHANNEL_ID)
    assert private is not None
    await harness.cog.on_guild_channel_delete(private)
    assert (
        channel_key(payloads.GUILD_ID, payloads.PRIVATE_CHANNEL_ID)
        not in harness.runtime.store.channels()
    )
    assert list(harness.stored().values()) == ["Top level words.", "Thread words."]
