"""``bench.preview``: a reading of the shipped sample as Slack and Discord show it, as HTML."""

from __future__ import annotations

import re

import pytest

from awai_engine.samples import SAMPLES
from awai_engine.values import Reading
from awai_engine.visibility import EVERYTHING
from bench.preview import discord_shaped, pages
from bots.runtime import Runtime
from bots.terminal.commands.common import load_and_ingest

pytestmark = pytest.mark.slow

_JUMP = re.compile(r'href="https://discord\.com/channels/1/(\d+)/(\d+)"')


def _reply(runtime: Runtime) -> Reading:
    """The reading of m014 of the English sample: a reply in m012's thread."""
    sample = SAMPLES["en"]
    ingested = load_and_ingest(runtime, sample.path, sample.channel, quiet=True)
    return runtime.engine.read(ingested.transcript.channel, "m014", EVERYTHING)


def test_a_thread_reply_previews_with_its_thread_messages_linked_into_the_thread(
    runtime: Runtime,
) -> None:
    reading = _reply(runtime)
    assert reading.context.message.thread_root == "m012"  # a reply in m012's thread

    shown = pages(reading, details=False)

    shaped = discord_shaped(reading)
    thread = shaped.context.message.thread_root
    assert thread is not None and thread.isdigit()
    links = _JUMP.findall(shown["discord.html"])
    # The earlier reply it follows links into the thread; the thread's first message, posted in
    # the channel before the thread existed, links to the channel (2), as the older messages do.
    previous = shaped.context.flow.previous
    assert previous is not None and previous.message.thread_root == thread
    assert (thread, previous.message.message_id) in links
    assert ("2", thread) in links
    assert {channel for channel, _ in links} == {thread, "2"}
    assert "m014" in shown["slack.html"]


def test_the_same_sample_id_is_the_same_snowflake_everywhere_in_a_reading(
    runtime: Runtime,
) -> None:
    reading = _reply(runtime)

    shaped = discord_shaped(reading)

    root = shaped.context.message.thread_root
    assert root is not None
    earlier = [entry.message for entry in shaped.context.flow.earlier]
    assert root in {message.message_id for message in earlier}
    assert shaped.context.channel == "discord:1:2"


def test_a_discord_quote_ends_its_line_in_the_preview_as_in_discord(runtime: Runtime) -> None:
    page = pages(discord_shaped(_reply(runtime)), details=False)["discord.html"]

    assert "</blockquote>\n" not in page, "the line break a quote takes is not shown again"
