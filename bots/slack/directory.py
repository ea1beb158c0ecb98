"""Who is who and where, per workspace: display names, workspace URLs and permalinks, cached.

Why cached: every mention in every message would otherwise cost a ``users.info`` call, and Slack
rate-limits it; names and languages change rarely, so an hour-old name is good enough (the same
call says a person's locale, which picks the language of the readings they ask for). Permalinks come from
``chat.getPermalink``, Slack's own answer (an Enterprise Grid's host, a renamed domain), and a
message's permalink never changes, so each is asked once; the most recently used are kept.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bots.slack.links import permalink

log = logging.getLogger(__name__)

NAME_TTL_SECONDS = 3600.0
PERMALINKS_KEPT = 20_000


@dataclass(frozen=True)
class _Person:
    name: str
    locale: str | None


class SlackDirectory:
    def __init__(self, name_ttl_seconds: float = NAME_TTL_SECONDS) -> None:
        self._ttl = name_ttl_seconds
        self._people: dict[tuple[str, str], tuple[float, _Person]] = {}
        self._urls: dict[str, str] = {}
        self._channels: dict[tuple[str, str], tuple[float, str]] = {}
        self._permalinks: OrderedDict[tuple[str, str, str], str] = OrderedDict()
        self._lock = threading.Lock()

    def names(self, client: WebClient, team_id: str) -> Callable[[str], str]:
        """The display name of each user id of one workspace (what an utterance is made with)."""
        return lambda user_id: self.display_name(client, team_id, user_id)

    def display_name(self, client: WebClient, team_id: str, user_id: str) -> str:
        """The name people see for a user; the user id itself if Slack will not say."""
        return self._person(client, team_id, user_id).name

    def locale(self, client: WebClient, team_id: str, user_id: str) -> str | None:
        """The language the user set Slack to (``ja-JP``), None if Slack will not say."""
        return self._person(client, team_id, user_id).locale

    def _person(self, client: WebClient, team_id: str, user_id: str) -> _Person:
        """What ``users.info`` says of a user (with their locale), asked once an hour."""
        key = (team_id, user_id)
        with self._lock:
            cached = self._people.get(key)
        if cached is not None and time.monotonic() - cached[0] < self._ttl:
            return cached[1]
        try:
            user = client.users_info(user=user_id, include_locale=True)["user"]
        except SlackApiError as error:
            log.info("users.info %s failed: %s", user_id, error.response.get("error"))
            return cached[1] if cached else _Person(user_id, None)
        profile = user.get("profile") or {}
        name = (
            profile.get("display_name")
            or profile.get("real_name")
            or user.get("real_name")
            or user.get("name")
            or user_id
        )
        person = _Person(name, user.get("locale") or None)
        with self._lock:
            self._people[key] = (time.monotonic(), person)
        return person

    def channel_title(self, client: WebClient, team_id: str, channel_id: str) -> str:
        """``#name``, as people know the channel (``conversations.info``, asked once an hour);
        the channel id if Slack will not say."""
        key = (team_id, channel_id)
        with self._lock:
            cached = self._channels.get(key)
        if cached is not None and time.monotonic() - cached[0] < self._ttl:
            return cached[1]
        try:
            name = client.conversations_info(channel=channel_id)["channel"].get("name")
        except SlackApiError as error:
            log.info("conversations.info %s failed: %s", channel_id, error.response.get("error"))
            return cached[1] if cached else channel_id
        title = f"#{name}" if name else channel_id
        with self._lock:
            self._channels[key] = (time.monotonic(), title)
        return title

    def workspace_url(self, client: WebClient, team_id: str) -> str:
        """``https://team.slack.com/``, asked of ``auth.test`` once per workspace."""
        with self._lock:
            url = self._urls.get(team_id)
        if url is None:
            url = client.auth_test()["url"]
            with self._lock:
                self._urls[team_id] = url
        return url

    def permalink(
        self,
        client: WebClient,
        team_id: str,
        channel_id: str,
        ts: str,
        thread_root: str | None = None,
    ) -> str:
        """The message's permalink as ``chat.getPermalink`` gives it, asked once per message.

        If Slack will not say (the message is gone, a transient error), the link is made from the
        workspace URL instead, so a reading is never lost over one citation; that one is not kept.
        """
        key = (team_id, channel_id, ts)
        with self._lock:
            known = self._permalinks.get(key)
            if known is not None:
                self._permalinks.move_to_end(key)
                return known
        try:
            link = client.chat_getPermalink(channel=channel_id, message_ts=ts)["permalink"]
        except SlackApiError as error:
            log.info("chat.getPermalink %s failed: %s", ts, error.response.get("error"))
            return permalink(self.workspace_url(client, team_id), channel_id, ts, thread_root)
        with self._lock:
            self._permalinks[key] = link
            while len(self._permalinks) > PERMALINKS_KEPT:
                self._permalinks.popitem(last=False)
        return link

    def forget_person(self, team_id: str, user_id: str) -> None:
        """Drop what is cached about a user (their name and locale) when they ask AWAI to forget
        them: asked again from Slack if AWAI ever needs it, never kept from before."""
        with self._lock:
            self._people.pop((team_id, user_id), None)

    def forget_channel(self, team_id: str, channel_id: str) -> None:
        """Drop what is cached about a channel (its title, its messages' permalinks) when AWAI
        leaves it or it is deleted: a deleted channel's name is not kept until the hour ends."""
        with self._lock:
            self._channels.pop((team_id, channel_id), None)
            for link in [link for link in self._permalinks if link[:2] == (team_id, channel_id)]:
                del self._permalinks[link]

    def forget_workspace(self, team_id: str) -> None:
        """Drop what is cached about a workspace (it uninstalled the app)."""
        with self._lock:
            self._urls.pop(team_id, None)
            for link in [link for link in self._permalinks if link[0] == team_id]:
                del self._permalinks[link]
            for person in [person for person in self._people if person[0] == team_id]:
                del self._people[person]
            for place in [place for place in self._channels if place[0] == team_id]:
                del self._channels[place]
