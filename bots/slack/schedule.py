"""Scheduled digests: ``AWAI_SLACK__DIGEST_SCHEDULE`` → jobs of the shared scheduler service.

The scheduler (``bots/scheduler.py``) keeps its jobs in AWAI's database, so a schedule outlives a
restart; this module finds the channels the settings name and where a digest of each is posted;
keeping the jobs in step and posting are the digest action's (:mod:`bots.actions.digest`).
"""

from __future__ import annotations

import logging

from bots.actions.digest import keep_schedules, scheduled_poster, scheduled_title
from bots.scheduler import DigestPoster, SchedulerService
from bots.slack.app import SlackBot
from bots.slack.digests import SlackBoard
from bots.slack.ingest import channel_key, parse_channel_key

log = logging.getLogger(__name__)

POSTER = "slack"


def schedule_digests(bot: SlackBot, scheduler: SchedulerService) -> dict[str, str]:
    """Register the Slack poster and one digest job per configured channel; returns key → crontab."""
    title_of = scheduled_title(lambda channel: board_of(bot, channel))
    scheduler.add_digest_poster(POSTER, digest_poster(bot), title_of)
    wanted = _configured(bot)
    keep_schedules(scheduler, POSTER, wanted)
    return wanted


def digest_poster(bot: SlackBot) -> DigestPoster:
    """What a Slack digest job calls when it fires: post on the channel's board."""
    return scheduled_poster(bot.services.runtime, lambda channel: board_of(bot, channel))


def board_of(bot: SlackBot, channel: str) -> SlackBoard | None:
    """Where a scheduled digest of ``channel`` goes: posted with the bot token of its
    workspace; ``None`` once AWAI is no longer installed there."""
    parsed = parse_channel_key(channel)
    client = None if parsed is None else bot.clients.for_workspace(parsed[0])
    if parsed is None or client is None:
        return None
    return SlackBoard(bot.services.directory, client, *parsed)


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
            key
            for key in stored
            if (parsed := parse_channel_key(key)) is not None and parsed[1] == channel_id
        ]
        if not keys:
            log.warning(
                "Digest schedule for %s skipped: AWAI has read nothing there yet", channel_id
            )
        found.update((key, crontab) for key in keys)
    return found
