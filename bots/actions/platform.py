"""The port the actions are written against: what an action needs of a chat platform.

The actions (:mod:`bots.actions`) own these protocols; Slack (:mod:`bots.slack.platform`) and
Discord (:mod:`bots.discord.platform`) implement them, each in its own words and formatting. A
:class:`Platform` is one person asking about one message: the checks and posts all concern that
asker and that message, so an action needs no platform ids. :class:`PostEditor` is what is left
when nobody asks: changing AWAI's own posts after a message is removed.

Every method blocks until the platform answered (Discord's come back from the event loop through
:mod:`bots.discord.bridge`), and a refusal the asker should hear is a :class:`Refused`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from awai_engine.errors import AwaiError
from awai_engine.posts import Post
from awai_engine.values import Reading, Utterance
from awai_engine.visibility import Scopes


class Refused(AwaiError):
    """The platform will not give this asker this reading; ``str(error)`` is the sentence the
    asker is told, in the platform's own voice, and ``reason`` a few words for the log (never
    what anyone wrote)."""

    def __init__(self, sentence: str, reason: str = "refused") -> None:
        super().__init__(sentence)
        self.reason = reason


@dataclass(frozen=True)
class Posted:
    """Where a post for everyone went, as the record of posts names it."""

    place: str
    post_id: str


class Platform(Protocol):
    """One asker and one message, as a chat platform lets AWAI see and answer them."""

    @property
    def channel(self) -> str:
        """The stored channel key the message belongs to."""

    @property
    def message_id(self) -> str:
        """The message's id, as stored."""

    @property
    def asker(self) -> str:
        """Who asks: the platform's id of the person (for claims and the log)."""

    @property
    def history_key(self) -> str:
        """The backfill cursor that, once done, means the place's history before AWAI is read."""

    def check_may_read(self) -> None:
        """Return when the asker may read the message's channel; else :class:`Refused`."""

    def scopes(self) -> Scopes:
        """What the asker may read of the channel's stored messages. Asked again after a message
        is stored: it may be the first of a place with a scope of its own (a private thread)."""

    def audience(self) -> Scopes:
        """What everyone who sees a post for everyone about the message may read."""

    def fetch(self) -> Utterance:
        """The message as the platform has it now, as AWAI would store it; :class:`Refused`
        (saying why) when it cannot be had or holds nothing AWAI reads."""

    def post_privately(self, reading: Reading, shared_url: str | None) -> None:
        """Show ``reading`` to the asker only (``shared_url``: the message's one shared reading,
        when there is one); :class:`Refused` when it cannot be delivered."""

    def post_publicly(self, reading: Reading, by_asker: bool) -> Posted:
        """Post ``reading`` for everyone, by the message (``by_asker``: saying who shared it);
        :class:`Refused` when AWAI may not post there."""

    def link_to(self, post: Post) -> str:
        """A link people can open to one of AWAI's posts about this message."""


class PostEditor(Protocol):
    """Changes AWAI's own posts on a platform."""

    def redact(self, post: Post, notice: str) -> bool:
        """Replace the post's content by ``notice`` (a picture is deleted); ``True`` when done
        or the post is gone, ``False`` when the platform refused (it is tried again later)."""
