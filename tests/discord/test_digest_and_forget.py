"""``/awai digest`` (embed + PNG attachment) and ``/awai forget-me``."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from awai_engine.schemas.digest import Digest
from awai_engine.values import MessageRef
from bots.discord.digests import DIGEST_POSTER
from bots.discord.embeds import DIGEST_MARKDOWN, DIGEST_PICTURE, digest_message
from bots.discord.keys import channel_key
from bots.discord.limits import size
from bots.discord.links import jump_url
from bots.scheduler import JOB_STORE, SchedulerService, digest_job_id
from tests.discord import payloads
from tests.discord.conftest import KEY, Harness
from tests.discord.payloads import BOB, SNOWFLAKES

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

ANN_SAYS = [
    "The build server is too slow for our test suite.",
    "Our continuous integration pipeline takes forty minutes per run.",
    "We should cache dependencies in the build pipeline.",
    "The test runner on the build server keeps timing out.",
]
BOB_SAYS = [
    "I would rather talk about the garden party on Saturday.",
    "The garden party needs more chairs and some lanterns.",
    "Who is bringing the barbecue to the garden party?",
]


async def _conversation(harness: Harness) -> list[dict[str, Any]]:
    datas = [
        payloads.message(SNOWFLAKES.next(), author=author, content=text)
        for author, texts in ((payloads.ANN, ANN_SAYS), (BOB, BOB_SAYS))
        for text in texts
    ]
    await harness.post(*datas)
    return datas


@pytest.mark.slow
async def test_slash_digest_posts_the_embed_with_its_picture_attached(harness: Harness):
    await _conversation(harness)
    await harness.interact(payloads.interaction(data=payloads.slash("digest")))

    (callback,) = [r.body for r in harness.server.calls("POST", "/callback")]
    assert callback["type"] == 5  # thinking, at once
    (followup,) = harness.server.calls("POST", "/webhooks/")
    (name, png), *_ = followup.files
    assert name == DIGEST_PICTURE and png.startswith(PNG_SIGNATURE)
    (embed,) = followup.body["embeds"]  # type: ignore[index]
    assert embed["image"]["url"] == f"attachment://{DIGEST_PICTURE}"
    assert embed["title"] == "Preconceptions digest · #general"
    assert "**Ann" in embed["description"] and "**Bob" in embed["description"]
    assert "discord:" not in embed["description"]  # the channel is named by the title
    assert followup.body["flags"] & 64  # type: ignore[index]


async def test_in_public_mode_slash_digest_posts_for_everyone_on_record_and_links_the_asker(
    start_bot,
):
    harness = await start_bot(discord={"ephemeral_readings": False})
    await _conversation(harness)

    await harness.interact(payloads.interaction(data=payloads.slash("digest")))

    (posted,) = [d for d in harness.server.public() if d.route == "channel"]
    assert posted.embeds[0]["title"] == "Preconceptions digest · #general"
    (told,) = [d for d in harness.server.delivered if d.route == "followup"]
    assert told.ephemeral and told.content.endswith(f"/{posted.channel_id}/{posted.message_id}")
    assert harness.runtime.store.posts.count(KEY) == 1, "on the record, so a removal redacts it"


@pytest.mark.slow
async def test_a_scheduled_digest_is_posted_in_its_channel_with_its_picture(
    start_bot, make_runtime, fake_discord
):
    fake_discord.add_channel(payloads.text_channel(payloads.CHANNEL_ID, "general"))
    runtime = make_runtime(discord={"digest_schedule": {payloads.CHANNEL_ID: "0 9 * * mon"}})
    scheduler = SchedulerService(runtime)
    no_longer_wanted = channel_key(payloads.GUILD_ID, payloads.PRIVATE_CHANNEL_ID)
    scheduler.schedule_digest(no_longer_wanted, DIGEST_POSTER, cron="0 0 * * *")
    harness = await start_bot(runtime, scheduler)
    await _conversation(harness)

    schedules = scheduler.digest_schedules()
    assert [(poster, key) for poster, key, _ in schedules] == [(DIGEST_POSTER, KEY)]
    assert schedules[0][2].weekday() == 0 and schedules[0][2].hour == 9  # Mondays, 09:00 UTC
    scheduler.scheduler.modify_job(
        digest_job_id(DIGEST_POSTER, KEY), jobstore=JOB_STORE, next_run_time=datetime.now(UTC)
    )
    for _ in range(1200):
        posts = fake_discord.calls("POST", f"/channels/{payloads.CHANNEL_ID}/messages")
        if posts:
            break
        await asyncio.sleep(0.05)
    (post,) = posts
    assert [name for name, _ in post.files] == [DIGEST_PICTURE]
    assert post.files[0][1].startswith(PNG_SIGNATURE)
    assert post.body["embeds"][0]["title"] == "Preconceptions digest · #general"  # type: ignore[index]


async def test_a_digest_too_long_for_an_embed_is_cut_and_attached_whole():
    markdown = "# Schema digest\n\n## Ann\n\n" + "\n".join(
        f"{n}. A long line about schemas." for n in range(400)
    )
    digest = Digest(
        channel=KEY,
        created_at=time.time(),
        markdown=markdown,
        png=PNG_SIGNATURE + b"rest",
        png_size=(10, 10),
    )
    embed, files = digest_message(digest, "#general", {})
    assert size(embed.description or "") <= 4096 and len(embed) <= 6000
    assert (embed.description or "").startswith("**Ann**")
    assert [file.filename for file in files] == [DIGEST_PICTURE, DIGEST_MARKDOWN]
    assert files[1].fp.read().decode() == markdown


async def test_a_japanese_digest_is_titled_and_cut_in_japanese():
    markdown = "# 思い込み\n\n## 田中\n\n" + "\n".join(f"{n}. 長い行です。" for n in range(900))
    digest = Digest(
        channel=KEY,
        created_at=time.time(),
        language="ja",
        markdown=markdown,
        png=PNG_SIGNATURE,
        png_size=(1, 1),
    )
    embed, _ = digest_message(digest, "#general", {})
    assert embed.title == "思い込みダイジェスト · #general"
    assert f"ダイジェスト全体を {DIGEST_MARKDOWN} として添付" in (embed.description or "")
    assert "Cut to fit" not in (embed.description or "")


async def test_digest_examples_link_to_their_messages_threads_included():
    top, reply = str(SNOWFLAKES.next()), str(SNOWFLAKES.next())
    markdown = (
        "# Schema digest: discord:1:2\n\n## Ann: 2 thoughts, 1 schemas\n\n"
        f"1. **Builds** — 2 thoughts\n    - “Slow build” ({top})\n    - “Cache it” ({reply})\n"
    )
    digest = Digest(
        channel=KEY, created_at=time.time(), markdown=markdown, png=PNG_SIGNATURE, png_size=(1, 1)
    )
    refs = {
        top: MessageRef(message_id=top, speaker_id="1", speaker_name="Ann", ts=1.0, position=0),
        reply: MessageRef(
            message_id=reply,
            speaker_id="1",
            speaker_name="Ann",
            ts=2.0,
            position=1,
            thread_root=str(payloads.THREAD_ID),
        ),
    }
    embed, _ = digest_message(digest, "#general", refs)
    assert f"([↗]({jump_url(payloads.GUILD_ID, payloads.CHANNEL_ID, top)}))" in embed.description
    assert f"([↗]({jump_url(payloads.GUILD_ID, payloads.THREAD_ID, reply)}))" in embed.description
    assert "discord:1:2" not in embed.description


@pytest.mark.slow
async def test_forget_me_removes_only_the_asker_s_messages_for_good(harness: Harness):
    datas = await _conversation(harness)
    await harness.interact(payloads.interaction(data=payloads.slash("forget-me")))

    (followup,) = [r.body for r in harness.server.calls("POST", "/webhooks/")]
    assert followup["flags"] & 64
    assert f"removed {len(ANN_SAYS)} of your messages" in followup["content"]
    assert list(harness.stored().values()) == BOB_SAYS
    await harness.post(datas[0])  # a redelivery, or a backfill passing by
    assert list(harness.stored().values()) == BOB_SAYS
