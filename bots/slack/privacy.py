"""Removing a workspace's data when it uninstalls AWAI or revokes its token.

Why everything: a workspace that removes the app has withdrawn its consent; its messages,
thoughts, vectors, schemas and backfill cursors all go, in every channel, and nothing of another
workspace is touched.
"""

from __future__ import annotations

import logging

from bots.runtime import Runtime
from bots.slack.ingest import workspace_prefix

log = logging.getLogger(__name__)


def purge_workspace(runtime: Runtime, team_id: str) -> list[str]:
    """Drop every stored channel of one workspace; returns the channel keys removed."""
    prefix = workspace_prefix(team_id)
    removed = [key for key in runtime.store.channels() if key.startswith(prefix)]
    for key in removed:
        runtime.store.drop_channel(key)
        runtime.store.cursors.forget(key)
    log.info("Purged %d channel(s) of workspace %s", len(removed), team_id)
    return removed
