"""Read with AWAI on a message the moment it is posted, while another process is storing it.

The bot's runtime and a second runtime on the same data folder play two processes of one
deployment; the second is caught before its vector upsert (tests/held_writer.py). The reading
must wait for that write and answer with the message, never "could not find that message".
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from bots.discord.keys import line_of
from bots.discord.platform import utterance_of
from bots.runtime import Runtime
from tests.discord import payloads
from tests.discord.conftest import Harness
from tests.discord.payloads import BOB, SNOWFLAKES
from tests.held_writer import WAITING, HeldWriter, ReleaseWhenWaitedFor


@pytest.mark.slow
async def test_a_reading_of_a_message_another_process_is_storing_waits_for_it(
    harness: Harness, make_runtime: Callable[..., Runtime], caplog
):
    earlier = payloads.message(SNOWFLAKES.next(), author=payloads.ANN, content="Ship on Friday?")
    posted = payloads.message(
        SNOWFLAKES.next(), author=BOB, content="Friday works if QA signs off by Thursday."
    )
    channel = payloads.text_channel(payloads.CHANNEL_ID, "general")
    harness.server.add_channel(channel, [earlier, posted])
    await harness.post(earlier)
    message = harness.message(posted)
    writer = HeldWriter(make_runtime())  # the other process, on the same data folder
    writer.start(utterance_of(message, line_of(message.channel)))  # type: ignore[arg-type]
    releaser = ReleaseWhenWaitedFor(writer)
    logging.getLogger("awai_engine.engine").addHandler(releaser)
    try:
        with caplog.at_level(logging.INFO, logger="awai_engine.engine"):
            await harness.interact(payloads.interaction(data=payloads.message_menu(posted)))
    finally:
        logging.getLogger("awai_engine.engine").removeHandler(releaser)
        writer.release()

    followups = [r.body for r in harness.server.calls("POST", "/webhooks/")]
    (followup,) = followups
    assert followup.get("embeds"), f"answered without a reading: {followup.get('content')!r}"
    (embed,) = followup["embeds"]
    assert "Friday works if QA signs off" in embed["description"]
    assert WAITING in caplog.text, "the reading waited for the other process's write"
    assert list(harness.stored()) == [earlier["id"], posted["id"]]
