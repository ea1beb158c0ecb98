"""``/awai read <link> | digest | forget-me | backfill | help``.

Slack shows the ``ack(text=…)`` answer privately to the person who typed the command, within 3
seconds; anything slow (reading, digest, forgetting, backfill) is queued after it. Mistakes a
person can make (no link, a malformed link, an unknown word) are answered in the ``ack`` itself.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from slack_bolt import Ack, App, BoltContext
from slack_bolt.context.respond import Respond
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bots.actions.backfill import check_may_backfill
from bots.actions.digest import answer_digest
from bots.actions.forget import forget_me as forget_speaker
from bots.actions.platform import Refused
from bots.slack import messages
from bots.slack.access import MEMBER_SCOPES, AccessRefusedError, ChannelAsker, check_member
from bots.slack.backfill import BackfillRequest
from bots.slack.digests import SlackBoard
from bots.slack.ingest import channel_key
from bots.slack.linked import other_workspace_refusal
from bots.slack.links import MalformedLinkError, Permalink, parse_permalink
from bots.slack.listeners.common import team_of, tell_by_response_url
from bots.slack.platform import ReadingRequest, SlackPosts
from bots.slack.reading import Tell
from bots.slack.services import SlackServices

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Invocation:
    """One ``/awai`` command as typed: who, where, and the words after the sub-command."""

    team_id: str
    channel_id: str
    user_id: str
    bot_user_id: str | None
    argument: str
    client: WebClient
    tell: Tell


Handler = Callable[[SlackServices, Invocation, Ack], None]


def register(app: App, services: SlackServices) -> None:
    @app.command("/awai")
    def on_awai(ack: Ack, command: dict[str, Any], context: BoltContext, respond: Respond) -> None:
        words = (command.get("text") or "").strip().split(maxsplit=1)
        name = words[0].lower() if words else "help"
        handler = HANDLERS.get(name)
        if handler is None:
            ack(text=messages.UNKNOWN_COMMAND.format(command=name))
            return
        invocation = Invocation(
            team_id=team_of(context),
            channel_id=command["channel_id"],
            user_id=command["user_id"],
            bot_user_id=context.bot_user_id,
            argument=words[1].strip() if len(words) > 1 else "",
            client=context.client,
            tell=tell_by_response_url(respond),
        )
        handler(services, invocation, ack)


def read(services: SlackServices, invocation: Invocation, ack: Ack) -> None:
    if not invocation.argument:
        ack(text=messages.READ_NEEDS_LINK)
        return
    try:
        link = parse_permalink(invocation.argument)
    except MalformedLinkError as error:
        ack(text=str(error))
        return
    ephemeral = services.runtime.settings.slack.reply_placement == "ephemeral"
    ack(text=messages.READ_QUEUED_EPHEMERAL if ephemeral else messages.READ_QUEUED)
    services.workers.soon(lambda: read_link(services, invocation, link), "/awai read")


def read_link(services: SlackServices, invocation: Invocation, link: Permalink) -> None:
    refusal = other_workspace_refusal(
        invocation.client, services.directory, invocation.team_id, link
    )
    if refusal:
        invocation.tell(refusal)
        return
    request = ReadingRequest(
        team_id=invocation.team_id,
        channel_id=link.channel_id,
        ts=link.ts,
        user_id=invocation.user_id,
        bot_user_id=invocation.bot_user_id,
        thread_ts=link.thread_ts,
    )
    services.readings.deliver(request, invocation.client, invocation.tell)


def backfill(services: SlackServices, invocation: Invocation, ack: Ack) -> None:
    request = BackfillRequest(invocation.team_id, invocation.channel_id, invocation.bot_user_id)
    if services.backfills.is_running(request):
        ack(text=messages.BACKFILL_RUNNING)
        return
    ack(text=messages.BACKFILL_QUEUED)

    def run() -> None:
        asker = ChannelAsker(invocation.client, invocation.channel_id, invocation.user_id)
        try:
            check_may_backfill(asker)
        except Refused as refused:
            invocation.tell(str(refused))
            return
        except SlackApiError as error:
            log.info("/awai backfill refused: %s", error.response.get("error"))
            invocation.tell(messages.CANNOT_SEE_CHANNEL)
            return
        refusal = services.backfills.run(request, invocation.client)
        if refusal:
            invocation.tell(refusal)

    services.workers.soon(run, "/awai backfill")


def digest(services: SlackServices, invocation: Invocation, ack: Ack) -> None:
    ack(text=messages.DIGEST_QUEUED)
    services.workers.soon(lambda: post_digest(services, invocation), "/awai digest")


def post_digest(services: SlackServices, invocation: Invocation) -> None:
    try:
        check_member(invocation.client, invocation.channel_id, invocation.user_id)
    except AccessRefusedError as refusal:
        invocation.tell(str(refusal))
        return
    board = SlackBoard(
        services.directory, invocation.client, invocation.team_id, invocation.channel_id
    )
    said = answer_digest(services.runtime, board, MEMBER_SCOPES, for_everyone=True)
    if not said.posted:
        invocation.tell(messages.NOTHING_READ_YET if said.nothing_read else messages.DIGEST_FAILED)


def forget_me(services: SlackServices, invocation: Invocation, ack: Ack) -> None:
    ack(text=messages.FORGET_QUEUED)
    services.workers.soon(lambda: forget(services, invocation), "/awai forget-me")


def forget(services: SlackServices, invocation: Invocation) -> None:
    key = channel_key(invocation.team_id, invocation.channel_id)
    try:
        report = forget_speaker(
            services.runtime, SlackPosts(invocation.client), key, invocation.user_id
        )
    except Exception:
        log.exception("Forgetting %s in %s failed", invocation.user_id, key)
        invocation.tell(messages.FORGET_FAILED)
    else:
        services.directory.forget_person(invocation.team_id, invocation.user_id)
        invocation.tell(messages.forgotten(report.messages if report else 0))


def show_help(services: SlackServices, invocation: Invocation, ack: Ack) -> None:
    ack(text=messages.HELP)


HANDLERS: dict[str, Handler] = {
    "read": read,
    "digest": digest,
    "forget-me": forget_me,
    "backfill": backfill,
    "help": show_help,
}
