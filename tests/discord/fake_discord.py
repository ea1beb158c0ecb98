"""A local stand-in for Discord's REST API on 127.0.0.1, for the real discord.py client.

discord.py builds every REST URL from ``discord.http.Route.BASE`` (interaction callbacks and
follow-ups included), so pointing that at this server lets the real client, its HTTP layer and
its webhook adapter run unchanged with no network. The server keeps the bot's guild, its channels
and threads and their messages (history is paged as Discord pages it: newest first within a page,
``after``/``before``/``limit``), records every request, and records what each person would
*see* (:attr:`FakeDiscord.delivered`): a follow-up's effective visibility, not the flags it asked
for. What it enforces, and what it does not, is in ``tests/discord/README.md``; the rules
themselves are in :mod:`tests.discord.fake_rules`.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.discord import payloads
from tests.discord.fake_rules import (
    CANNOT_DM,
    EPHEMERAL,
    MISSING_ACCESS,
    MISSING_PERMISSIONS,
    UNKNOWN_CHANNEL,
    UNKNOWN_INTERACTION,
    UNKNOWN_MESSAGE,
    UNKNOWN_WEBHOOK,
    Clock,
    InteractionState,
    Refusal,
    body_refusal,
)

VIEW_CHANNEL = 1 << 10
SEND_MESSAGES = 1 << 11
MANAGE_THREADS = 1 << 34
READ_MESSAGE_HISTORY = 1 << 16
THREAD_TYPES = {10, 11, 12}


def _json(data: Any, status: int = 200) -> web.Response:
    """JSON with Discord's exact content type (discord.py parses only ``application/json``)."""
    return web.Response(
        body=json.dumps(data).encode(), status=status, headers={"Content-Type": "application/json"}
    )


def _refused(refusal: Refusal) -> web.Response:
    return _json(refusal.body(), status=refusal.status)


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    body: dict[str, Any] | list[Any] | None
    files: list[tuple[str, bytes]] = field(default_factory=list)


@dataclass(frozen=True)
class Delivered:
    """A message as people see it: where, to whom (``ephemeral``: only ``user_id``), and what."""

    message_id: int
    channel_id: int
    ephemeral: bool
    user_id: int | None
    content: str
    embeds: list[dict[str, Any]]
    route: str
    """``response`` (the interaction's callback), ``followup``, ``channel`` (a plain post) or
    ``dm`` (a direct message: ``ephemeral`` in the sense that only ``user_id`` sees it)."""
    reference: int | None = None


RECORDED = web.RequestKey("recorded", Recorded)


class FakeDiscord:
    """The fake API. Start it with :meth:`start` (its own thread and loop); :meth:`stop` after."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.delivered: list[Delivered] = []
        self.clock = Clock()
        self.interactions: dict[str, InteractionState] = {}
        self.guild_ids = {payloads.GUILD_ID}
        """The guilds the bot is in; channels of any other guild answer 403 Missing Access."""
        self.channels: dict[int, dict[str, Any]] = {}
        self.messages: dict[int, list[dict[str, Any]]] = {}
        self.thread_members: dict[int, set[int]] = {}
        self.bot_permissions: dict[int, int] = {}
        """The bot's permissions per channel, where they differ from ``DEFAULT_BOT_PERMISSIONS``."""
        self.direct_messages: dict[int, int] = {}
        """DM channel id → the person it is with (opened by ``POST /users/@me/channels``)."""
        self.dms_closed: set[int] = set()
        """People who accept no direct messages from the bot (50007 Cannot send messages)."""
        self.rate_limits: dict[str, int] = {}
        """Path fragment → how many more requests to it answer 429 first (Retry-After 0.01 s)."""
        self.application_flags = payloads.MESSAGE_CONTENT_FLAGS
        self.hold_history_from: int | None = None
        """History requests from this number on (1-based) wait until :meth:`release` is called."""
        self.history_requests = 0
        self._released: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._next_id = payloads.SNOWFLAKES.next()
        self.port = 0
        guild = payloads.guild()
        for channel in (*guild["channels"], *guild["threads"]):
            self.channels[int(channel["id"])] = {**channel, "guild_id": guild["id"]}

    DEFAULT_BOT_PERMISSIONS = payloads.VIEW_AND_HISTORY

    # -- control from tests --------------------------------------------------------------------

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    def start(self) -> None:
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(ready,), daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the fake Discord server did not start")

    def stop(self) -> None:
        if self._loop is None:
            return
        future = asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop)
        future.result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread:
            self._thread.join(10)

    def release(self) -> None:
        """Let held history requests answer."""
        if self._loop and self._released:
            self._loop.call_soon_threadsafe(self._released.set)

    def add_channel(self, channel: dict[str, Any], messages: list[dict[str, Any]] = ()) -> None:  # type: ignore[assignment]
        self.channels[int(channel["id"])] = channel
        self.messages.setdefault(int(channel["id"]), []).extend(messages)

    def open_interaction(self, data: dict[str, Any]) -> None:
        """Discord created this interaction now: its token is valid from this moment."""
        person = (data.get("member") or {}).get("user") or data.get("user") or {}
        self.interactions[data["token"]] = InteractionState(
            token=data["token"],
            created=self.clock.now(),
            channel_id=int(data["channel_id"]),
            user_id=int(person.get("id", 0)),
        )

    def calls(self, method: str, path_part: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and path_part in r.path]

    def public(self) -> list[Delivered]:
        """What everyone in a channel sees."""
        return [message for message in self.delivered if not message.ephemeral]

    def private(self, user_id: int) -> list[Delivered]:
        """What only ``user_id`` sees."""
        return [m for m in self.delivered if m.ephemeral and m.user_id == user_id]

    # -- the server ----------------------------------------------------------------------------

    def _serve(self, ready: threading.Event) -> None:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        self._released = asyncio.Event()
        app = web.Application(middlewares=[self._record, self._rate_limit])
        api = "/api/v10"
        routes = [
            web.get(f"{api}/users/@me", self._me),
            web.get(f"{api}/oauth2/applications/@me", self._application),
            web.post(f"{api}/interactions/{{id}}/{{token}}/callback", self._callback),
            web.post(f"{api}/webhooks/{{app}}/{{token}}", self._followup),
            web.patch(
                f"{api}/webhooks/{{app}}/{{token}}/messages/{{message}}", self._edit_followup
            ),
            web.post(f"{api}/users/@me/channels", self._open_dm),
            web.get(f"{api}/guilds/{{guild}}/threads/active", self._active_threads),
            web.get(f"{api}/channels/{{channel}}", self._channel),
            web.get(f"{api}/channels/{{channel}}/messages", self._history),
            web.get(f"{api}/channels/{{channel}}/messages/{{message}}", self._message),
            web.post(f"{api}/channels/{{channel}}/messages", self._send),
            web.post(f"{api}/channels/{{channel}}/typing", self._typing),
            web.patch(f"{api}/channels/{{channel}}/messages/{{message}}", self._edit),
            web.get(f"{api}/channels/{{channel}}/thread-members/{{user}}", self._thread_member),
            web.get(f"{api}/channels/{{channel}}/threads/archived/public", self._archived_public),
            web.get(f"{api}/channels/{{channel}}/threads/archived/private", self._archived_private),
            web.get(
                f"{api}/channels/{{channel}}/users/@me/threads/archived/private",
                self._archived_joined,
            ),
            web.put(f"{api}/applications/{{app}}/commands", self._sync),
            web.put(f"{api}/applications/{{app}}/guilds/{{guild}}/commands", self._sync),
        ]
        app.add_routes(routes)
        self._runner = web.AppRunner(app)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        ready.set()
        self._loop.run_forever()

    async def _shutdown(self) -> None:
        if self._released:
            self._released.set()
        if self._runner:
            await self._runner.cleanup()

    @web.middleware
    async def _record(self, request: web.Request, handler):  # type: ignore[no-untyped-def]
        body: dict[str, Any] | list[Any] | None = None
        files: list[tuple[str, bytes]] = []
        if request.content_type.startswith("multipart/"):
            reader = await request.multipart()
            async for part in reader:
                if part.name == "payload_json":
                    body = json.loads(await part.text())
                else:
                    files.append((part.filename or part.name or "", bytes(await part.read())))
        elif request.can_read_body:
            body = await request.json()
        recorded = Recorded(request.method, request.path, dict(request.query), body, files)
        self.requests.append(recorded)
        request[RECORDED] = recorded
        return await handler(request)

    @web.middleware
    async def _rate_limit(self, request: web.Request, handler):  # type: ignore[no-untyped-def]
        for fragment, left in self.rate_limits.items():
            if left > 0 and fragment in request.path:
                self.rate_limits[fragment] = left - 1
                return web.Response(
                    body=json.dumps(
                        {
                            "message": "You are being rate limited.",
                            "retry_after": 0.01,
                            "global": False,
                        }
                    ).encode(),
                    status=429,
                    headers={
                        "Content-Type": "application/json",
                        "Retry-After": "0.01",
                        "Via": "1.1 google",  # without it discord.py takes a 429 for a ban
                        "X-RateLimit-Scope": "user",
                    },
                )
        return await handler(request)

    def _new_id(self) -> int:
        self._next_id = payloads.SNOWFLAKES.next()
        return self._next_id

    # -- who may see what ----------------------------------------------------------------------

    def _access(self, channel_id: int, needs: int = VIEW_CHANNEL) -> Refusal | None:
        """403 for a channel of a guild the bot is not in, or one it may not view (50001), or
        lacking a permission the request needs (50013); 404 for a channel that does not exist."""
        channel = self.channels.get(channel_id)
        if channel is None:
            return Refusal(404, UNKNOWN_CHANNEL, "Unknown Channel")
        if int(channel.get("guild_id") or 0) not in self.guild_ids:
            return Refusal(403, MISSING_ACCESS, "Missing Access")
        granted = self.bot_permissions.get(channel_id, self.DEFAULT_BOT_PERMISSIONS)
        if not granted & VIEW_CHANNEL:
            return Refusal(403, MISSING_ACCESS, "Missing Access")
        if needs & ~granted:
            return Refusal(403, MISSING_PERMISSIONS, "Missing Permissions")
        return None

    # -- routes --------------------------------------------------------------------------------

    async def _me(self, request: web.Request) -> web.Response:
        return _json(payloads.BOT_USER)

    async def _application(self, request: web.Request) -> web.Response:
        return _json(payloads.application(self.application_flags))

    async def _callback(self, request: web.Request) -> web.Response:
        body = request[RECORDED].body or {}
        state = self.interactions.get(request.match_info["token"])
        if state is None:
            return _refused(Refusal(404, UNKNOWN_INTERACTION, "Unknown interaction"))
        kind = int(body.get("type", 0))
        data = body.get("data") or {}
        flags = int(data.get("flags", 0))
        if kind in (4, 7):
            refusal = body_refusal(data, creating=kind == 4, files=len(request[RECORDED].files))
            if refusal is not None:
                return _refused(refusal)
        refusal = state.respond(self.clock.now(), kind, flags)
        if refusal is not None:
            return _refused(refusal)
        if kind == 4:
            self._deliver(state.channel_id, data, "response", bool(flags & EPHEMERAL), state)
        interaction = {
            "id": request.match_info["id"],
            "type": 2,
            "response_message_loading": kind == 5,
            "response_message_ephemeral": bool(flags & EPHEMERAL),
        }
        return _json({"interaction": interaction})

    async def _followup(self, request: web.Request) -> web.Response:
        recorded = request[RECORDED]
        body = recorded.body if isinstance(recorded.body, dict) else {}
        state = self.interactions.get(request.match_info["token"])
        if state is None:
            return _refused(Refusal(404, UNKNOWN_WEBHOOK, "Unknown Webhook"))
        refusal = state.follow_up(self.clock.now()) or body_refusal(
            body, creating=True, files=len(recorded.files)
        )
        if refusal is not None:
            return _refused(refusal)
        ephemeral = state.follow_up_visibility(int(body.get("flags", 0)))
        payload = self._deliver(state.channel_id, body, "followup", ephemeral, state)
        return _json(payload)

    async def _edit_followup(self, request: web.Request) -> web.Response:
        body = request[RECORDED].body or {}
        state = self.interactions.get(request.match_info["token"])
        if state is None:
            return _refused(Refusal(404, UNKNOWN_WEBHOOK, "Unknown Webhook"))
        refusal = state.follow_up(self.clock.now()) or body_refusal(body, creating=False)
        if refusal is not None:
            return _refused(refusal)
        return _json(self._message_payload(state.channel_id, body))

    async def _channel(self, request: web.Request) -> web.Response:
        channel_id = int(request.match_info["channel"])
        refusal = self._access(channel_id)
        if refusal is not None:
            return _refused(refusal)
        return _json(self.channels[channel_id])

    async def _history(self, request: web.Request) -> web.Response:
        channel_id = int(request.match_info["channel"])
        refusal = self._access(channel_id, READ_MESSAGE_HISTORY)
        if refusal is not None:
            return _refused(refusal)
        self.history_requests += 1
        if self.hold_history_from is not None and self.history_requests >= self.hold_history_from:
            assert self._released is not None
            await self._released.wait()
        messages = self.messages.get(channel_id, [])
        limit = int(request.query.get("limit", 50))
        ordered = sorted(messages, key=lambda message: int(message["id"]))
        if "after" in request.query:
            after = int(request.query["after"])
            page = [m for m in ordered if int(m["id"]) > after][:limit]
        else:
            before = int(request.query.get("before", 1 << 63))
            page = [m for m in ordered if int(m["id"]) < before][-limit:]
        return _json(list(reversed(page)))  # Discord answers newest first

    async def _message(self, request: web.Request) -> web.Response:
        channel_id = int(request.match_info["channel"])
        refusal = self._access(channel_id, READ_MESSAGE_HISTORY)
        if refusal is not None:
            return _refused(refusal)
        message_id = request.match_info["message"]
        for message in self.messages.get(channel_id, []):
            if message["id"] == message_id:
                return _json(message)
        return _refused(Refusal(404, UNKNOWN_MESSAGE, "Unknown Message"))

    async def _typing(self, request: web.Request) -> web.Response:
        refusal = self._access(int(request.match_info["channel"]), SEND_MESSAGES)
        return _refused(refusal) if refusal else web.Response(status=204)

    async def _open_dm(self, request: web.Request) -> web.Response:
        body = request[RECORDED].body or {}
        assert isinstance(body, dict)
        person = int(body["recipient_id"])
        channel_id = next(
            (dm for dm, with_whom in self.direct_messages.items() if with_whom == person), None
        )
        if channel_id is None:
            channel_id = self._new_id()
            self.direct_messages[channel_id] = person
        recipient = payloads.PEOPLE.get(person) or payloads.user(person, f"user{person}")
        return _json({"id": str(channel_id), "type": 1, "recipients": [recipient]})

    async def _send(self, request: web.Request) -> web.Response:
        recorded = request[RECORDED]
        body = recorded.body if isinstance(recorded.body, dict) else {}
        channel_id = int(request.match_info["channel"])
        if channel_id in self.direct_messages:
            return self._send_direct(channel_id, body, len(recorded.files))
        refusal = self._access(channel_id, SEND_MESSAGES) or body_refusal(
            body, creating=True, files=len(recorded.files)
        )
        if refusal is not None:
            return _refused(refusal)
        return _json(self._deliver(channel_id, body, "channel", False, None))

    def _send_direct(self, channel_id: int, body: dict[str, Any], files: int) -> web.Response:
        person = self.direct_messages[channel_id]
        if person in self.dms_closed:
            return _refused(Refusal(403, CANNOT_DM, "Cannot send messages to this user"))
        refusal = body_refusal(body, creating=True, files=files)
        if refusal is not None:
            return _refused(refusal)
        payload = self._message_payload(channel_id, body)
        payload.pop("guild_id", None)
        payload.pop("member", None)
        self.delivered.append(
            Delivered(
                message_id=int(payload["id"]),
                channel_id=channel_id,
                ephemeral=True,  # only the person it is with sees a direct message
                user_id=person,
                content=body.get("content") or "",
                embeds=body.get("embeds") or [],
                route="dm",
            )
        )
        return _json(payload)

    async def _edit(self, request: web.Request) -> web.Response:
        body = request[RECORDED].body or {}
        channel_id = int(request.match_info["channel"])
        refusal = self._access(channel_id) or body_refusal(body, creating=False)
        if refusal is not None:
            return _refused(refusal)
        payload = self._message_payload(channel_id, body)
        payload["id"] = request.match_info["message"]
        return _json(payload)

    async def _thread_member(self, request: web.Request) -> web.Response:
        thread_id = int(request.match_info["channel"])
        user_id = int(request.match_info["user"])
        if user_id not in self.thread_members.get(thread_id, set()):
            return _refused(Refusal(404, 10007, "Unknown Member"))
        return _json(
            {
                "id": str(thread_id),
                "user_id": str(user_id),
                "join_timestamp": payloads.iso_now(),
                "flags": 0,
            }
        )

    def _threads(self, parent: int | None, guild: int | None, archived: bool, private: bool | None):  # type: ignore[no-untyped-def]
        found = [
            channel
            for channel in self.channels.values()
            if channel.get("type") in THREAD_TYPES
            and (parent is None or int(channel["parent_id"]) == parent)
            and (guild is None or int(channel["guild_id"]) == guild)
            and bool(channel["thread_metadata"]["archived"]) == archived
            and (private is None or (channel["type"] == 12) == private)
        ]
        return sorted(found, key=lambda channel: -int(channel["id"]))

    async def _active_threads(self, request: web.Request) -> web.Response:
        guild_id = int(request.match_info["guild"])
        if guild_id not in self.guild_ids:
            return _refused(Refusal(403, MISSING_ACCESS, "Missing Access"))
        threads = [
            thread
            for thread in self._threads(None, guild_id, archived=False, private=None)
            if self._access(int(thread["parent_id"])) is None
        ]
        return _json({"threads": threads, "members": []})

    def _archived(
        self, request: web.Request, private: bool, needs: int, joined: bool
    ) -> web.Response:
        parent = int(request.match_info["channel"])
        refusal = self._access(parent, needs)
        if refusal is not None:
            return _refused(refusal)
        threads = self._threads(parent, None, archived=True, private=private)
        if joined:
            bot = int(payloads.BOT_USER["id"])
            threads = [t for t in threads if bot in self.thread_members.get(int(t["id"]), set())]
        before = request.query.get("before")
        if before and joined:  # the joined list pages by thread id, newest first
            threads = [t for t in threads if int(t["id"]) < int(before)]
        elif before:
            threads = [t for t in threads if t["thread_metadata"]["archive_timestamp"] < before]
        if not joined:
            threads.sort(key=lambda t: t["thread_metadata"]["archive_timestamp"], reverse=True)
        limit = int(request.query.get("limit", 50))
        return _json({"threads": threads[:limit], "members": [], "has_more": len(threads) > limit})

    async def _archived_public(self, request: web.Request) -> web.Response:
        return self._archived(request, False, READ_MESSAGE_HISTORY, joined=False)

    async def _archived_private(self, request: web.Request) -> web.Response:
        return self._archived(request, True, READ_MESSAGE_HISTORY | MANAGE_THREADS, joined=False)

    async def _archived_joined(self, request: web.Request) -> web.Response:
        return self._archived(request, True, READ_MESSAGE_HISTORY, joined=True)

    async def _sync(self, request: web.Request) -> web.Response:
        body = request[RECORDED].body or []
        assert isinstance(body, list)
        return _json(
            [
                {
                    "description": "",  # Discord answers with one even for context menus
                    **command,
                    "id": str(self._new_id()),
                    "application_id": str(payloads.APPLICATION_ID),
                    "version": "1",
                    "guild_id": request.match_info.get("guild"),
                }
                for command in body
            ]
        )

    def _deliver(
        self,
        channel_id: int,
        body: dict[str, Any],
        route: str,
        ephemeral: bool,
        state: InteractionState | None,
    ) -> dict[str, Any]:
        payload = self._message_payload(channel_id, body, ephemeral)
        reference = (body.get("message_reference") or {}).get("message_id")
        self.delivered.append(
            Delivered(
                message_id=int(payload["id"]),
                channel_id=channel_id,
                ephemeral=ephemeral,
                user_id=state.user_id if state else None,
                content=body.get("content") or "",
                embeds=body.get("embeds") or [],
                route=route,
                reference=int(reference) if reference else None,
            )
        )
        return payload

    def _message_payload(
        self, channel_id: int, body: dict[str, Any], ephemeral: bool = False
    ) -> dict[str, Any]:
        payload = payloads.message(
            self._new_id(),
            channel_id=channel_id,
            author=payloads.BOT_USER,
            content=body.get("content") or "",
            embeds=body.get("embeds") or [],
        )
        payload.pop("member", None)  # REST answers carry no member (the gateway's events do)
        payload["flags"] = EPHEMERAL if ephemeral else 0
        payload["components"] = body.get("components") or []
        return payload
