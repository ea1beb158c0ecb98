"""Reading a channel's past from Slack: one message, pages of history, a thread's replies.

Every call goes through the ``WebClient`` the caller passes, which carries slack_sdk's
``RateLimitErrorRetryHandler``: a 429 waits for ``Retry-After`` and repeats the same call, so a
page is never skipped (the next pages of an iterated response go through it too).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bots.slack.ingest import Message

GONE = frozenset({"channel_not_found", "thread_not_found", "message_not_found"})


@dataclass(frozen=True)
class HistoryPage:
    """One page of top-level messages (newest first) and the cursor of the next page, if any."""

    messages: tuple[Message, ...]
    next_cursor: str | None


def fetch_message(
    client: WebClient, channel_id: str, ts: str, thread_ts: str | None
) -> Message | None:
    """The message ``ts`` of a channel (a reply when ``thread_ts`` is its root), or ``None``."""
    try:
        if thread_ts and thread_ts != ts:
            page = client.conversations_replies(
                channel=channel_id, ts=thread_ts, limit=2, oldest=ts, latest=ts, inclusive=True
            )
        else:
            page = client.conversations_history(
                channel=channel_id, limit=1, oldest=ts, latest=ts, inclusive=True
            )
    except SlackApiError as error:
        if error.response.get("error") in GONE:
            return None
        raise
    messages: list[Message] = page.get("messages", [])
    return next((m for m in messages if m.get("ts") == ts), None)


def history_page(client: WebClient, channel_id: str, cursor: str | None, limit: int) -> HistoryPage:
    """One page of ``conversations.history`` from ``cursor`` (``None``: the newest page)."""
    page = client.conversations_history(channel=channel_id, cursor=cursor, limit=limit)
    next_cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
    return HistoryPage(
        tuple(page.get("messages", [])), next_cursor if page.get("has_more") else None
    )


def thread_replies(
    client: WebClient, channel_id: str, thread_ts: str, limit: int, after: float | None = None
) -> Iterator[Message]:
    """Every reply of a thread (those after ``after`` only, when given), oldest first; its root
    is not repeated. The pages follow Slack's cursor (slack_sdk's own pagination)."""
    oldest = None if after is None else f"{after:.6f}"  # slack_sdk leaves out what is None
    for page in client.conversations_replies(
        channel=channel_id,
        ts=thread_ts,
        limit=limit,
        oldest=oldest,
        inclusive=None if after is None else False,
    ):
        yield from (m for m in page.get("messages", []) if m.get("ts") != thread_ts)
