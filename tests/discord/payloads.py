"""Discord payloads shaped like the ones the gateway and the REST API send (API v10).

One guild with a public channel, a private channel, a thread and a handful of people. Ids are
real snowflakes made from increasing times, so message order and ``ts`` follow the ids exactly as
they do on Discord.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from discord.utils import time_snowflake


class Snowflakes:
    """Snowflakes one second apart from a fixed start: time-ordered like Discord's."""

    def __init__(self, start: datetime) -> None:
        self._seconds = itertools.count()
        self._start = start

    def next(self) -> int:
        return time_snowflake(self._start + timedelta(seconds=next(self._seconds)))


SNOWFLAKES = Snowflakes(datetime(2024, 5, 1, 9, 0, tzinfo=UTC))

APPLICATION_ID = SNOWFLAKES.next()
GUILD_ID = SNOWFLAKES.next()
OTHER_GUILD_ID = SNOWFLAKES.next()
CHANNEL_ID = SNOWFLAKES.next()
PRIVATE_CHANNEL_ID = SNOWFLAKES.next()
THREAD_ID = SNOWFLAKES.next()
MODERATOR_ROLE_ID = SNOWFLAKES.next()
ANN_ID, BOB_ID, CAROL_ID, MOD_ID = (SNOWFLAKES.next() for _ in range(4))

VIEW_AND_HISTORY = (1 << 10) | (1 << 16) | (1 << 11)  # view channel, read history, send messages
MANAGE_MESSAGES = 1 << 13
MESSAGE_CONTENT_FLAGS = 1 << 19  # GATEWAY_MESSAGE_CONTENT_LIMITED: the portal toggle is on
NO_MESSAGE_CONTENT_FLAGS = 0


def iso(moment: datetime) -> str:
    return moment.isoformat()


def iso_now() -> str:
    return iso(datetime.now(UTC))


def user(user_id: int, name: str, bot: bool = False) -> dict[str, Any]:
    return {
        "id": str(user_id),
        "username": name.lower(),
        "global_name": name,
        "discriminator": "0",
        "avatar": None,
        "bot": bot,
        "public_flags": 0,
    }


BOT_USER = user(APPLICATION_ID, "AWAI", bot=True)
ANN = user(ANN_ID, "Ann")
BOB = user(BOB_ID, "Bob")
CAROL = user(CAROL_ID, "Carol")
MOD = user(MOD_ID, "Mod")
PEOPLE = {ANN_ID: ANN, BOB_ID: BOB, CAROL_ID: CAROL, MOD_ID: MOD}


def application(flags: int) -> dict[str, Any]:
    return {
        "id": str(APPLICATION_ID),
        "name": "AWAI",
        "description": "",
        "icon": None,
        "bot_public": False,
        "bot_require_code_grant": False,
        "owner": user(MOD_ID, "Mod"),
        "verify_key": "0" * 64,
        "flags": flags,
        "summary": "",
        "team": None,
    }


def member(
    person: dict[str, Any], roles: tuple[int, ...] = (), nick: str | None = None
) -> dict[str, Any]:
    return {
        "user": person,
        "nick": nick,
        "roles": [str(role) for role in roles],
        "joined_at": "2024-01-01T00:00:00+00:00",
        "deaf": False,
        "mute": False,
        "flags": 0,
        "avatar": None,
    }


def text_channel(
    channel_id: int, name: str, overwrites: list[dict[str, Any]] = ()
) -> dict[str, Any]:  # type: ignore[assignment]
    return {
        "id": str(channel_id),
        "type": 0,
        "guild_id": str(GUILD_ID),
        "name": name,
        "position": 0,
        "permission_overwrites": list(overwrites),
        "nsfw": False,
        "parent_id": None,
        "topic": None,
        "last_message_id": None,
        "rate_limit_per_user": 0,
    }


def thread(thread_id: int, parent_id: int, name: str, private: bool = False) -> dict[str, Any]:
    return {
        "id": str(thread_id),
        "type": 12 if private else 11,
        "guild_id": str(GUILD_ID),
        "parent_id": str(parent_id),
        "owner_id": str(ANN_ID),
        "name": name,
        "last_message_id": None,
        "message_count": 0,
        "member_count": 2,
        "rate_limit_per_user": 0,
        "flags": 0,
        "thread_metadata": {
            "archived": False,
            "auto_archive_duration": 1440,
            "archive_timestamp": "2024-05-01T09:00:00+00:00",
            "locked": False,
            "invitable": True,
        },
    }


PRIVATE_OVERWRITES = [
    {"id": str(GUILD_ID), "type": 0, "allow": "0", "deny": str(1 << 10)},
    {"id": str(MODERATOR_ROLE_ID), "type": 0, "allow": str(VIEW_AND_HISTORY), "deny": "0"},
]


def guild(guild_id: int = GUILD_ID) -> dict[str, Any]:
    """A GUILD_CREATE payload: two channels (one only moderators see), a thread, two roles."""
    return {
        "id": str(guild_id),
        "name": "Test Server",
        "icon": None,
        "owner_id": str(MOD_ID),
        "afk_timeout": 300,
        "verification_level": 0,
        "default_message_notifications": 0,
        "explicit_content_filter": 0,
        "features": [],
        "mfa_level": 0,
        "premium_tier": 0,
        "preferred_locale": "en-US",
        "nsfw_level": 0,
        "member_count": 5,
        "large": False,
        "unavailable": False,
        "roles": [
            {
                "id": str(guild_id),
                "name": "@everyone",
                "permissions": str(VIEW_AND_HISTORY),
                "position": 0,
                "color": 0,
                "hoist": False,
                "managed": False,
                "mentionable": False,
            },
            {
                "id": str(MODERATOR_ROLE_ID),
                "name": "moderators",
                "permissions": str(VIEW_AND_HISTORY | MANAGE_MESSAGES),
                "position": 1,
                "color": 0,
                "hoist": False,
                "managed": False,
                "mentionable": True,
            },
        ],
        "channels": [
            text_channel(CHANNEL_ID, "general"),
            text_channel(PRIVATE_CHANNEL_ID, "moderators", PRIVATE_OVERWRITES),
        ],
        "threads": [thread(THREAD_ID, CHANNEL_ID, "plans")],
        "members": [member(BOT_USER)],
        "emojis": [],
        "stickers": [],
        "voice_states": [],
        "presences": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
    }


def message(
    message_id: int,
    *,
    channel_id: int = CHANNEL_ID,
    author: dict[str, Any] = ANN,
    content: str = "",
    mentions: tuple[dict[str, Any], ...] = (),
    mention_roles: tuple[int, ...] = (),
    embeds: list[dict[str, Any]] = (),  # type: ignore[assignment]
    attachments: list[dict[str, Any]] = (),  # type: ignore[assignment]
    message_type: int = 0,
    guild_id: int | None = GUILD_ID,
    webhook_id: int | None = None,
) -> dict[str, Any]:
    """A MESSAGE_CREATE payload (also what history and fetch return)."""
    moment = datetime.fromtimestamp(((message_id >> 22) + 1420070400000) / 1000, UTC)
    data: dict[str, Any] = {
        "id": str(message_id),
        "channel_id": str(channel_id),
        "author": author,
        "content": content,
        "timestamp": iso(moment),
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [{**person, "member": member(person)} for person in mentions],
        "mention_roles": [str(role) for role in mention_roles],
        "attachments": list(attachments),
        "embeds": list(embeds),
        "pinned": False,
        "type": message_type,
        "flags": 0,
        "components": [],
    }
    if guild_id is not None:
        data["guild_id"] = str(guild_id)
        data["member"] = {key: value for key, value in member(author).items() if key != "user"}
    if webhook_id is not None:
        data["webhook_id"] = str(webhook_id)
    return data


def interaction(
    *,
    data: dict[str, Any],
    person: dict[str, Any] = ANN,
    channel: dict[str, Any] | None = None,
    permissions: int = VIEW_AND_HISTORY,
    roles: tuple[int, ...] = (),
    guild_id: int = GUILD_ID,
    app_permissions: int = VIEW_AND_HISTORY,
    locale: str = "en-US",
) -> dict[str, Any]:
    """An INTERACTION_CREATE payload of an application command in a guild channel (``locale``:
    the language the person set Discord to)."""
    channel = channel or text_channel(CHANNEL_ID, "general")
    return {
        "id": str(SNOWFLAKES.next()),
        "application_id": str(APPLICATION_ID),
        "type": 2,
        "token": f"token-{SNOWFLAKES.next()}",
        "version": 1,
        "guild_id": str(guild_id),
        "channel_id": channel["id"],
        "channel": channel,
        "member": {**member(person, roles), "permissions": str(permissions)},
        "app_permissions": str(app_permissions),
        "locale": locale,
        "guild_locale": "en-US",
        "entitlements": [],
        "attachment_size_limit": 10 * 1024 * 1024,
        "authorizing_integration_owners": {"0": str(guild_id)},
        "context": 0,
        "data": data,
    }


def slash(subcommand: str, **options: str) -> dict[str, Any]:
    """The ``data`` of ``/awai <subcommand> [option:value ...]``."""
    return {
        "id": str(SNOWFLAKES.next()),
        "name": "awai",
        "type": 1,
        "options": [
            {
                "name": subcommand,
                "type": 1,
                "options": [
                    {"name": name, "type": 3, "value": value} for name, value in options.items()
                ],
            }
        ],
    }


def message_menu(target: dict[str, Any]) -> dict[str, Any]:
    """The ``data`` of the "Read with AWAI" message context menu on ``target``."""
    return {
        "id": str(SNOWFLAKES.next()),
        "name": "Read with AWAI",
        "type": 3,
        "target_id": target["id"],
        "resolved": {"messages": {target["id"]: target}},
    }
