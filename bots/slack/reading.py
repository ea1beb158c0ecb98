"""Slack's answers to the reading actions, whatever route asked (shortcut, ``@AWAI read``,
``/awai read``, the buttons), after Slack has been acknowledged.

The work and how it ended are the actions' (:mod:`bots.actions.answer`), on
:class:`~bots.slack.platform.SlackAsking`; here an answer becomes Slack's sentence, told
privately to the person who asked, so a refusal or a failure is only ever seen by them. Where
the operator chose ``reply_placement = "thread"``, every reading is shared at once instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from awai_engine.values import Utterance
from bots.actions.answer import Answer, Asked, Outcome, answer
from bots.runtime import Runtime
from bots.slack import messages
from bots.slack.blocks import details_notice, details_placeholder, details_view
from bots.slack.directory import SlackDirectory
from bots.slack.platform import ReadingRequest, SlackAsking

log = logging.getLogger(__name__)

Tell = Callable[[str], None]
"""Answers the person who asked, privately."""

SAID = {
    Outcome.ALREADY_READING: messages.ALREADY_READING,
    Outcome.SHARING_NOW: messages.ALREADY_SHARING,
    Outcome.STILL_STORING: messages.STILL_STORING,
    Outcome.NOT_FOUND: messages.NOT_FOUND,
    Outcome.FAILED: messages.FAILED,
}
"""What the asker is told of each outcome that is not the reading itself."""


class Readings:
    """Every reading route after the acknowledgement: private readings, shares and details."""

    def __init__(self, runtime: Runtime, directory: SlackDirectory) -> None:
        self.runtime = runtime
        self.directory = directory

    def deliver(
        self,
        request: ReadingRequest,
        client: WebClient,
        tell: Tell,
        said_before: Sequence[Utterance] = (),
    ) -> None:
        """Read a message for the person who asked: privately, with Share and Details buttons
        (or, where the operator chose ``reply_placement = "thread"``, shared at once), storing
        ``said_before`` first (:func:`~bots.actions.answer.answer`). Never raises; every
        refusal and error is told privately."""
        asking = SlackAsking(request, client, self.directory)
        shared = self.runtime.settings.slack.reply_placement == "thread"
        asked = Asked.SHARE if shared else Asked.READING
        said = answer(self.runtime, asking, asked, not shared, said_before)
        _tell(said, asking, tell)

    def share(self, request: ReadingRequest, client: WebClient, tell: Tell) -> None:
        """Post a message's reading in its thread for everyone, once per message; never raises."""
        asking = SlackAsking(request, client, self.directory)
        _tell(answer(self.runtime, asking, Asked.SHARE), asking, tell)

    def open_details(
        self, client: WebClient, trigger_id: str, request: ReadingRequest
    ) -> str | None:
        """Open the Details modal at once (its trigger lives three seconds); its view id."""
        try:
            opened = client.views_open(trigger_id=trigger_id, view=details_placeholder())
        except SlackApiError as error:
            log.warning("Details of %s not opened: %s", request.ts, error.response.get("error"))
            return None
        return opened["view"]["id"]

    def fill_details(
        self, request: ReadingRequest, client: WebClient, view_id: str, tell: Tell
    ) -> None:
        """Fill the Details modal with the reading and its numbers; never raises."""
        asking = SlackAsking(request, client, self.directory)
        shown = answer(self.runtime, asking, Asked.DETAILS)
        if shown.reading is not None:
            view = details_view(shown.reading, asking.permalink_of, asking.language(shown.reading))
        else:
            if shown.outcome is Outcome.REFUSED:
                tell(shown.refusal)
            view = details_notice(shown.refusal or SAID[shown.outcome])
        try:
            client.views_update(view_id=view_id, view=view)
        except SlackApiError as error:
            log.warning("Details of %s not shown: %s", request.ts, error.response.get("error"))


def _tell(said: Answer, asking: SlackAsking, tell: Tell) -> None:
    """Tell the asker what became of their request, in Slack's words (a reading sent, or shared
    just now in the thread where they asked, needs no words)."""
    if said.outcome is Outcome.REFUSED:
        tell(said.refusal)
    elif said.outcome is Outcome.SHARED_EARLIER and said.post is not None:
        tell(messages.ALREADY_SHARED.format(link=asking.link_to(said.post)))
    elif said.outcome in SAID:
        tell(SAID[said.outcome])
