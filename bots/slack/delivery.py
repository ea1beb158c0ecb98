"""Slack's redeliveries dropped before any listener runs: one Bolt middleware, not a check in each.

Slack delivers an event again when it thinks the first delivery was lost (``X-Slack-Retry-Num``),
and in HTTP mode with several processes the retry may reach another one. The first delivery of an
event id claims it in the database (shared by every process) for longer than Slack retries; a
later delivery of the same id is acknowledged and goes no further, the way Bolt's own
``IgnoringSelfEvents`` drops the bot's own events. Requests that are not Events API callbacks
(commands, shortcuts, OAuth) carry no event id and pass untouched.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from slack_bolt.middleware import Middleware
from slack_bolt.request import BoltRequest
from slack_bolt.response import BoltResponse

from bots.runtime import Runtime

log = logging.getLogger(__name__)

EVENT_DEDUPE_SECONDS = 3600.0
"""Slack redelivers an event for up to about half an hour; an hour covers every retry."""


class FirstDeliveryOnly(Middleware):
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def process(
        self, *, req: BoltRequest, resp: BoltResponse, next: Callable[[], BoltResponse]
    ) -> BoltResponse:
        event_id = req.body.get("event_id") if req.body.get("type") == "event_callback" else None
        if event_id and not self.runtime.claim(f"slack:event:{event_id}", EVENT_DEDUPE_SECONDS):
            log.info("event %s was delivered before; this delivery is dropped", event_id)
            return req.context.ack()
        return next()
