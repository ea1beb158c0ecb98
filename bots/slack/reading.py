"""Slack's answers to the reading actions, whatever route asked (shortcut, ``@AWAI read``,
``/awai read``, the buttons), after Slack has been acknowledged.

The work is the actions' (:mod:`bots.actions.read`, :mod:`bots.actions.share`,
:mod:`bots.actions.details`), on :class:`~bots.slack.platform.SlackAsking`; here their outcomes
and refusals become Slack's sentences, told privately to the person who asked, so a refusal or a
failure is only ever seen by them. Where the operator chose ``reply_placement = "thread"``, every
reading is shared at once instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from awai_engine.engine import StillStoringError, UnknownMessageError
from bots.actions.details import details
from bots.actions.platform import Refused
from bots.actions.read import Delivery, read_privately
from bots.actions.share import share
from bots.runtime import Runtime
from bots.slack import messages
from bots.slack.blocks import details_notice, details_placeholder, details_view
from bots.slack.directory import SlackDirectory
from bots.slack.platform import ReadingRequest, SlackAsking

log = logging.getLogger(__name__)

Tell = Callable[[str], None]
"""Answers the person who asked, privately."""

Outcome = TypeVar("Outcome")


class Readings:
    """Every reading route after the acknowledgement: private readings, shares and details."""

    def __init__(self, runtime: Runtime, directory: SlackDirectory) -> None:
        self.runtime = runtime
        self.directory = directory

    def deliver(self, request: ReadingRequest, client: WebClient, tell: Tell) -> None:
        """Read a message for the person who asked: privately, with Share and Details buttons
        (or, where the operator chose ``reply_placement = "thread"``, shared at once). Never
        raises; every refusal and error is told privately."""
        asking = SlackAsking(request, client, self.directory)
        if self.runtime.settings.slack.reply_placement == "thread":
            self._share(asking, tell, by_asker=False)
            return
        delivery = _told(asking, tell, lambda: read_privately(self.runtime, asking))
        if delivery is Delivery.ALREADY_ON_ITS_WAY:
            tell(messages.ALREADY_READING)

    def share(self, request: ReadingRequest, client: WebClient, tell: Tell) -> None:
        """Post a message's reading in its thread for everyone, once per message; never raises."""
        self._share(SlackAsking(request, client, self.directory), tell, by_asker=True)

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
        try:
            view = details_view(details(self.runtime, asking), asking.permalink_of)
        except Refused as refusal:
            tell(str(refusal))
            view = details_notice(str(refusal))
        except Exception:
            log.exception("Details of %s in %s failed", request.ts, request.channel)
            view = details_notice(messages.FAILED)
        try:
            client.views_update(view_id=view_id, view=view)
        except SlackApiError as error:
            log.warning("Details of %s not shown: %s", request.ts, error.response.get("error"))

    def _share(self, asking: SlackAsking, tell: Tell, by_asker: bool) -> None:
        shared = _told(asking, tell, lambda: share(self.runtime, asking, by_asker))
        if shared is None or not (shared.earlier or shared.busy):
            return
        if shared.post is None:
            tell(messages.ALREADY_SHARING)
        else:
            tell(messages.ALREADY_SHARED.format(link=asking.link_to(shared.post)))


def _told(asking: SlackAsking, tell: Tell, action: Callable[[], Outcome]) -> Outcome | None:
    """Run a reading action; a refusal or failure is told to the asker in Slack's words."""
    try:
        return action()
    except Refused as refusal:
        tell(str(refusal))
    except StillStoringError:
        tell(messages.STILL_STORING)
    except UnknownMessageError:
        tell(messages.NOT_FOUND)
    except Exception:
        log.exception("Reading %s in %s failed", asking.message_id, asking.channel)
        tell(messages.FAILED)
    return None
