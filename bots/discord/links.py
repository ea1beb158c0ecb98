"""Message links: what a user may paste into ``/awai read``, and the jump links AWAI cites.

Accepted: a jump link (``https://discord.com/channels/<guild>/<channel>/<message>``, also the
ptb/canary hosts and the old discordapp.com, with or without ``<>``), the ``<channel>-<message>``
pair Discord copies with Shift + Copy ID, or a bare message id (meaning: in this channel).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from awai_engine.errors import AwaiError
from awai_engine.values import MessageRef
from bots.discord.keys import discord_channel_of, parse_channel_key

_SNOWFLAKE = r"\d{15,21}"
_JUMP_LINK = re.compile(
    r"<?https?://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/channels/"
    rf"(?P<guild>{_SNOWFLAKE}|@me)/(?P<channel>{_SNOWFLAKE})/(?P<message>{_SNOWFLAKE})/?>?"
)
_ID_PAIR = re.compile(rf"(?P<channel>{_SNOWFLAKE})-(?P<message>{_SNOWFLAKE})")
_BARE_ID = re.compile(rf"(?P<message>{_SNOWFLAKE})")

JUMP_BASE = "https://discord.com/channels"


class MalformedLinkError(AwaiError, ValueError):
    """The text is not a message link or id; the message says what is accepted."""


@dataclass(frozen=True)
class MessageLink:
    """A message named by a user; ``None`` parts were not given (they mean "here")."""

    message_id: int
    channel_id: int | None = None
    guild_id: int | None = None
    direct_message: bool = False


def parse_message_link(text: str) -> MessageLink:
    text = text.strip()
    if match := _JUMP_LINK.fullmatch(text):
        guild = match["guild"]
        return MessageLink(
            message_id=int(match["message"]),
            channel_id=int(match["channel"]),
            guild_id=None if guild == "@me" else int(guild),
            direct_message=guild == "@me",
        )
    if match := _ID_PAIR.fullmatch(text):
        return MessageLink(message_id=int(match["message"]), channel_id=int(match["channel"]))
    if match := _BARE_ID.fullmatch(text):
        return MessageLink(message_id=int(match["message"]))
    raise MalformedLinkError(
        "That is not a message link. Use “Copy Message Link” on the message (it looks like"
        " https://discord.com/channels/…/…/…), or paste the message id."
    )


def jump_url(guild_id: int, channel_id: int, message_id: int | str) -> str:
    return f"{JUMP_BASE}/{guild_id}/{channel_id}/{message_id}"


def jump_url_of(key: str, message: MessageRef) -> str:
    """The jump link of a stored message of channel ``key`` (threads link into the thread)."""
    parsed = parse_channel_key(key)
    if parsed is None:
        raise ValueError(f"{key!r} is not a Discord channel key")
    return jump_url(parsed[0], discord_channel_of(key, message), message.message_id)
