"""Which message ``@AWAI read`` means when it names none: the one just before it, as Slack has it.

A line is a thread (its root and replies) or the channel's top level, as in the engine's flow.
Why ask Slack rather than the store: a mention is handled at once, while the messages before it
queue to be stored in order (over HTTP they may even reach another process first), so the store's
last message before the mention can be an older one. Slack's history up to the mention's own
``ts`` is the order people saw. The messages fetched on the way come back too, so the caller
stores them before reading: the reading's context then holds what was said up to its message.
"""

from __future__ import annotations

from dataclasses import dataclass

from slack_sdk import WebClient

from bots.actions.read import LOOK_BACK
from bots.slack.ingest import Message, is_spoken


@dataclass(frozen=True)
class LineBefore:
    """The spoken messages of a line said before a mention, oldest first (at most
    :data:`~bots.actions.read.LOOK_BACK`)."""

    messages: tuple[Message, ...]

    @property
    def target(self) -> Message | None:
        """The message just before the mention; ``None`` if nobody spoke before it."""
        return self.messages[-1] if self.messages else None


def line_before(
    client: WebClient,
    channel_id: str,
    mention_ts: str,
    thread_ts: str | None,
    bot_user_id: str | None,
) -> LineBefore:
    """The messages people said in the mention's line before ``mention_ts``, from Slack."""
    if thread_ts is None:
        page = client.conversations_history(
            channel=channel_id, limit=LOOK_BACK, latest=mention_ts, inclusive=False
        )
        said = list(reversed(page.get("messages", [])))  # history is newest first
    else:
        said = _thread_until(client, channel_id, thread_ts, mention_ts)
    spoken = [message for message in said if is_spoken(message, bot_user_id)]
    return LineBefore(tuple(spoken[-LOOK_BACK:]))


def _thread_until(
    client: WebClient, channel_id: str, thread_ts: str, mention_ts: str
) -> list[Message]:
    """A thread's root and replies before ``mention_ts``, oldest first (replies page that way)."""
    said: list[Message] = []
    listed = client.conversations_replies(
        channel=channel_id, ts=thread_ts, latest=mention_ts, inclusive=False, limit=200
    )
    for page in listed:
        said.extend(m for m in page.get("messages", []) if float(m["ts"]) < float(mention_ts))
    return said
