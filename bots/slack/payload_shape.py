"""The shapes of a Slack payload that Bolt and AWAI's listeners read, checked before either does.

A validly signed body with a list where Slack sends a string (``team_id``, ``event.user``,
``authorizations[].team_id``) or a string where it sends a boolean (``is_enterprise_install``)
passed Bolt's parsing and failed later, in a background worker, with a traceback; a ``team.id``
that was a list even made a channel key ``slack:['T']:C``. Slack never sends such a body, so it is
the sender's mistake: :func:`payload_problem` names the first field of the wrong shape, and the
HTTP server answers 400 with one log line. Fields are checked only for the shape they are read
in; every other field is left alone (``extra="allow"``), and a missing or null one is fine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

Object = dict[str, Any]


class _Shape(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")


class Message(_Shape):
    """A message as the listeners read it: an event, or the ``message`` of an event or action."""

    type: str | None = None
    subtype: str | None = None
    ts: str | None = None
    thread_ts: str | None = None
    text: str | None = None
    user: str | Object | None = None  # an object in user events, a string in messages
    bot_id: str | None = None
    reply_count: int | None = None
    latest_reply: str | None = None
    edited: Object | None = None
    channel: str | Object | None = None
    message: Message | None = None
    previous_message: Message | None = None


class _Installation(_Shape):
    """Whose installation a request is for: Bolt's authorisation looks it up by these."""

    enterprise_id: str | None = None
    team_id: str | None = None
    user_id: str | None = None
    is_enterprise_install: bool | None = None


class Authorization(_Installation):
    is_bot: bool | None = None


class Payload(_Shape):
    """An Events API body, an interaction ``payload`` or a slash command's form."""

    type: str | None = None
    callback_id: str | None = None
    command: str | None = None
    team_id: str | None = None
    enterprise_id: str | None = None
    user_id: str | None = None
    channel_id: str | None = None
    is_enterprise_install: bool | Literal["true", "false"] | None = None  # a string in forms
    event: Message | None = None
    message: Message | None = None
    team: Object | None = None
    user: Object | None = None
    channel: Object | None = None
    enterprise: Object | None = None
    view: Object | None = None
    container: Object | None = None
    actions: list[Object] | None = None
    authorizations: list[Authorization] | None = None


class BoltContext(_Installation):
    """What Bolt read out of the body into its context: who and where, for authorisation and
    for the channel key. Checked after Bolt has read them, so every path it takes is covered."""

    actor_enterprise_id: str | None = None
    actor_team_id: str | None = None
    actor_user_id: str | None = None
    channel_id: str | None = None
    thread_ts: str | None = None


def payload_problem(body: object, context: Mapping[str, Any]) -> str | None:
    """The first field of ``body`` (or of what Bolt read from it into ``context``) that has not
    the shape Slack sends, as ``where: what is wrong``; ``None`` when every field fits."""
    if not isinstance(body, dict):
        return f"the body is {type(body).__name__}, not an object"
    for model, value, name in ((Payload, body, "body"), (BoltContext, dict(context), "context")):
        try:
            model.model_validate(value)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or name
            return f"{name} {where}: {first['msg']}"[:200]
    return None
