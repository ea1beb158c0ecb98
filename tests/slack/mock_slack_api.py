"""A local stand-in for the Slack Web API, served over real HTTP on 127.0.0.1.

The real ``slack_sdk.WebClient`` talks to it through ``base_url``; it keeps a small workspace
(users, channels, messages with threads), answers the methods AWAI uses the way Slack documents
them (cursor pagination, ``ok: false`` errors, 429 with ``Retry-After``), and records every call
so tests can check what AWAI asked and posted. Failures are planned per method and call number.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

TEAM_ID = "T0AWAI"
TEAM_DOMAIN = "awai-test"
BOT_USER_ID = "UAWAIBOT"
BOT_ID = "BAWAI"


@dataclass
class ApiCall:
    method: str
    params: dict[str, Any]
    token: str | None
    at: float


@dataclass
class Channel:
    id: str
    name: str
    members: set[str]
    private: bool = False
    messages: list[dict[str, Any]] = field(default_factory=list)
    team: str = TEAM_ID  # another team's channel is invisible to this workspace's token
    creator: str | None = None  # who created it (conversations.info's ``creator``)


@dataclass
class PlannedFailure:
    method: str
    calls_before: int  # calls to let through first
    status: int
    error: str
    retry_after: int | None


class MockSlackApi:
    def __init__(self) -> None:
        self.calls: list[ApiCall] = []
        self.users: dict[str, dict[str, Any]] = {}
        self.channels: dict[str, Channel] = {}
        self.uploads: dict[str, bytes] = {}
        self.responses: list[dict[str, Any]] = []  # what was sent to response_url
        self.lock = threading.RLock()
        self._failures: list[PlannedFailure] = []
        self._clock = 1_700_000_000_000_000
        # Where chat.getPermalink's links point: an Enterprise Grid's org host, say.
        self.permalink_base: str | None = None
        self.rotations = 0
        self.views: dict[str, dict[str, Any]] = {}  # views.open / views.update, by view id
        self._used_triggers: set[str] = set()
        self.socket_mode_url: str | None = None  # what apps.connections.open hands out
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> MockSlackApi:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/api/"

    @property
    def workspace_url(self) -> str:
        return f"https://{TEAM_DOMAIN}.slack.com/"

    # -- the workspace -------------------------------------------------------------------------

    def add_user(
        self, user_id: str, display_name: str, role: str = "member", locale: str | None = None
    ) -> None:
        """``role``: member, admin or owner of the workspace (an owner is an admin too, as
        users.info says of the primary owner and other owners); ``locale``: the language the
        user set Slack to (none: Slack says none), which users.info says only when asked
        ``include_locale``."""
        self.users[user_id] = {
            "id": user_id,
            "name": display_name.lower(),
            "real_name": display_name,
            "profile": {"display_name": display_name, "real_name": display_name},
            "is_admin": role in ("admin", "owner"),
            "is_owner": role == "owner",
            "is_primary_owner": False,
        }
        if locale is not None:
            self.users[user_id]["locale"] = locale

    def add_channel(
        self,
        channel_id: str,
        name: str,
        members: set[str],
        private: bool = False,
        team: str = TEAM_ID,
        creator: str | None = None,
    ) -> None:
        self.channels[channel_id] = Channel(
            channel_id, name, set(members), private, team=team, creator=creator
        )

    def next_ts(self) -> str:
        with self.lock:
            self._clock += 100
            return f"{self._clock // 1_000_000}.{self._clock % 1_000_000:06d}"

    def add_message(
        self,
        channel_id: str,
        user: str | None,
        text: str,
        thread_ts: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """A message as Slack stores it; a reply bumps its root's ``reply_count``."""
        message: dict[str, Any] = {"type": "message", "ts": self.next_ts(), "text": text}
        if user:
            message["user"] = user
        if thread_ts:
            message["thread_ts"] = thread_ts
            root = self.find(channel_id, thread_ts)
            if root is not None:
                root["thread_ts"] = thread_ts
                root["reply_count"] = root.get("reply_count", 0) + 1
                root["latest_reply"] = message["ts"]
        message.update(extra)
        with self.lock:
            self.channels[channel_id].messages.append(message)
        return message

    def find(self, channel_id: str, ts: str) -> dict[str, Any] | None:
        channel = self.channels.get(channel_id)
        return next((m for m in channel.messages if m["ts"] == ts), None) if channel else None

    def permalink(self, channel_id: str, ts: str, thread_ts: str | None = None) -> str:
        url = f"{self.workspace_url}archives/{channel_id}/p{ts.replace('.', '')}"
        return url + (f"?thread_ts={thread_ts}&cid={channel_id}" if thread_ts else "")

    # -- failures and records ------------------------------------------------------------------

    def fail(
        self,
        method: str,
        *,
        after: int = 0,
        status: int = 200,
        error: str = "internal_error",
        retry_after: int | None = None,
    ) -> None:
        """Make the call to ``method`` after ``after`` more successful ones fail once."""
        with self.lock:
            self._failures.append(PlannedFailure(method, after, status, error, retry_after))

    def rate_limit(self, method: str, *, after: int = 0, retry_after: int = 1) -> None:
        self.fail(method, after=after, status=429, error="ratelimited", retry_after=retry_after)

    def calls_to(self, method: str) -> list[ApiCall]:
        with self.lock:
            return [call for call in self.calls if call.method == method]

    def method_order(self) -> list[str]:
        with self.lock:
            return [call.method for call in self.calls]

    # -- the API -------------------------------------------------------------------------------

    def answer(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any], dict]:
        """(status, JSON body, extra headers) for one API call."""
        with self.lock:
            for failure in self._failures:
                if failure.method == method:
                    if failure.calls_before > 0:
                        failure.calls_before -= 1
                        continue
                    self._failures.remove(failure)
                    headers = (
                        {"Retry-After": str(failure.retry_after)}
                        if failure.retry_after is not None
                        else {}
                    )
                    return failure.status, {"ok": False, "error": failure.error}, headers
            handler = getattr(self, "_" + method.replace(".", "_"), None)
            if handler is None:
                return 200, {"ok": False, "error": "unknown_method"}, {}
            return 200, handler(params), {}

    def _auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": self.workspace_url,
            "team": "AWAI Test",
            "team_id": TEAM_ID,
            "user": "awai",
            "user_id": BOT_USER_ID,
            "bot_id": BOT_ID,
        }

    def _apps_connections_open(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.socket_mode_url is None:
            return {"ok": False, "error": "not_allowed_token_type"}
        return {"ok": True, "url": self.socket_mode_url}

    def _oauth_v2_access(self, params: dict[str, Any]) -> dict[str, Any]:
        """Token rotation: a refresh token buys a new bot token valid for 12 hours."""
        if params.get("grant_type") != "refresh_token" or not params.get("refresh_token"):
            return {"ok": False, "error": "invalid_grant_type"}
        self.rotations += 1
        return {
            "ok": True,
            "access_token": f"xoxe.xoxb-rotated-{self.rotations}",
            "refresh_token": f"xoxe-1-refresh-{self.rotations}",
            "token_type": "bot",
            "expires_in": 43200,
            "scope": "chat:write",
            "bot_user_id": BOT_USER_ID,
            "app_id": "AAWAI",
            "team": {"id": TEAM_ID},
            "enterprise": None,
            "is_enterprise_install": False,
        }

    def _users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user = self.users.get(params.get("user", ""))
        if user is None:
            return {"ok": False, "error": "user_not_found"}
        if str(params.get("include_locale", "")).lower() not in ("1", "true"):
            user = {key: value for key, value in user.items() if key != "locale"}
        return {"ok": True, "user": user}

    def _conversations_members(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._visible(params.get("channel", ""))
        if channel is None:
            return {"ok": False, "error": "channel_not_found"}
        return self._page(sorted(channel.members), params, "members")

    def _visible(self, channel_id: str) -> Channel | None:
        """A channel this workspace's token can see (public, or private with the bot in it)."""
        channel = self.channels.get(channel_id)
        if channel is None or channel.team != TEAM_ID:
            return None
        if channel.private and BOT_USER_ID not in channel.members:
            return None
        return channel

    def _users_conversations(self, params: dict[str, Any]) -> dict[str, Any]:
        """The channels the bot is a member of (the token's user: the bot)."""
        mine = [
            {"id": c.id, "name": c.name, "is_private": c.private}
            for c in self.channels.values()
            if c.team == TEAM_ID and BOT_USER_ID in c.members
        ]
        return self._page(mine, params, "channels")

    def _conversations_info(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._visible(params.get("channel", ""))
        if channel is None:
            return {"ok": False, "error": "channel_not_found"}
        return {
            "ok": True,
            "channel": {
                "id": channel.id,
                "name": channel.name,
                "is_private": channel.private,
                "context_team_id": channel.team,
                "creator": channel.creator,
            },
        }

    def _chat_getPermalink(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self._visible(params.get("channel", ""))
        message = self.find(channel.id, params.get("message_ts", "")) if channel else None
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        thread = message.get("thread_ts")
        link = self.permalink(
            channel.id, message["ts"], thread if thread != message["ts"] else None
        )
        if self.permalink_base:
            link = link.replace(self.workspace_url, self.permalink_base)
        return {"ok": True, "channel": channel.id, "permalink": link}

    def _conversations_history(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self.channels.get(params.get("channel", ""))
        if channel is None or BOT_USER_ID not in channel.members:
            return {
                "ok": False,
                "error": "channel_not_found" if channel is None else "not_in_channel",
            }
        top = [
            m
            for m in channel.messages
            if m.get("thread_ts") in (None, m["ts"]) or m.get("subtype") == "thread_broadcast"
        ]
        newest_first = sorted(_window(top, params), key=lambda m: float(m["ts"]), reverse=True)
        return self._page(newest_first, params, "messages")

    def _conversations_replies(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self.channels.get(params.get("channel", ""))
        root = self.find(channel.id, params.get("ts", "")) if channel else None
        if root is None:
            return {"ok": False, "error": "thread_not_found"}
        thread = [root] + [
            m for m in channel.messages if m.get("thread_ts") == root["ts"] and m is not root
        ]
        oldest_first = sorted(_window(thread, params), key=lambda m: float(m["ts"]))
        return self._page(oldest_first, params, "messages")

    def _chat_postMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self.channels.get(params.get("channel", ""))
        if channel is None or BOT_USER_ID not in channel.members:
            return {"ok": False, "error": "not_in_channel"}
        message = self.add_message(
            channel.id,
            None,
            params.get("text", ""),
            thread_ts=params.get("thread_ts"),
            bot_id=BOT_ID,
            blocks=params.get("blocks"),
        )
        return {"ok": True, "channel": channel.id, "ts": message["ts"], "message": message}

    def _chat_update(self, params: dict[str, Any]) -> dict[str, Any]:
        message = self.find(params.get("channel", ""), params.get("ts", ""))
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        message.update(text=params.get("text", ""), blocks=params.get("blocks"))
        return {"ok": True, "channel": params["channel"], "ts": message["ts"]}

    def _chat_postEphemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        """As Slack: AWAI must be in the channel, the person too, and blocks at most 50."""
        channel = self.channels.get(params.get("channel", ""))
        if channel is None or BOT_USER_ID not in channel.members:
            return {"ok": False, "error": "not_in_channel"}
        if params.get("user") not in channel.members:
            return {"ok": False, "error": "user_not_in_channel"}
        if len(_decoded(params.get("blocks")) or []) > MESSAGE_BLOCKS:
            return {"ok": False, "error": "invalid_blocks"}
        return {"ok": True, "message_ts": self.next_ts()}

    def _views_open(self, params: dict[str, Any]) -> dict[str, Any]:
        """As Slack: a ``trigger_id`` works once, within three seconds of the interaction, and a
        modal has a title of at most 24 characters and at most 100 blocks."""
        trigger = params.get("trigger_id", "")
        issued = trigger_time(trigger)
        if issued is None or trigger in self._used_triggers:
            return {"ok": False, "error": "invalid_trigger_id"}
        if time.time() - issued > TRIGGER_SECONDS:
            return {"ok": False, "error": "expired_trigger_id"}
        self._used_triggers.add(trigger)
        view = _decoded(params.get("view"))
        problem = _view_problem(view)
        if problem:
            return {"ok": False, "error": problem}
        view_id = f"V{len(self.views) + 1:06d}"
        self.views[view_id] = view
        return {"ok": True, "view": {**view, "id": view_id}}

    def _views_update(self, params: dict[str, Any]) -> dict[str, Any]:
        view_id = params.get("view_id", "")
        if view_id not in self.views:
            return {"ok": False, "error": "not_found"}
        view = _decoded(params.get("view"))
        problem = _view_problem(view)
        if problem:
            return {"ok": False, "error": problem}
        self.views[view_id] = view
        return {"ok": True, "view": {**view, "id": view_id}}

    def _files_getUploadURLExternal(self, params: dict[str, Any]) -> dict[str, Any]:
        file_id = f"F{len(self.uploads) + 1:06d}"
        self.uploads[file_id] = b""
        return {"ok": True, "upload_url": f"{self.url}/upload/{file_id}", "file_id": file_id}

    def _files_completeUploadExternal(self, params: dict[str, Any]) -> dict[str, Any]:
        files = params.get("files")
        files = json.loads(files) if isinstance(files, str) else files
        return {"ok": True, "files": [{"id": f["id"], "title": f.get("title")} for f in files]}

    def _files_delete(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.uploads.pop(params.get("file", ""), None) is None:
            return {"ok": False, "error": "file_not_found"}
        return {"ok": True}

    def _page(self, items: list[Any], params: dict[str, Any], key: str) -> dict[str, Any]:
        """One page from ``cursor``. Message cursors name a ``ts``, as Slack's stay valid when
        new messages arrive; member cursors are offsets."""
        cursor = params.get("cursor") or ""
        limit = int(params.get("limit") or 100)
        if cursor.startswith("ts:"):
            newest_first = len(items) > 1 and float(items[0]["ts"]) > float(items[-1]["ts"])
            mark = float(cursor[3:])
            start = next(
                (
                    i
                    for i, item in enumerate(items)
                    if (float(item["ts"]) <= mark if newest_first else float(item["ts"]) >= mark)
                ),
                len(items),
            )
        else:
            start = int(cursor or 0)
        page = items[start : start + limit]
        more = start + limit < len(items)
        if not more:
            next_cursor = ""
        elif isinstance(items[0], dict):
            next_cursor = f"ts:{items[start + limit]['ts']}"
        else:
            next_cursor = str(start + limit)
        return {
            "ok": True,
            key: page,
            "has_more": more,
            "response_metadata": {"next_cursor": next_cursor},
        }

    # -- HTTP ----------------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self._handle()

            def do_POST(self) -> None:
                self._handle()

            def _handle(self) -> None:
                parts = urlsplit(self.path)
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if parts.path.startswith("/upload/"):
                    api.uploads[parts.path.rsplit("/", 1)[1]] = raw
                    self._reply(200, b"OK", "text/plain")
                    return
                if parts.path.startswith("/respond/"):
                    with api.lock:
                        api.responses.append(json.loads(raw or b"{}"))
                    self._reply(200, b"ok", "text/plain")
                    return
                method = parts.path.removeprefix("/api/")
                params: dict[str, Any] = dict(parse_qsl(parts.query))
                if "json" in (self.headers.get("Content-Type") or ""):
                    params.update(json.loads(raw or b"{}"))
                else:
                    params.update(parse_qsl(raw.decode("utf-8")))
                for key in ("blocks", "files"):
                    if isinstance(params.get(key), str):
                        params[key] = json.loads(params[key])
                token = (self.headers.get("Authorization") or "").removeprefix("Bearer ") or None
                with api.lock:
                    api.calls.append(ApiCall(method, params, token, time.monotonic()))
                status, body, headers = api.answer(method, params)
                self._reply(status, json.dumps(body).encode(), "application/json", headers)

            def _reply(
                self, status: int, data: bytes, content_type: str, headers: dict | None = None
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


def _window(messages: list[dict[str, Any]], params: dict[str, Any]) -> list[dict[str, Any]]:
    """Slack's ``oldest`` / ``latest`` / ``inclusive`` filter."""
    inclusive = str(params.get("inclusive", "")).lower() in ("1", "true")
    oldest, latest = params.get("oldest"), params.get("latest")

    def inside(message: dict[str, Any]) -> bool:
        ts = float(message["ts"])
        if oldest is not None and (ts < float(oldest) or (ts == float(oldest) and not inclusive)):
            return False
        return latest is None or ts < float(latest) or (ts == float(latest) and inclusive)

    return [message for message in messages if inside(message)]


MESSAGE_BLOCKS = 50
VIEW_BLOCKS = 100
VIEW_TITLE_CHARS = 24
TRIGGER_SECONDS = 3.0
"""Slack's trigger ids expire three seconds after the interaction that issued them."""


def trigger_time(trigger: str) -> float | None:
    """When a test's interaction issued ``trigger`` (``trigger-N-<epoch seconds>``)."""
    try:
        return float(trigger.rsplit("-", 1)[1])
    except (IndexError, ValueError):
        return None


def _decoded(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _view_problem(view: Any) -> str | None:
    if not isinstance(view, dict) or view.get("type") != "modal":
        return "invalid_arguments"
    if len(view.get("title", {}).get("text", "")) > VIEW_TITLE_CHARS:
        return "invalid_arguments"
    if len(view.get("blocks") or []) > VIEW_BLOCKS:
        return "invalid_arguments"
    return None
