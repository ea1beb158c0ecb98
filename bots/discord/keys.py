"""Channel keys and lines: which AWAI channel, and which line inside it, a Discord channel is.

A thread is a line inside its parent channel (see the package docstring), so a thread and its
parent share one key and association can reach from the thread into the channel. A private
thread's messages carry the thread's own visibility scope (:func:`private_thread_scope`), so they
reach only the readings of people who may read that thread (:mod:`bots.discord.access`).
"""

from __future__ import annotations

from dataclasses import dataclass

import discord

from awai_engine.values import CHANNEL_SCOPE, MessageRef
from bots import keys

PLATFORM = "discord"


@dataclass(frozen=True)
class Line:
    """Where a message is stored: the AWAI channel key, the thread it belongs to, if any, and
    who may see it (a private thread's scope, else the channel's)."""

    key: str
    thread_root: str | None = None
    scope: str = CHANNEL_SCOPE


def channel_key(guild_id: int, channel_id: int) -> str:
    return keys.channel_key(PLATFORM, str(guild_id), str(channel_id))


def guild_prefix(guild_id: int) -> str:
    """Every key of one guild starts with this (used to purge a guild, never to mix guilds)."""
    return keys.place_prefix(PLATFORM, str(guild_id))


def parse_channel_key(key: str) -> tuple[int, int] | None:
    """``(guild id, channel id)`` of a Discord key, ``None`` for another platform's key."""
    parsed = keys.parse_key(key, PLATFORM)
    if parsed is None or not parsed[0].isdigit() or not parsed[1].isdigit():
        return None
    return int(parsed[0]), int(parsed[1])


def line_of(channel: discord.abc.GuildChannel | discord.Thread) -> Line:
    """The line of a guild channel or thread (a thread's key is its parent channel's)."""
    if isinstance(channel, discord.Thread):
        return Line(
            channel_key(channel.guild.id, channel.parent_id), str(channel.id), scope_of(channel)
        )
    return Line(channel_key(channel.guild.id, channel.id))


PRIVATE_THREAD = "private-thread:"


def private_thread_scope(thread_id: int) -> str:
    """The visibility scope of a private thread's messages: only its members (and people who may
    manage threads in its channel) may read them."""
    return f"{PRIVATE_THREAD}{thread_id}"


def private_thread_of(scope: str) -> int | None:
    """The private thread a scope names, ``None`` for the channel's own scope."""
    rest = scope.removeprefix(PRIVATE_THREAD)
    return int(rest) if rest != scope and rest.isdigit() else None


def scope_of(channel: discord.abc.GuildChannel | discord.Thread) -> str:
    """Who may see a channel's or thread's messages: a private thread's own audience, or everyone
    who may read the channel (a public thread is readable by all who read its parent)."""
    if isinstance(channel, discord.Thread) and channel.is_private():
        return private_thread_scope(channel.id)
    return CHANNEL_SCOPE


def discord_channel_of(key: str, message: MessageRef) -> int:
    """The Discord channel (or thread) that holds a stored message, for its jump link.

    A message stored with a ``thread_root`` was posted in the thread of that id (a forum post's
    first message included: its id is the thread's). The message a thread grew from was posted in
    the channel before the thread existed, so it is stored without one and links to the channel.
    """
    parsed = parse_channel_key(key)
    if parsed is None:
        raise ValueError(f"{key!r} is not a Discord channel key")
    if message.thread_root is not None:
        return int(message.thread_root)
    return parsed[1]
