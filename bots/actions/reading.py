"""Where a request for a message becomes a reading, on every platform.

A reading can be asked for a message AWAI has not stored: one older than AWAI in the channel
(before a backfill), or one still on its way. It is fetched from the platform, stored, then read
(:meth:`bots.runtime.Runtime.read_storing_first`), and then the reading notes that the place's
history from before AWAI joined is not read yet, so everyone who sees it is told. The caller
has checked that the asker may read the channel, so nothing is fetched from a place they
cannot see; a message someone had AWAI forget is refused by the store when it comes back.
"""

from __future__ import annotations

from awai_engine.posts import Post
from awai_engine.values import Reading, ReadingNote
from awai_engine.visibility import Scopes
from bots.actions.platform import Platform
from bots.runtime import Runtime


def reading_of(runtime: Runtime, platform: Platform, public: bool = False) -> Reading:
    """The reading of the platform's message for its asker; ``public``: holding only what
    everyone who sees a post about the message may read too."""

    def scopes() -> Scopes:
        asker = platform.scopes()
        return asker & platform.audience() if public else asker

    found = runtime.read_storing_first(
        platform.channel, platform.message_id, scopes(), platform.fetch, rescoped=scopes
    )
    if not found.stored_now:
        return found.reading
    cursor = runtime.cursor(platform.history_key)
    if cursor is not None and cursor.done:
        return found.reading
    return found.reading.noted(ReadingNote(kind="history-missing"))


def shared_post(runtime: Runtime, platform: Platform) -> Post | None:
    """The message's one reading shared for everyone; ``None`` while nobody shared it."""
    return runtime.posts.shared_reading(platform.channel, platform.message_id)


def window_seconds(runtime: Runtime) -> float:
    """How long a claim on a reading or a share holds (one setting for every platform)."""
    return runtime.settings.readings.duplicate_window_seconds
