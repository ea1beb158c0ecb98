"""Who may get a reading of which message, and where it may be shown.

The rules, each a function below:
- a reading is of a message in the server it is asked from: never another server, never a DM;
- the asker must be able to see the channel and read its history (a private thread also needs
  them to be in it, or to manage threads);
- a public reading is shown in the channel it is about, so a reading cannot carry a channel's words
  to people who cannot read that channel; a private (ephemeral) reading may be of any channel of
  the server the asker can read.
The engine keeps channels apart by key, so a reading never mixes channels or servers.
"""

from __future__ import annotations

import discord

from bots.discord.links import MessageLink

Readable = discord.abc.GuildChannel | discord.Thread


class ReadRefused(Exception):
    """A reading is refused; the message is shown to the person who asked."""


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


async def check_may_read_there(interaction: discord.Interaction, channel: Readable) -> None:
    """Refuse unless the asker can read the history of another channel or thread."""
    member = interaction.user
    if not isinstance(member, discord.Member):
        raise ReadRefused("AWAI could not check your permissions in that channel.")
    permissions = channel.permissions_for(member)
    if not may_read_history(permissions):
        raise ReadRefused(_NO_HISTORY)
    if (
        isinstance(channel, discord.Thread)
        and channel.is_private()
        and not permissions.manage_threads
    ):
        try:
            await channel.fetch_member(member.id)
        except discord.NotFound:
            raise ReadRefused("That private thread is not one you are in.") from None


_NO_HISTORY = (
    "You cannot read the message history of that channel, so AWAI will not read it for you."
)
