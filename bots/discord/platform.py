"""Discord as the actions see it (:class:`bots.actions.platform.Platform`): one member asking, in
one server, about one message; and AWAI's posts there, to redact.

The actions run in a worker thread; what they ask of Discord runs on the event loop through the
one bridge (:class:`~bots.discord.bridge.OnLoop`). Here Discord's rules become what the actions
ask for: the member's permissions and private threads (:mod:`bots.discord.access`), the message
fetched from the channel, a shared reading as a reply to its message, links as jump URLs. The
words are Discord's own (:mod:`bots.discord.messages`, :mod:`bots.discord.embeds`). Where the
private reading goes (an ephemeral follow-up, or a direct message) is the route's choice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

import discord

from awai_engine.posts import Post
from awai_engine.values import Reading, Utterance
from awai_engine.visibility import Scopes
from bots.actions.platform import Posted
from bots.discord import access, messages
from bots.discord.access import Readable, ReadRefused
from bots.discord.bridge import OnLoop
from bots.discord.embeds import reading_embed
from bots.discord.ingest import READ_TYPES, is_read, to_utterance
from bots.discord.keys import Line, channel_key, line_of
from bots.runtime import Runtime

log = logging.getLogger(__name__)

DeliverPrivately = Callable[[Reading, str | None], Coroutine[Any, Any, None]]
"""Shows a reading to the asker only (with a link to the shared one, when there is one)."""


class DiscordAsking:
    """One member's request for one message's reading, as the actions' platform port."""

    def __init__(
        self,
        loop: OnLoop,
        client: discord.Client,
        runtime: Runtime,
        member: discord.Member,
        channel: Readable,
        message_id: int,
        deliver: DeliverPrivately | None = None,
        given: discord.Message | None = None,
        checked: bool = False,
    ) -> None:
        """``deliver``: where this route shows a private reading (none for the buttons, whose
        answer is a share or details); ``given``: the message itself, when Discord sent it
        (saves a fetch); ``checked``: the route already made Discord's checks of the asker."""
        self.loop = loop
        self.client = client
        self.runtime = runtime
        self.member = member
        self.place = channel
        self.line: Line = line_of(channel)
        self.target = message_id
        self.deliver = deliver
        self.given = given
        self.checked = checked

    @property
    def channel(self) -> str:
        return self.line.key

    @property
    def message_id(self) -> str:
        return str(self.target)

    @property
    def asker(self) -> str:
        return str(self.member.id)

    @property
    def history_key(self) -> str:
        """The channel or thread itself: a thread has its own history and its own backfill."""
        return channel_key(self.place.guild.id, self.place.id)

    def check_may_read(self) -> None:
        if not self.checked:
            self.loop.run(access.check_member_may_read(self.member, self.place))

    def scopes(self) -> Scopes:
        stored = self.runtime.engine.scopes_of(self.line.key)
        return self.loop.run(
            access.readable_scopes(self.client, self.place.guild, self.member, stored)
        )

    def audience(self) -> Scopes:
        return access.audience_of(self.place)

    def fetch(self) -> Utterance:
        if self.given is not None:
            return utterance_of(self.given, self.line)
        return utterance_of(self.loop.run(fetch_message(self.place, self.target)), self.line)

    def post_privately(self, reading: Reading, shared_url: str | None) -> None:
        if self.deliver is None:
            raise RuntimeError("this Discord route shows no private reading")
        self.loop.run(self.deliver(reading, shared_url))

    def post_publicly(self, reading: Reading, by_asker: bool) -> Posted:
        if not isinstance(self.place, discord.abc.Messageable):  # a category: no messages
            raise ReadRefused(messages.NOT_READ)
        sent = self.loop.run(
            self.place.send(
                content=f"Shared by {self.member.mention}" if by_asker else None,
                embed=reading_embed(reading),
                reference=discord.MessageReference(
                    message_id=self.target, channel_id=self.place.id, fail_if_not_exists=False
                ),
                allowed_mentions=discord.AllowedMentions.none(),
            )
        )
        return Posted(place=str(sent.channel.id), post_id=str(sent.id))

    def link_to(self, post: Post) -> str:
        return f"https://discord.com/channels/{self.place.guild.id}/{post.place}/{post.post_id}"


async def fetch_message(channel: Readable, message_id: int) -> discord.Message:
    """The message as Discord has it now; a refusal that says why when it cannot be had."""
    if not isinstance(channel, discord.abc.Messageable):
        raise ReadRefused(messages.NOT_READ)
    try:
        return await channel.fetch_message(message_id)
    except discord.NotFound:
        raise ReadRefused(messages.NOT_FOUND) from None
    except discord.HTTPException:
        raise ReadRefused(messages.CANNOT_SEE_HERE) from None


def utterance_of(message: discord.Message, line: Line) -> Utterance:
    """What AWAI would have stored of ``message``; a refusal naming why it reads nothing of it."""
    spoken = not message.author.bot and message.webhook_id is None and message.type in READ_TYPES
    if not spoken:
        raise ReadRefused(messages.NOT_SPOKEN)
    utterance = to_utterance(message, line) if is_read(message) else None
    if utterance is None:
        raise ReadRefused(messages.NO_WORDS if is_read(message) else messages.NOT_READ)
    return utterance


class DiscordPosts:
    """AWAI's posts on Discord, as the actions' post editor."""

    def __init__(self, loop: OnLoop, client: discord.Client) -> None:
        self.loop = loop
        self.client = client

    def redact(self, post: Post, notice: str) -> bool:
        message = self.client.get_partial_messageable(int(post.place)).get_partial_message(
            int(post.post_id)
        )
        try:
            self.loop.run(message.edit(content=notice, embeds=[], attachments=[]))
        except discord.NotFound:
            pass  # already gone: nothing of it can be seen
        except discord.HTTPException as error:
            log.warning("AWAI post %s not redacted: %s", post.post_id, error)
            return False
        return True
