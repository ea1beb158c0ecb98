"""Purging a place AWAI was removed from: a workspace or server, or one channel.

Why everything: a workspace that uninstalls AWAI, or a server that removes it, has withdrawn its
consent; its messages, thoughts, vectors, schemas and backfill cursors all go, in every channel,
and nothing of another workspace or server is touched. A channel AWAI leaves, or one deleted,
goes the same way.
"""

from __future__ import annotations

import logging

from bots.runtime import Runtime

log = logging.getLogger(__name__)


def purge_place(runtime: Runtime, prefix: str) -> list[str]:
    """Drop every stored channel whose key starts with ``prefix`` (a workspace, a server), and
    every cursor of the place (so a return reads its history again from the start, its threads'
    included); the channel keys removed."""
    removed = runtime.purge_prefix(prefix)
    log.info("Purged %d channel(s) of %s", len(removed), prefix.rstrip(":"))
    return removed


def purge_channel(runtime: Runtime, channel: str) -> None:
    """Drop one stored channel: its messages, vectors, schemas and cursor."""
    runtime.purge_channel(channel)
    log.info("Purged channel %s", channel)
