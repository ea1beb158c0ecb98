"""A local stand-in for Discord's REST API on 127.0.0.1, for the real discord.py client.

discord.py builds every REST URL from ``discord.http.Route.BASE`` (interaction callbacks and
follow-ups included), so pointing that at this server lets the real client, its HTTP layer and
its webhook adapter run unchanged with no network. The server keeps channels and their messages
(history is paged as Discord pages it: newest first within a page, ``after``/``before``/``limit``),
and records every request so tests can see what the bot sent.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.discord import payloads


def _json(data: Any, status: int = 200) -> web.Response:
    """JSON with Discord's exact content type (discord.py parses only ``application/json``)."""
    return web.Response(
        body=json.dumps(data).encode(), status=status, headers={"Content-Type": "application/json"}
    )


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    body: dict[str, Any] | list[Any] | None
    files: list[tuple[str, bytes]] = field(default_factory=list)


RECORDED = web.RequestKey("recorded", Recorded)


class FakeDiscord:
    """The fake API. Start it with :meth:`start` (its own thread and loop); :meth:`stop` after."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.channels: dict[int, dict[str, Any]] = {}
        self.messages: dict[int, list[dict[str, Any]]] = {}
        self.thread_members: dict[int, set[int]] = {}
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

    def calls(self, method: str, path_part: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and path_part in r.path]

    # -- the server ----------------------------------------------------------------------------

    def _serve(self, ready: threading.Event) -> None:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        self._released = asyncio.Event()
        app = web.Application(middlewares=[self._record])
        routes = [
            web.get("/api/v10/users/@me", self._me),
            web.get("/api/v10/oauth2/applications/@me", self._application),
            web.post("/api/v10/interactions/{id}/{token}/callback", self._callback),
            web.post("/api/v10/webhooks/{app}/{token}", self._followup),
            web.patch("/api/v10/webhooks/{app}/{token}/messages/{message}", self._edit_followup),
            web.get("/api/v10/channels/{channel}", self._channel),
            web.get("/api/v10/channels/{channel}/messages", self._history),
            web.get("/api/v10/channels/{channel}/messages/{message}", self._message),
            web.post("/api/v10/channels/{channel}/messages", self._send),
            web.patch("/api/v10/channels/{channel}/messages/{message}", self._edit),
            web.get("/api/v10/channels/{channel}/thread-members/{user}", self._thread_member),
            web.put("/api/v10/applications/{app}/commands", self._sync),
            web.put("/api/v10/applications/{app}/guilds/{guild}/commands", self._sync),
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

    def _new_id(self) -> int:
        self._next_id = payloads.SNOWFLAKES.next()
        return self._next_id

    @staticmethod
    def _error(status: int, code: int, message: str) -> web.Response:
        return _json({"code": code, "message": message}, status=status)

    async def _me(self, request: web.Request) -> web.Response:
        return _json(payloads.BOT_USER)

    async def _application(self, request: web.Request) -> web.Response:
        return _json(payloads.application(self.application_flags))

    async def _callback(self, request: web.Request) -> web.Response:
        body = request[RECORDED].body or {}
        flags = (body.get("data") or {}).get("flags", 0)
        interaction = {
            "id": request.match_info["id"],
            "type": 2,
            "response_message_loading": body.get("type") == 5,
            "response_message_ephemeral": bool(flags & 64),
        }
        return _json({"interaction": interaction})

    async def _followup(self, request: web.Request) -> web.Response:
        body = request[RECORDED].body or {}
        return _json(self._message_payload(payloads.CHANNEL_ID, body))

    async def _edit_followup(self, request: web.Request) -> web.Response:
        body = request[RECORDED].body or {}
        return _json(self._message_payload(payloads.CHANNEL_ID, body))

    async def _channel(self, request: web.Request) -> web.Response:
        channel = self.channels.get(int(request.match_info["channel"]))
        if channel is None:
            return self._error(404, 10003, "Unknown Channel")
        return _json(channel)

    async def _history(self, request: web.Request) -> web.Response:
        self.history_requests += 1
        if self.hold_history_from is not None and self.history_requests >= self.hold_history_from:
            assert self._released is not None
            await self._released.wait()
        messages = self.messages.get(int(request.match_info["channel"]), [])
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
        message_id = request.match_info["message"]
        for message in self.messages.get(channel_id, []):
            if message["id"] == message_id:
                return _json(message)
        return self._error(404, 10008, "Unknown Message")

    async def _send(self, request: web.Request) -> web.Response:
        body = request[RECORDED].body or {}
        channel_id = int(request.match_info["channel"])
        return _json(self._message_payload(channel_id, body))

    async def _edit(self, request: web.Request) -> web.Response:
        body = request[RECORDED].body or {}
        channel_id = int(request.match_info["channel"])
        payload = self._message_payload(channel_id, body)
        payload["id"] = request.match_info["message"]
        return _json(payload)

    async def _thread_member(self, request: web.Request) -> web.Response:
        thread_id = int(request.match_info["channel"])
        user_id = int(request.match_info["user"])
        if user_id not in self.thread_members.get(thread_id, set()):
            return self._error(404, 10007, "Unknown Member")
        return _json(
            {
                "id": str(thread_id),
                "user_id": str(user_id),
                "join_timestamp": payloads.iso_now(),
                "flags": 0,
            }
        )

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

    def _message_payload(self, channel_id: int, body: dict[str, Any]) -> dict[str, Any]:
        return payloads.message(
            self._new_id(),
            channel_id=channel_id,
            author=payloads.BOT_USER,
            content=body.get("content") or "",
            embeds=body.get("embeds") or [],
        )
