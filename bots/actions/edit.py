"""A message edited on the platform: AWAI keeps it as it is now, on every platform.

Why an edit of a message AWAI never stored is stored: the platform tells AWAI of an edit only in
a place AWAI may read, and there AWAI stores what people say; a message it does not hold was said
before it came (before a backfill), while it was away, or its first store is still on its way
when the edit arrives. Ignoring such an edit would leave the older text, or nothing, where the
author's words now stand. Storing is idempotent: a new message is added, changed text replaces
the old, the same text changes nothing, and a deleted message stays out (its tombstone).

Whether the edit took the author's words off the platform (into a command to AWAI, or into a file
alone) is the platform's to say; those words are withdrawn, and AWAI's posts quoting them redacted.
"""

from __future__ import annotations

from awai_engine.values import Utterance
from bots.actions.platform import PostEditor
from bots.actions.redact import withdraw_words
from bots.actions.said import message_said
from bots.runtime import Runtime


def message_edited(
    runtime: Runtime,
    editor: PostEditor,
    channel: str,
    message_id: str,
    now: Utterance | None,
    words_taken: bool,
    edited_ts: float | None,
) -> None:
    """Message ``message_id`` of ``channel`` was edited: ``now`` is what AWAI stores of it as it
    is now (``None``: nothing), ``words_taken`` whether the edit took a person's words off the
    platform (then they are withdrawn, as of ``edited_ts``)."""
    if now is not None:
        message_said(runtime, [now], "edit of message")
    elif words_taken:
        withdraw_words(runtime, editor, channel, message_id, edited_ts)
