"""Slack message payloads → utterances, and which payloads are conversation at all.

Only what people said to each other is stored: bot posts, join/leave notices and other system
subtypes are not, nor are messages addressed to AWAI itself (``@AWAI read``), which are commands.
Channel key ``slack:<team>:<channel>``; message id the ``ts`` string; a reply's thread root is its
``thread_ts``; the version of its text is ``edited.ts``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from awai_engine.values import Utterance
from bots import keys
from bots.slack.markup import to_plain_text

# Subtypes that are a person speaking; every other subtype (joins, leaves, topic changes, bot
# posts, …) is a system notice and not part of the conversation.
SPOKEN_SUBTYPES = frozenset({"thread_broadcast", "file_share", "me_message"})

Message = Mapping[str, Any]


PLATFORM = "slack"


def channel_key(team_id: str, channel_id: str) -> str:
    return keys.channel_key(PLATFORM, team_id, channel_id)


def parse_channel_key(key: str) -> tuple[str, str] | None:
    """``(team id, channel id)`` of a Slack channel key, ``None`` for another platform's."""
    return keys.parse_key(key, PLATFORM)


def workspace_prefix(team_id: str) -> str:
    """What every channel key of one workspace starts with."""
    return keys.place_prefix(PLATFORM, team_id)


def thread_root_of(message: Message) -> str | None:
    """The thread's first message for a reply; ``None`` for a top-level message or a thread root."""
    thread_ts = message.get("thread_ts")
    return thread_ts if thread_ts and thread_ts != message.get("ts") else None


def said_by_a_person(message: Message) -> bool:
    """Whether a person (not a bot or an integration) wrote the message."""
    return bool(message.get("user") and message.get("ts")) and not message.get("bot_id")


def is_spoken(message: Message, bot_user_id: str | None) -> bool:
    """A person's message to the room (not a bot, a system notice, or a command to AWAI)."""
    subtype = message.get("subtype")
    if subtype is not None and subtype not in SPOKEN_SUBTYPES:
        return False
    if not said_by_a_person(message):
        return False
    addressed_to_awai = bool(bot_user_id) and message.get("text", "").lstrip().startswith(
        f"<@{bot_user_id}>"
    )
    return not addressed_to_awai


def to_utterance(
    message: Message, team_id: str, channel_id: str, name_of: Callable[[str], str]
) -> Utterance | None:
    """The utterance of a spoken message; ``None`` when it has no words (a bare file, say)."""
    text, addressees = to_plain_text(message.get("text") or "", name_of)
    if not text:
        return None
    user_id = message["user"]
    return Utterance(
        channel=channel_key(team_id, channel_id),
        message_id=message["ts"],
        speaker_id=user_id,
        speaker_name=name_of(user_id),
        text=text,
        ts=float(message["ts"]),
        thread_root=thread_root_of(message),
        addressees=addressees,
        edited_ts=edited_ts_of(message),
    )


def spoken_utterances(
    said: Iterable[Message],
    team_id: str,
    channel_id: str,
    bot_user_id: str | None,
    name_of: Callable[[str], str],
) -> list[Utterance]:
    """What AWAI stores of ``said``, in its order: the words people said to the room."""
    return [
        utterance
        for message in said
        if is_spoken(message, bot_user_id)
        and (utterance := to_utterance(message, team_id, channel_id, name_of)) is not None
    ]


def edited_ts_of(message: Message) -> float | None:
    """When the message's text was last edited, as Slack says (``edited.ts``); ``None`` if never."""
    edited = message.get("edited") or {}
    return float(edited["ts"]) if edited.get("ts") else None
