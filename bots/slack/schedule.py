"""Scheduled digests: ``AWAI_SLACK__DIGEST_SCHEDULE`` → jobs of the shared scheduler service.

The scheduler (``bots/scheduler.py``) keeps its jobs in AWAI's database, so a schedule outlives a
restart; this module makes the stored Slack jobs match the settings at start-up (adding, changing
and removing), and registers how a digest reaches Slack when a job fires.
"""

from __future__ import annotations

import logging

from awai_engine.schemas.digest import Digest
from bots.scheduler import SchedulerService
from bots.slack.app import SlackBot
from bots.slack.ingest import channel_key

log = logging.getLogger(__name__)

POSTER = "slack"


def schedule_digests(bot: SlackBot, scheduler: SchedulerService) -> dict[str, str]:
    """Register the Slack poster and one digest job per configured channel; returns key → crontab."""
    scheduler.add_digest_poster(
        POSTER, lambda channel, digest: post_scheduled(bot, channel, digest)
    )
    wanted = _configured(bot)
    for poster, channel, _ in scheduler.digest_schedules():
        if poster == POSTER and channel not in wanted:
            scheduler.unschedule_digest(channel, POSTER)
    for channel, crontab in wanted.items():
        scheduler.schedule_digest(channel, POSTER, cron=crontab)
    return wanted


def post_scheduled(bot: SlackBot, channel: str, digest: Digest) -> None:
    """A digest job fired: post it with the bot token of the channel's workspace."""
    team_id = channel.split(":")[1]
    client = bot.clients.for_workspace(team_id)
    if client is None:
        log.warning("Digest of %s not posted: AWAI is no longer installed there", channel)
        return
    bot.services.digests.post(client, team_id, digest)


def _configured(bot: SlackBot) -> dict[str, str]:
    """Channel key → crontab for every channel id in the settings that AWAI can place."""
    schedule = bot.services.runtime.settings.slack.digest_schedule
    if not schedule:
        return {}
    if bot.services.installation_store is None:
        client = bot.clients.for_workspace("")
        assert client is not None, "single-workspace mode always has its client"
        team_id = client.auth_test()["team_id"]
        return {channel_key(team_id, cid): crontab for cid, crontab in schedule.items()}
    stored = bot.services.runtime.channels()
    found: dict[str, str] = {}
    for channel_id, crontab in schedule.items():
        keys = [
            key for key in stored if key.startswith("slack:") and key.endswith(f":{channel_id}")
        ]
        if not keys:
            log.warning(
                "Digest schedule for %s skipped: AWAI has read nothing there yet", channel_id
            )
        found.update((key, crontab) for key in keys)
    return found
