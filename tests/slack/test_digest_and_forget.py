"""``/awai digest`` (Block Kit and the PNG through files_upload_v2), scheduled digests, forget-me."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from apscheduler.schedulers.background import BackgroundScheduler

from awai_engine.visibility import EVERYTHING
from bots.scheduler import SchedulerService
from bots.slack import messages
from bots.slack.schedule import POSTER, schedule_digests
from tests.slack.conftest import ANN, BEN, GENERAL, GENERAL_KEY, SlackHarness

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _conversation(slack: SlackHarness) -> tuple[list[dict], list[dict]]:
    ann = slack.seed(
        [(ANN, f"The flaky integration tests broke the build again, run {i}.") for i in range(6)]
    )
    ben = slack.seed(
        [
            (BEN, f"We must keep the cloud budget under control this quarter, item {i}.")
            for i in range(6)
        ]
    )
    return ann, ben


def _assert_digest_posted(slack: SlackHarness) -> str:
    posted = [c for c in slack.api.calls_to("chat.postMessage") if c.params["channel"] == GENERAL]
    assert len(posted) == 1
    shown = slack.blocks_text(posted[0])
    assert "Preconceptions digest" in shown and "*Ann*" in shown and "*Ben*" in shown
    completed = slack.api.calls_to("files.completeUploadExternal")
    assert len(completed) == 1 and completed[0].params["channel_id"] == GENERAL
    (picture,) = slack.api.uploads.values()
    assert PNG_SIGNATURE in picture, "the digest's PNG was uploaded"
    return shown


@pytest.mark.slow
def test_slash_digest_posts_the_digest_with_its_picture(slack: SlackHarness):
    ann, _ = _conversation(slack)

    response = slack.send(slack.requests.command("digest", GENERAL, BEN))
    slack.settle()

    assert response.body == messages.DIGEST_QUEUED
    shown = _assert_digest_posted(slack)
    digest = slack.runtime.schemas.digest(GENERAL_KEY, EVERYTHING, record=False)
    examples = [
        e.message_id for s in digest.speakers for schema in s.schemas for e in schema.examples
    ]
    for message_id in examples:
        assert slack.api.permalink(GENERAL, message_id) in shown
    assert any(message_id in {m["ts"] for m in ann} for message_id in examples)


@pytest.mark.slow
def test_a_japanese_channel_gets_its_digest_posted_in_japanese(slack: SlackHarness):
    slack.seed(
        [(ANN, f"結合テストがまた不安定でビルドが壊れました（{i}回目）。") for i in range(6)]
    )
    slack.seed(
        [(BEN, f"今期はクラウドの予算を必ず抑えないといけません（項目{i}）。") for i in range(6)]
    )

    slack.send(slack.requests.command("digest", GENERAL, BEN))
    slack.settle()

    (posted,) = [
        c for c in slack.api.calls_to("chat.postMessage") if c.params["channel"] == GENERAL
    ]
    shown = slack.blocks_text(posted)
    assert "思い込みダイジェスト" in shown and "考え" in shown
    english = ("Preconception", "preconception", "thought", "digest", "came back", "First")
    assert not any(word in shown for word in english), shown
    assert "思い込み" in posted.params["text"]
    (completed,) = slack.api.calls_to("files.completeUploadExternal")
    assert "思い込み" in json.dumps(completed.params, ensure_ascii=False)


@pytest.mark.slow
def test_a_scheduled_digest_is_posted_when_its_job_fires(make_slack: Callable[..., SlackHarness]):
    slack = make_slack(digest_schedule={GENERAL: "0 9 * * mon"})
    _conversation(slack)
    scheduler = SchedulerService(
        slack.runtime, BackgroundScheduler(timezone="UTC"), name="slack-test"
    )
    scheduler.start(paused=True)
    try:
        scheduler.schedule_digest("slack:T0AWAI:C0GONE", POSTER, cron="0 9 * * *")  # no longer set

        wanted = schedule_digests(slack.bot, scheduler)
        jobs = {(poster, channel) for poster, channel, _ in scheduler.digest_schedules()}
        assert wanted == {GENERAL_KEY: "0 9 * * mon"}
        assert (POSTER, GENERAL_KEY) in jobs and (POSTER, "slack:T0AWAI:C0GONE") not in jobs

        assert scheduler.post_digest(POSTER, GENERAL_KEY)  # what the job does when it fires
    finally:
        scheduler.shutdown(wait=False)
    _assert_digest_posted(slack)


@pytest.mark.slow
def test_forget_me_removes_what_that_person_said_and_nothing_else(slack: SlackHarness):
    ann, ben = _conversation(slack)
    ann.append(slack.say(ANN, "One more before I go: the flaky tests again."))
    slack.settle()
    people = slack.bot.services.directory._people
    assert [person for person in people if person[1] == ANN]  # her name, asked when stored

    response = slack.send(slack.requests.command("forget-me", GENERAL, ANN))
    slack.settle()

    assert response.body == messages.FORGET_QUEUED
    assert slack.responses_text() == [messages.forgotten(len(ann))]
    assert not [person for person in people if person[1] == ANN]  # nor is her name kept
    assert set(slack.stored_texts()) == {m["ts"] for m in ben}
    digest = slack.runtime.schemas.digest(GENERAL_KEY, EVERYTHING, record=False)
    assert [speaker.speaker_name for speaker in digest.speakers] == ["Ben"]
    assert "flaky" not in digest.markdown

    slack.send(slack.requests.command("forget-me", GENERAL, ANN))
    slack.settle()
    assert slack.responses_text()[-1] == messages.forgotten(0)
