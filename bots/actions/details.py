"""Details: the numbers behind a reading, for the asker only (Slack's modal, Discord's answer).

The same reading the asker was shown, read again for them with the same checks: a person who
may no longer read the channel is refused, and a message deleted meanwhile is not found.
"""

from __future__ import annotations

from awai_engine.values import Reading
from bots.actions.platform import Platform
from bots.actions.read import check_may_read
from bots.actions.reading import reading_of
from bots.runtime import Runtime


def details(runtime: Runtime, platform: Platform) -> Reading:
    """The reading whose numbers the platform shows to the asker; raises as reading does."""
    check_may_read(platform)
    return reading_of(runtime, platform)
