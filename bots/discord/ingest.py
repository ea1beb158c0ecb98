"""A Discord message → an :class:`Utterance`, or nothing when AWAI should not read it.

Read: what people write in guild channels and threads (plain messages and replies). Not read:
bots and webhooks (AWAI's own posts included), system messages (joins, pins, thread notices),
direct messages, messages that carry no words (an image alone, a sticker, a forward), and
commands to AWAI (a message that starts by mentioning it, such as ``@AWAI read``): they are
said to AWAI, not to the room, as on Slack.
"""

from __future__ import annotations

from collections.abc import Iterable

import discord

from awai_engine.values import Utterance
from bots.discord.keys import Line
from bots.discord.plaintext import MentionNames, plain_text

READ_TYPES = frozenset({discord.MessageType.default, discord.MessageType.reply})


def is_read(message: discord.Message) -> bool:
    """Whether AWAI reads this message at all (author, place and kind; not yet its text)."""
    return (
        message.guild is not None
        and not message.author.bot
        and message.webhook_id is None
        and message.type in READ_TYPES
        and not addressed_to_awai(message)
    )


def addressed_to_awai(message: discord.Message) -> bool:
    """A command to AWAI: the message starts with a mention of the bot (``@AWAI read``)."""
    me = message.guild.me if message.guild is not None else None
    if me is None:
        return False
    return message.content.lstrip().startswith((f"<@{me.id}>", f"<@!{me.id}>"))


def mention_names(message: discord.Message) -> MentionNames:
    """The names a reader of the message sees for each mention, from the message and the cache."""
    users = {user.id: user.display_name for user in message.mentions}
    roles = {role.id: role.name for role in message.role_mentions}
    channels: dict[int, str] = {}
    if message.guild is not None:
        for channel_id in message.raw_channel_mentions:
            channel = message.guild.get_channel_or_thread(channel_id)
            if channel is not None:
                channels[channel_id] = channel.name
        for role_id in message.raw_role_mentions:
            role = message.guild.get_role(role_id)
            if role is not None:
                roles.setdefault(role_id, role.name)
    return MentionNames(users=users, roles=roles, channels=channels)


def to_utterance(message: discord.Message, line: Line) -> Utterance | None:
    """The utterance of a message AWAI reads; ``None`` when it has no words to read."""
    names = mention_names(message)
    text = plain_text(message.content, names)
    if not text:
        return None
    author_id = message.author.id
    addressees = tuple(
        dict.fromkeys(user.display_name for user in message.mentions if user.id != author_id)
    )
    return Utterance(
        channel=line.key,
        message_id=str(message.id),
        speaker_id=str(author_id),
        speaker_name=message.author.display_name,
        text=text,
        ts=message.created_at.timestamp(),
        thread_root=line.thread_root,
        scope=line.scope,
        addressees=addressees,
        edited_ts=message.edited_at.timestamp() if message.edited_at else None,
    )


def spoken_utterances(said: Iterable[discord.Message], line: Line) -> list[Utterance]:
    """What AWAI stores of ``said`` (messages of one line), in its order."""
    return [
        utterance
        for message in said
        if is_read(message) and (utterance := to_utterance(message, line)) is not None
    ]


def lacks_expected_text(message: discord.Message) -> bool:
    """A message that must have had words but arrived without them.

    Discord refuses a message with nothing in it, so a person's plain message with no text, no
    attachment, embed, sticker, poll or forwarded message only arrives like this when the bot
    lacks the message content intent.
    """
    return (
        is_read(message)
        and not message.content
        and not message.attachments
        and not message.embeds
        and not message.stickers
        and message.poll is None
        and not message.message_snapshots
        and not message.components
    )
