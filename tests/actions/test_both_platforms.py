"""Each action is one implementation: the same test, run against Slack's and Discord's port.

The actions are called as the adapters call them (in a worker thread; Discord's calls come back
to its event loop through the bridge), on the real adapters' implementations of the port, against
the mock Slack and fake Discord servers, with a real runtime (MiniLM, Chroma, SQLite).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace

import discord
import pytest

from awai_engine.posts import Post
from awai_engine.visibility import Scopes
from bots.actions import backfill_status
from bots.actions.answer import Answer, Asked, Outcome, answer
from bots.actions.backfill import backfill, check_may_backfill
from bots.actions.backfill_status import read_shown
from bots.actions.catchup import catch_up
from bots.actions.digest import answer_digest, digest_for_one, scheduled_poster, share_digest
from bots.actions.forget import forget_me
from bots.actions.platform import Platform, Refused
from bots.actions.purge import purge_place
from bots.actions.read import Delivery, read_privately
from bots.actions.redact import delete_messages, redact_posts, withdraw_words
from bots.actions.share import share
from bots.labels import labels_for
from bots.records import catch_up_key
from tests.actions.sides import DiscordSide, Side, SlackSide
from tests.discord.conftest import Harness
from tests.slack.conftest import SlackHarness

HISTORY_MISSING = labels_for("en")["note:history-missing"]


@pytest.fixture(params=["slack", "discord"])
async def side(
    request: pytest.FixtureRequest,
    make_slack: Callable[..., SlackHarness],
    start_bot: Callable[..., Awaitable[Harness]],
) -> AsyncIterator[Side]:
    if request.param == "slack":
        yield SlackSide(make_slack(backfill_page_size=2))
    else:
        yield DiscordSide(await start_bot())


async def test_a_private_reading_reaches_only_the_asker_once_within_the_window(side: Side):
    await side.said("The rollout waits until the audit is done.")
    message = await side.said("Then we ship the battery fix on Friday.")

    first = await asyncio.to_thread(read_privately, side.runtime, side.asking(message))
    again = await asyncio.to_thread(read_privately, side.runtime, side.asking(message))

    assert (first, again) == (Delivery.SENT, Delivery.ALREADY_ON_ITS_WAY)
    (shown,) = side.private()
    assert "battery fix" in shown
    assert side.public() == [], "nothing was posted for everyone"


async def test_a_message_not_stored_yet_is_fetched_stored_and_read_with_the_history_note(
    side: Side,
):
    message = await side.said("The new pricing page confuses first-time buyers.", stored=False)
    assert message not in side.runtime.message_ids(side.channel)

    await asyncio.to_thread(read_privately, side.runtime, side.asking(message))

    assert message in side.runtime.message_ids(side.channel)
    (shown,) = side.private()
    assert "pricing page" in shown and HISTORY_MISSING[:40] in shown


async def test_a_reading_that_cannot_be_delivered_gives_its_claim_back(side: Side):
    message = await side.said("Let us move the launch to June.")
    side.refuse_private(True)

    with pytest.raises((Refused, discord.Forbidden)):
        await asyncio.to_thread(read_privately, side.runtime, side.asking(message))
    side.refuse_private(False)
    again = await asyncio.to_thread(read_privately, side.runtime, side.asking(message))

    assert again is Delivery.SENT, "asking again right away is read again"


async def test_every_way_a_request_ends_is_an_answer_to_tell_never_an_error(side: Side):
    message = await side.said("Then we ship the battery fix on Friday.")
    outsider = await side.outsider_asking()

    async def ask(platform: Platform, asked: Asked) -> Answer:
        return await asyncio.to_thread(answer, side.runtime, platform, asked)

    said = [
        await ask(side.asking(message), Asked.READING),
        await ask(side.asking(message), Asked.READING),
        await ask(side.asking(message), Asked.SHARE),
        await ask(side.asking(message), Asked.SHARE),
        await ask(side.asking(message), Asked.DETAILS),
        await ask(outsider, Asked.READING),
    ]

    assert [one.outcome for one in said] == [
        Outcome.SENT,
        Outcome.ALREADY_READING,
        Outcome.SHARED,
        Outcome.SHARED_EARLIER,
        Outcome.DETAILS,
        Outcome.REFUSED,
    ]
    _, _, shared, earlier, numbers, refused = said
    assert shared.post is not None and earlier.post == shared.post
    assert numbers.reading is not None and "battery fix" in numbers.reading.context.text
    assert refused.refusal and refused.post is None and refused.reading is None
    assert len(side.private()) == 1 and len(side.public()) == 1


async def test_a_failure_is_logged_answered_failed_and_gives_its_claim_back(
    side: Side, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    message = await side.said("The vendor call moved to Thursday.")
    engine = side.runtime.engine
    read = engine.read

    def broken(*args: object, **kwargs: object) -> object:
        raise OSError("the disk went away")

    monkeypatch.setattr(engine, "read", broken)
    failed = await asyncio.to_thread(answer, side.runtime, side.asking(message), Asked.READING)
    monkeypatch.setattr(engine, "read", read)
    again = await asyncio.to_thread(answer, side.runtime, side.asking(message), Asked.READING)

    assert failed == Answer(Outcome.FAILED)
    assert "the disk went away" in caplog.text, "logged with its traceback"
    assert again.outcome is Outcome.SENT, "asking again right away is read again"
    assert side.public() == []


async def test_someone_who_may_not_read_the_place_is_refused_and_shown_nothing(side: Side):
    outsider = await side.outsider_asking()

    with pytest.raises(Refused):
        await asyncio.to_thread(read_privately, side.runtime, outsider)
    with pytest.raises(Refused):
        await asyncio.to_thread(share, side.runtime, outsider)

    assert side.private() == [] and side.public() == []


async def test_a_reading_is_shared_once_and_every_later_share_gets_that_post(side: Side):
    message = await side.said("We should cap the retries at three.")

    first = await asyncio.to_thread(share, side.runtime, side.asking(message))
    second = await asyncio.to_thread(share, side.runtime, side.asking(message))

    assert first.post is not None and not first.earlier
    assert second.earlier and second.post == first.post
    (posted,) = side.public()
    assert "retries" in posted
    assert side.runtime.posts.shared_reading(side.channel, message) == first.post


async def test_deleting_the_message_redacts_its_shared_reading(side: Side):
    message = await side.said("The supplier's contract ends in May.")
    shared = await asyncio.to_thread(share, side.runtime, side.asking(message))
    assert isinstance(shared.post, Post)

    await asyncio.to_thread(delete_messages, side.runtime, side.posts(), side.channel, [message])

    assert message not in side.runtime.message_ids(side.channel)
    assert side.redacted() == [shared.post.post_id]
    assert side.runtime.posts.to_redact(side.channel) == [], "off the record once redacted"


async def test_words_edited_away_are_withdrawn_and_the_posts_quoting_them_redacted(side: Side):
    message = await side.said("The merger talks restart next week.")
    shared = await asyncio.to_thread(share, side.runtime, side.asking(message))
    assert shared.post is not None

    withdrawn = await asyncio.to_thread(
        withdraw_words, side.runtime, side.posts(), side.channel, message, None
    )
    again = await asyncio.to_thread(
        withdraw_words, side.runtime, side.posts(), side.channel, message, None
    )

    assert (withdrawn, again) == (True, False)
    assert message not in side.runtime.message_ids(side.channel)
    assert side.redacted() == [shared.post.post_id]


async def test_an_edit_of_a_message_awai_never_stored_stores_it_as_it_is_now(side: Side):
    before = await side.said("The audit starts on Monday.", stored=False)
    message = await side.said("The launch is in May.", stored=False)

    await side.edited(message, "The launch is in June.")

    stored = side.runtime.store.stored_texts(side.channel, [before, message])
    assert stored == {message: "The launch is in June."}, "the edited one, as it is now"


async def test_a_message_the_store_refuses_is_logged_with_the_reason_never_its_words(
    side: Side, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    monkeypatch.setattr(side.runtime.engine.settings.limits, "max_message_chars", 40)
    caplog.set_level(logging.INFO, logger="bots.actions.said")
    words = "The launch moves to June because the battery audit found a flaw."

    message = await side.said_live(words)

    assert side.runtime.message_ids(side.channel) == []
    (logged,) = [r.getMessage() for r in caplog.records if r.name == "bots.actions.said"]
    assert logged.startswith(f"message {message} not stored: ")
    assert "AWAI_LIMITS__MAX_MESSAGE_CHARS" in logged and "battery" not in logged


async def test_an_edit_into_a_command_to_awai_of_a_message_never_stored_stores_nothing(
    side: Side,
):
    message = await side.said("The launch is in May.", stored=False)

    await side.edited(message, side.read_command)

    assert side.runtime.message_ids(side.channel) == []


async def test_a_sweep_after_a_removal_redacts_the_post_and_takes_it_off_the_record(side: Side):
    message = await side.said("The supplier's contract ends in May.")
    shared = await asyncio.to_thread(share, side.runtime, side.asking(message))
    assert isinstance(shared.post, Post)
    await asyncio.to_thread(side.runtime.engine.delete, side.channel, message)

    done = await asyncio.to_thread(redact_posts, side.runtime, side.posts(), side.channel)

    assert done == 1 and side.runtime.posts.to_redact(side.channel) == []


async def test_forget_me_removes_the_speakers_words_and_redacts_posts_quoting_them(side: Side):
    message = await side.said("My manager is leaving next month.")
    shared = await asyncio.to_thread(share, side.runtime, side.asking(message))
    assert shared.post is not None

    report = await asyncio.to_thread(
        forget_me, side.runtime, side.posts(), side.channel, side.speaker
    )

    assert report is not None and report.messages == 1
    assert message not in side.runtime.message_ids(side.channel)
    assert side.redacted() == [shared.post.post_id]


async def test_forget_me_where_nothing_is_kept_says_so(side: Side):
    report = await asyncio.to_thread(
        forget_me, side.runtime, side.posts(), side.channel, side.speaker
    )

    assert report is None


async def test_a_purged_workspace_or_server_keeps_nothing(side: Side):
    await side.said("Quarterly numbers look better than expected.")

    removed = await asyncio.to_thread(purge_place, side.runtime, side.prefix)

    assert removed == [side.channel]
    assert side.runtime.channels() == []


async def test_a_backfill_stores_the_history_once_and_leaves_its_cursor_done(side: Side):
    said = [await side.said(f"Point {i} about the roadmap.", stored=False) for i in range(5)]

    first = await asyncio.to_thread(backfill, side.runtime, side.history())
    again = await asyncio.to_thread(backfill, side.runtime, side.history())

    assert set(said) <= set(side.runtime.message_ids(side.channel))
    assert first.done and first.added == 5
    assert again.done and again.added == 0, "nothing is stored twice"
    cursor = side.runtime.cursor(side.channel)
    assert cursor is not None and cursor.done


async def test_a_backfills_status_edits_at_most_every_few_seconds_and_ends_saying_it_is_done(
    side: Side, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(backfill_status, "EDIT_INTERVAL_SECONDS", 3600.0)  # no second edit
    for i in range(5):
        await side.said(f"Point {i} about the roadmap.", stored=False)
    status = await side.status()
    history = side.history(status)

    total = await asyncio.to_thread(read_shown, lambda: backfill(side.runtime, history), status)

    assert total is not None and total.done and total.added == 5
    posted, *edits = side.statuses()
    first_page = {  # what one page can have read and stored (platforms count a page differently)
        status.words.progress(replace(total, fetched=fetched, added=added, done=False))
        for fetched in range(1, 3)
        for added in range(fetched + 1)
    }
    assert len(edits) == 2, "one progress edit for three pages, then the end"
    assert edits[0] in first_page and edits[1] == status.words.done(total)
    assert posted not in edits


async def test_a_backfill_awai_fails_says_in_its_status_that_it_stopped_without_the_error(
    side: Side, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    for i in range(5):
        await side.said(f"Point {i} about the roadmap.", stored=False)
    status = await side.status()
    history = side.history(status)

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(side.runtime.engine, "ingest", full_disk)
    ended = await asyncio.to_thread(read_shown, lambda: backfill(side.runtime, history), status)

    assert ended is None
    last = side.statuses()[-1]
    assert last == status.words.stopped(status.latest, None)
    assert "disk full" not in last and "/awai backfill" in last
    assert "disk full" in caplog.text, "the operator reads the cause in the log"


async def test_only_someone_who_manages_the_channel_may_have_its_history_read_in(side: Side):
    manager, member = side.backfill_asker(manages=True), side.backfill_asker(manages=False)

    await asyncio.to_thread(check_may_backfill, manager)
    with pytest.raises(Refused) as refused:
        await asyncio.to_thread(check_may_backfill, member)

    assert str(refused.value) == f"Backfill is for {member.managers}."


async def test_a_catch_up_stores_what_was_said_while_away_once_and_leaves_unread_places(
    side: Side,
):
    before = await side.said("The audit starts on Monday.")
    away = [await side.said(f"Missed point {i} on the audit.", stored=False) for i in range(3)]

    first = await asyncio.to_thread(catch_up, side.runtime, side.workspace())
    again = await asyncio.to_thread(catch_up, side.runtime, side.workspace())

    assert side.runtime.message_ids(side.channel) == [before, *away], "oldest first, once"
    assert (first.added, again.added) == (3, 0)
    assert first.channels == 1, "only the channel AWAI has read before is caught up"
    await asyncio.to_thread(purge_place, side.runtime, side.prefix)
    assert side.runtime.cursor(catch_up_key(side.channel)) is None, "purged with the channel"


async def _conversation(side: Side) -> None:
    for topic in ("flaky integration tests", "the cloud budget", "the release checklist"):
        for i in range(3):
            await side.said(f"We have to talk about {topic} again, point {i}.")


async def test_a_shared_digest_is_posted_once_on_record_and_redacted_when_its_words_go(
    side: Side,
):
    await _conversation(side)

    parts = await asyncio.to_thread(share_digest, side.runtime, side.board(), Scopes.channel())

    assert len(side.public()) == 1, "one post for everyone"
    assert parts and all(part.channel == side.channel for part in parts)
    await asyncio.to_thread(forget_me, side.runtime, side.posts(), side.channel, side.speaker)
    assert parts[0].post_id in side.redacted(), "the digest quoted what was forgotten"


async def test_a_digest_for_one_asker_is_shown_to_nobody_else_and_not_recorded(side: Side):
    await _conversation(side)

    mine = await asyncio.to_thread(digest_for_one, side.runtime, side.channel, Scopes.channel())

    assert mine.digest.channel == side.channel and mine.digest.speakers
    assert side.public() == []
    assert side.runtime.posts.to_redact(side.channel) == []


async def test_a_digest_is_titled_with_the_channel_s_name_not_its_id(side: Side):
    await _conversation(side)
    board = side.board()

    said = await asyncio.to_thread(answer_digest, side.runtime, board, Scopes.channel(), False)

    assert board.title.startswith("#")
    assert said.mine is not None
    heading = said.mine.digest.markdown.splitlines()[0]
    assert heading == f"# Preconceptions in \\{board.title}"  # "#" escaped in Markdown
    assert side.channel.rsplit(":", 1)[-1] not in heading


async def test_a_scheduled_digest_goes_to_its_channel_and_nowhere_when_it_has_none(side: Side):
    await _conversation(side)
    board = side.board()
    post = scheduled_poster(side.runtime, lambda key: board if key == side.channel else None)
    digest = await asyncio.to_thread(side.runtime.schemas.digest, side.channel, Scopes.channel())

    await asyncio.to_thread(post, side.channel, digest)
    await asyncio.to_thread(post, side.prefix + "gone", digest)

    assert len(side.public()) == 1
