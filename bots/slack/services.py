"""The parts every listener shares, built once per app by :mod:`bots.slack.app`."""

from __future__ import annotations

from dataclasses import dataclass

from slack_sdk.oauth.installation_store import InstallationStore

from bots.runtime import Runtime
from bots.slack.backfill import Backfills
from bots.slack.catchup import CatchUp
from bots.slack.digests import DigestPoster
from bots.slack.directory import SlackDirectory
from bots.slack.reading import Readings
from bots.slack.workers import Workers

EVENT_DEDUPE_SECONDS = 3600.0
"""Slack redelivers an event for up to about half an hour; an hour covers every retry."""


@dataclass
class SlackServices:
    runtime: Runtime
    directory: SlackDirectory
    workers: Workers
    readings: Readings
    backfills: Backfills
    catchup: CatchUp
    digests: DigestPoster
    installation_store: InstallationStore | None = None

    def first_delivery(self, event_id: str | None) -> bool:
        """``True`` the first time an event id is seen; Slack's retries of it get ``False``."""
        if not event_id:
            return True
        return self.runtime.claim(f"slack:event:{event_id}", EVENT_DEDUPE_SECONDS)
