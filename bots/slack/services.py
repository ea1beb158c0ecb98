"""The parts every listener shares, built once per app by :mod:`bots.slack.app`."""

from __future__ import annotations

from dataclasses import dataclass

from slack_sdk.oauth.installation_store import InstallationStore

from bots.runtime import Runtime
from bots.slack.backfill import Backfills
from bots.slack.catchup import CatchUp
from bots.slack.directory import SlackDirectory
from bots.slack.reading import Readings
from bots.slack.workers import Workers


@dataclass
class SlackServices:
    runtime: Runtime
    directory: SlackDirectory
    workers: Workers
    readings: Readings
    backfills: Backfills
    catchup: CatchUp
    installation_store: InstallationStore | None = None
