"""A message said on the platform, arriving live: stored, and what the store refused logged.

Why one place: the store may refuse a message (over ``AWAI_LIMITS__MAX_MESSAGE_CHARS``, a bad
timestamp), and the operator learns of it only from the log, with the setting that refused it.
Slack's events and Discord's ``on_message`` each stored what they were given; only Discord said
what was refused. The log names the message and the reason, never what anyone wrote.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from awai_engine.values import Utterance
from bots.runtime import Runtime

log = logging.getLogger(__name__)


def message_said(runtime: Runtime, said: Sequence[Utterance], what: str = "message") -> None:
    """Store ``said`` (what AWAI reads of messages just said, or of one just edited: ``what``
    names which in the log); each message the store refused is logged with its reason."""
    report = runtime.engine.ingest(list(said))
    for problem in report.problems:
        log.info("%s %s not stored: %s", what, problem.message_id, problem.reason)
