"""Slack permalinks: reading the ones users paste, writing the ones readings cite.

A permalink looks like ``https://acme.slack.com/archives/C0123ABCD/p1712345678123456`` — the
``p`` number is the message ``ts`` without its dot — with ``?thread_ts=…&cid=…`` for a reply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from awai_engine.errors import AwaiError

_ARCHIVE_PATH = re.compile(r"^/archives/([A-Z0-9]{2,})/p(\d{16})/?$")
_TS = re.compile(r"^\d{10}\.\d{6}$")


class MalformedLinkError(AwaiError, ValueError):
    """The text is not a Slack message link; the message tells the user what one looks like."""


@dataclass(frozen=True)
class Permalink:
    """Where a linked message lives: its workspace host, channel, ``ts`` and thread, if any."""

    host: str
    channel_id: str
    ts: str
    thread_ts: str | None


def parse_permalink(text: str) -> Permalink:
    """Read a pasted message link (bare, or wrapped by Slack as ``<url>`` / ``<url|label>``)."""
    candidate = text.strip()
    if candidate.startswith("<") and candidate.endswith(">"):
        candidate = candidate[1:-1].partition("|")[0]
    parts = urlsplit(candidate)
    match = _ARCHIVE_PATH.match(parts.path)
    if parts.scheme not in ("http", "https") or not parts.hostname or match is None:
        raise MalformedLinkError(
            "That does not look like a Slack message link. Use “Copy link” on the message; it"
            " looks like https://your-team.slack.com/archives/C0123ABCD/p1712345678123456"
        )
    channel_id, digits = match.groups()
    thread_ts = parse_qs(parts.query).get("thread_ts", [None])[0]
    if thread_ts is not None and not _TS.match(thread_ts):
        raise MalformedLinkError("That message link has a damaged thread part (thread_ts).")
    ts = f"{digits[:10]}.{digits[10:]}"
    return Permalink(
        host=parts.hostname.lower(),
        channel_id=channel_id,
        ts=ts,
        thread_ts=thread_ts if thread_ts != ts else None,
    )


def permalink(workspace_url: str, channel_id: str, ts: str, thread_ts: str | None = None) -> str:
    """The permalink of a message, built from the workspace URL ``auth.test`` returns."""
    base = workspace_url.rstrip("/")
    url = f"{base}/archives/{channel_id}/p{ts.replace('.', '')}"
    if thread_ts and thread_ts != ts:
        url += f"?thread_ts={thread_ts}&cid={channel_id}"
    return url


def host_of(workspace_url: str) -> str:
    return (urlsplit(workspace_url).hostname or "").lower()
