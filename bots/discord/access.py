"""Who may get a reading of which message, and where it may be shown.

The rules, each a function below:
- a reading is of a message in the server it is asked from: never another server, never a DM;
- the asker must be able to see the channel and read its history (a private thread also needs
  them to be in it, or to manage threads);
- a public reading is shown in the channel it is about, so a reading cannot carry a channel's words
  to people who cannot read that channel; a private (ephemeral) reading may be of any channel of
  the server the asker can read;
- what a reading or digest is made of is limited to the scopes the asker may read
  (:func:`readable_scopes`): the channel, and each private thread of it they are in (every one,
  if they may manage threads there); a public post, to what everyone where it is posted may read
  (:func:`audience_of`). A thread the asker left, or an archived one, is checked the same way.
The engine keeps channels apart by key, so a reading never mixes channels or servers.
"""

from __future__ import annotations

import asyncio

import discord

from awai_engine.visibility import Scopes
from bots.actions.platform import Refused
from bots.discord.keys import private_thread_of, private_thread_scope, scope_of
from bots.discord.links import MessageLink

Readable = discord.abc.GuildChannel | discord.Thread


class ReadRefused(Refused):
    """A reading is refused; the message is shown to the person who asked (a refusal the
    actions pass on as any platform's)."""


def may_read_history(permissions: discord.Permissions) -> bool:
    return permissions.view_channel and permissions.read_message_history


def check_same_guild(link: MessageLink, guild_id: int) -> None:
    if link.direct_message:
        raise ReadRefused("AWAI reads server channels only, not direct messages.")
    if link.guild_id is not None and link.guild_id != guild_id:
        raise ReadRefused(
            "That message is in another server. Readings never cross servers: ask in the server"
            " where it was written."
        )


def check_shown_where_it_belongs(channel_id: int, asked_in: int | None, ephemeral: bool) -> None:
    if not ephemeral and channel_id != asked_in:
        raise ReadRefused(
            "Readings here are posted for everyone in the channel, so AWAI reads a message only in"
            " its own channel: ask there (use “Read with AWAI” on the message)."
        )


async def resolve_channel(
    client: discord.Client, guild: discord.Guild, channel_id: int
) -> Readable:
    """The channel or thread of that id in this guild, from the cache or else from Discord."""
    channel = guild.get_channel_or_thread(channel_id)
    if channel is None:
        try:
            fetched = await client.fetch_channel(channel_id)
        except (discord.NotFound, discord.Forbidden):
            raise ReadRefused("AWAI cannot see that channel.") from None
        if not isinstance(fetched, discord.abc.GuildChannel | discord.Thread):
            raise ReadRefused("AWAI reads server channels only, not direct messages.")
        channel = fetched
    if channel.guild.id != guild.id:
        raise ReadRefused(
            "That message is in another server. Readings never cross servers: ask in the server"
            " where it was written."
        )
    return channel


def check_may_read_here(interaction: discord.Interaction) -> None:
    """Refuse unless the asker can read history where they asked (Discord's own permissions)."""
    if not may_read_history(interaction.permissions):
        raise ReadRefused(_NO_HISTORY)


def asker_in(interaction: discord.Interaction) -> tuple[discord.Guild, discord.Member]:
    """The server an interaction came from and the member who asked; refused outside a server,
    or when Discord sent no member whose permissions can be checked."""
    guild, member = interaction.guild, interaction.user
    if guild is None:
        raise ReadRefused("AWAI reads server channels only.")
    if not isinstance(member, discord.Member):
        raise ReadRefused("AWAI could not check your permissions in that channel.")
    return guild, member


async def check_may_read_there(interaction: discord.Interaction, channel: Readable) -> None:
    """Refuse unless the asker can read the history of another channel or thread."""
    await check_member_may_read(asker_in(interaction)[1], channel)


async def check_member_may_read(member: discord.Member, channel: Readable) -> None:
    """Refuse unless ``member`` can read the history of ``channel`` (and, for a private thread,
    is in it or may manage threads), by Discord's own permissions."""
    permissions = channel.permissions_for(member)
    if not may_read_history(permissions):
        raise ReadRefused(_NO_HISTORY)
    if not await _in_private_thread(channel, member, permissions):
        raise ReadRefused("That private thread is not one you are in.")


async def readable_scopes(
    client: discord.Client, guild: discord.Guild, member: discord.Member, stored: frozenset[str]
) -> Scopes:
    """The scopes of a channel's stored messages that ``member`` may read, by Discord's rules.

    The caller has checked that they may read the channel. Each private thread with stored
    messages is asked about (concurrently): readable when they may read its history and are in
    it, or may manage threads. A thread AWAI can no longer see is not readable.
    """
    threads = sorted({thread for scope in stored if (thread := private_thread_of(scope))})
    allowed = await asyncio.gather(
        *(_may_read_thread(client, guild, member, thread) for thread in threads)
    )
    return Scopes.channel(
        *(private_thread_scope(thread) for thread, ok in zip(threads, allowed, strict=True) if ok)
    )


async def asker_scopes(
    client: discord.Client, interaction: discord.Interaction, stored: frozenset[str], public: bool
) -> Scopes:
    """What a reading or digest for this interaction may hold: what the asker may read of the
    channel (whose messages carry the ``stored`` scopes) and, when it is posted for everyone,
    only what everyone where it is posted may read too."""
    guild, member = asker_in(interaction)
    scopes = await readable_scopes(client, guild, member, stored)
    if public:
        place = interaction.channel
        if not isinstance(place, discord.abc.GuildChannel | discord.Thread):
            raise ReadRefused("AWAI could not tell who would see a post here.")
        scopes = scopes & audience_of(place)
    return scopes


def audience_of(place: Readable) -> Scopes:
    """What everyone who sees a post in ``place`` may read: the channel's scope, and a private
    thread's own when the post is in one (its members all may read it)."""
    return Scopes.channel(scope_of(place))


async def _may_read_thread(
    client: discord.Client, guild: discord.Guild, member: discord.Member, thread_id: int
) -> bool:
    try:
        thread = await resolve_channel(client, guild, thread_id)
    except ReadRefused:
        return False
    permissions = thread.permissions_for(member)
    return may_read_history(permissions) and await _in_private_thread(thread, member, permissions)


async def _in_private_thread(
    channel: Readable, member: discord.Member, permissions: discord.Permissions
) -> bool:
    """``True`` unless ``channel`` is a private thread that ``member`` is not in (and may not
    manage). Asked of Discord, so a member who left, or a thread archived, is answered right."""
    if not isinstance(channel, discord.Thread) or not channel.is_private():
        return True
    if permissions.manage_threads:
        return True
    try:
        await channel.fetch_member(member.id)
    except discord.NotFound:
        return False
    return True


_NO_HISTORY = (
    "You cannot read the message history of that channel, so AWAI will not read it for you."
)
