"""Events API listeners: messages in, ``@AWAI read``, the bot joining a channel, uninstalls.

Bolt acknowledges events itself before these run. Each listener queues its work: messages, edits
and deletes on the ordered queue (so they apply in Slack's order), the rest on the pool. Slack
redelivers an event it thinks was lost (``X-Slack-Retry-Num``); such a redelivery never reaches
them (:mod:`bots.slack.delivery`), so it changes nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import App, BoltContext
from slack_bolt.listener.builtins import TokenRevocationListeners
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from awai_engine.values import Utterance
from bots.actions.edit import message_edited
from bots.actions.purge import purge_place
from bots.actions.redact import delete_messages
from bots.actions.said import message_said
from bots.slack import messages
from bots.slack.backfill import BackfillRequest
from bots.slack.ingest import (
    channel_key,
    edited_ts_of,
    said_by_a_person,
    spoken_utterances,
    workspace_prefix,
)
from bots.slack.line import line_before
from bots.slack.linked import other_workspace_refusal
from bots.slack.links import MalformedLinkError, parse_permalink
from bots.slack.listeners.common import team_of, tell_ephemeral
from bots.slack.platform import ReadingRequest, SlackPosts
from bots.slack.services import SlackServices

log = logging.getLogger(__name__)

Payload = dict[str, Any]


def register(app: App, services: SlackServices) -> None:
    @app.event("message")
    def on_message(event: Payload, context: BoltContext) -> None:
        team, client, bot = team_of(context), context.client, context.bot_user_id
        services.workers.in_order(
            lambda: handle_message(services, event, team, client, bot), "message"
        )

    @app.event("app_mention")
    def on_mention(event: Payload, context: BoltContext) -> None:
        team, client, bot = team_of(context), context.client, context.bot_user_id
        services.workers.soon(
            lambda: handle_mention(services, event, team, client, bot), "app_mention"
        )

    @app.event("member_joined_channel")
    def on_member_joined(event: Payload, context: BoltContext) -> None:
        joined_by_bot = event.get("user") == context.bot_user_id
        if not (joined_by_bot and services.runtime.settings.slack.backfill_on_join):
            return
        request = BackfillRequest(team_of(context), event["channel"], context.bot_user_id)
        client = context.client
        services.workers.soon(lambda: services.backfills.run(request, client), "backfill")

    @app.event("app_uninstalled")
    def on_app_uninstalled(context: BoltContext) -> None:
        services.workers.in_order(
            lambda: handle_uninstall(services, None, context), "app_uninstalled"
        )

    @app.event("tokens_revoked")
    def on_tokens_revoked(event: Payload, context: BoltContext) -> None:
        services.workers.in_order(
            lambda: handle_uninstall(services, event, context), "tokens_revoked"
        )


def handle_message(
    services: SlackServices,
    event: Payload,
    team: str,
    client: WebClient,
    bot_user_id: str | None,
) -> None:
    """A new, edited or deleted message: stored, replaced or removed everywhere."""
    runtime, posts = services.runtime, SlackPosts(client)
    channel_id = event["channel"]
    key = channel_key(team, channel_id)
    subtype = event.get("subtype")
    if subtype == "message_deleted":
        delete_messages(runtime, posts, key, [event["deleted_ts"]])
        return
    message = event["message"] if subtype == "message_changed" else event
    if message.get("subtype") == "tombstone":  # a thread root deleted under its replies
        delete_messages(runtime, posts, key, [message["ts"]])
        return
    names = services.directory.names(client, team)
    utterances = spoken_utterances([message], team, channel_id, bot_user_id, names)
    if subtype == "message_changed":
        now = utterances[0] if utterances else None
        taken = said_by_a_person(message)
        message_edited(runtime, posts, key, message["ts"], now, taken, edited_ts_of(message))
    elif utterances:
        message_said(runtime, utterances)


def handle_mention(
    services: SlackServices,
    event: Payload,
    team: str,
    client: WebClient,
    bot_user_id: str | None,
) -> None:
    """``@AWAI read [link]``: read the linked message, or the one just before in this line."""
    channel_id, user_id = event["channel"], event["user"]
    thread_ts = event.get("thread_ts")
    tell = tell_ephemeral(client, channel_id, user_id, thread_ts)
    words = event.get("text", "").replace(f"<@{bot_user_id}>", " ").split(maxsplit=1)
    if not words or words[0].lower() != "read":
        tell(messages.HELP)
        return
    before: list[Utterance] = []  # what a read of the message before the mention stores first
    if len(words) > 1:
        try:
            link = parse_permalink(words[1])
        except MalformedLinkError as error:
            tell(str(error))
            return
        refusal = other_workspace_refusal(client, services.directory, team, link)
        if refusal:
            tell(refusal)
            return
        request = ReadingRequest(
            team_id=team,
            channel_id=link.channel_id,
            ts=link.ts,
            user_id=user_id,
            bot_user_id=bot_user_id,
            thread_ts=link.thread_ts,
        )
    else:
        try:
            line = line_before(client, channel_id, event["ts"], thread_ts, bot_user_id)
        except SlackApiError as error:
            log.info(
                "@AWAI read in %s: history refused (%s)", channel_id, error.response.get("error")
            )
            tell(messages.CANNOT_SEE_CHANNEL)
            return
        if line.target is None:
            tell(messages.NOTHING_BEFORE)
            return
        names = services.directory.names(client, team)
        before = spoken_utterances(line.messages, team, channel_id, bot_user_id, names)
        request = ReadingRequest(
            team_id=team,
            channel_id=channel_id,
            ts=line.target["ts"],
            user_id=user_id,
            bot_user_id=bot_user_id,
            thread_ts=thread_ts,
            message=line.target,
        )
    services.readings.deliver(request, client, tell, said_before=before)


def handle_uninstall(services: SlackServices, event: Payload | None, context: BoltContext) -> None:
    """``app_uninstalled``, or ``tokens_revoked`` of the bot: the workspace's data is purged."""
    team = team_of(context)
    revocations = (
        TokenRevocationListeners(services.installation_store)
        if services.installation_store
        else None
    )
    if event is not None:  # tokens_revoked
        if revocations:
            revocations.handle_tokens_revoked_events(event, context)
        if not (event.get("tokens") or {}).get("bot"):
            return  # only people's tokens were revoked; the bot still works here
    elif revocations:
        revocations.handle_app_uninstalled_events(context)
    purge_place(services.runtime, workspace_prefix(team))
    services.directory.forget_workspace(team)
