"""A local fake of the Anthropic Messages API, over real HTTP, for the real SDK to talk to.

It checks what a real API would refuse (credentials, required fields, a forced tool that is not
offered, a tool_result without its tool_use) and records every request so tests can inspect the
system prompt, tools, cache_control and text. Replies are scripted per test (``script``) and
otherwise come from ``respond``: by default a canned, valid answer for the forced tool, worked out
from the request by simple rules. Error replies reproduce the API's shapes: 429 with retry-after,
500, 529 overloaded, a hang longer than the client's timeout, a body that is not JSON.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from pathlib import Path
from typing import Any

from awai_engine.embedding import Embedder
from awai_engine.engine import Engine
from awai_engine.settings import Settings
from bots.runtime import Runtime, language_backend
from storage.store import AwaiStore

API_KEY = "sk-ant-test-key"


@dataclass(frozen=True)
class Reply:
    """One scripted HTTP answer; ``delay`` seconds pass before it is sent (a hang if long)."""

    status: int = 200
    body: dict[str, Any] | bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def tool(self) -> str | None:
        choice = self.body.get("tool_choice") or {}
        return choice.get("name")

    def prompt_text(self) -> str:
        """Every piece of text the model would read: system, tool schemas and the messages."""
        parts = [block["text"] for block in self.body.get("system", [])]
        parts.extend(json.dumps(tool, ensure_ascii=False) for tool in self.body.get("tools", []))
        for message in self.body["messages"]:
            content = message["content"]
            if isinstance(content, str):
                parts.append(content)
                continue
            for block in content:
                if block["type"] == "text":
                    parts.append(block["text"])
                elif block["type"] == "tool_use":
                    parts.append(json.dumps(block["input"], ensure_ascii=False))
                elif block["type"] == "tool_result":
                    parts.append(str(block["content"]))
        return "\n".join(parts)

    def user_text(self) -> str:
        """The text of the first user turn (the request itself, without the stable prefix)."""
        content = self.body["messages"][0]["content"]
        return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


_ids = count(1)


def message(content: list[dict[str, Any]], stop_reason: str = "tool_use", **usage: int) -> Reply:
    return Reply(
        body={
            "id": f"msg_fake_{next(_ids)}",
            "type": "message",
            "role": "assistant",
            "model": "claude-fake",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": usage.get("input_tokens", 100),
                "output_tokens": usage.get("output_tokens", 20),
                "cache_read_input_tokens": usage.get("cache_read_input_tokens", 0),
                "cache_creation_input_tokens": usage.get("cache_creation_input_tokens", 0),
            },
        }
    )


def tool_use(name: str, tool_input: object, **usage: int) -> Reply:
    """A forced tool call; ``tool_input`` may be anything, to inject schema-invalid answers."""
    block = {"type": "tool_use", "id": f"toolu_fake_{next(_ids)}", "name": name}
    return message([{**block, "input": tool_input}], **usage)


def text_answer(text: str) -> Reply:
    return message([{"type": "text", "text": text}], stop_reason="end_turn")


def error(status: int, kind: str, text: str, headers: dict[str, str] | None = None) -> Reply:
    body = {"type": "error", "error": {"type": kind, "message": text}}
    return Reply(status=status, body=body, headers=headers or {})


def rate_limited(retry_after: str) -> Reply:
    return error(429, "rate_limit_error", "rate limited", {"retry-after": retry_after})


def server_error() -> Reply:
    return error(500, "api_error", "internal error")


def overloaded() -> Reply:
    return error(529, "overloaded_error", "Overloaded")


def hang(seconds: float) -> Reply:
    return Reply(delay=seconds, body=b"{}")


_UTTERANCE = re.compile(r'<utterance n="(\d+)"[^>]*>(.*?)</utterance>', re.DOTALL)
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")
_SCHEMA_LIST = re.compile(r"preconceptions of the speaker: (.+)\.\n")


def canned_answer(request: Received) -> Reply:
    """A valid answer for the forced tool, by fixed rules: sentences become thoughts, the first
    is the summary; a reading cites nothing; every listed schema is judged unrelated."""
    text = request.user_text()
    if request.tool == "extract_thoughts":
        entries = []
        for n, said in _UTTERANCE.findall(text):
            sentences = [part for part in _SENTENCE.split(said.strip()) if part.strip()]
            entries.append({"n": int(n), "thoughts": sentences, "summary": sentences[0]})
        return tool_use("extract_thoughts", {"utterances": entries})
    if request.tool == "summarise_schema":
        return tool_use("summarise_schema", {"summary": "A canned preconception."})
    if request.tool == "judge_stances":
        listed = _SCHEMA_LIST.search(text)
        ids = listed.group(1).split(", ") if listed else []
        stances = [{"schema_id": i, "stance": "unrelated", "reason": "canned"} for i in ids]
        return tool_use("judge_stances", {"stances": stances})
    return tool_use("write_reading", {"meaning": "A canned reading.", "links": []})


class FakeAnthropic:
    """The fake server. Use as a context manager; ``base_url`` is where the SDK should point."""

    def __init__(self, respond: Callable[[Received], Reply] = canned_answer) -> None:
        self.respond = respond
        self.requests: list[Received] = []
        self.posts = 0  # every HTTP request, refused ones included
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def script(self, *replies: Reply) -> None:
        """Replies for the next requests, in order; after them ``respond`` answers again."""
        with self._lock:
            self._script.extend(replies)

    def calls(self, tool: str) -> list[Received]:
        return [request for request in self.requests if request.tool == tool]

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def _reply_to(self, headers: dict[str, str], raw: bytes) -> Reply:
        with self._lock:
            self.posts += 1
        if headers.get("authorization") != f"Bearer {API_KEY}" and (
            headers.get("x-api-key") != API_KEY
        ):
            return error(401, "authentication_error", "invalid x-api-key")
        try:
            body = json.loads(raw)
        except ValueError:
            return error(400, "invalid_request_error", "the body is not JSON")
        problem = _request_problem(body)
        if problem:
            return error(400, "invalid_request_error", problem)
        received = Received(headers=headers, body=body)
        with self._lock:
            self.requests.append(received)
            scripted = self._script.popleft() if self._script else None
        return scripted or self.respond(received)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                if self.path.rstrip("/") != "/v1/messages":
                    reply = error(404, "not_found_error", f"no route {self.path}")
                else:
                    headers = {key.lower(): value for key, value in self.headers.items()}
                    reply = fake._reply_to(headers, raw)
                if reply.delay and fake._stopping.wait(reply.delay):
                    return
                payload = (
                    reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                )
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a hang past its timeout)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


def _request_problem(body: dict[str, Any]) -> str | None:
    """What the real API would refuse in this request, or ``None``."""
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            return f"{key}: Field required"
    messages = body["messages"]
    if not messages or messages[0]["role"] != "user":
        return "messages: the first message must use the user role"
    names = {tool["name"] for tool in body.get("tools", [])}
    choice = body.get("tool_choice")
    if choice and choice.get("type") == "tool" and choice.get("name") not in names:
        return f"tool_choice: tool {choice.get('name')!r} is not in tools"
    pending: set[str] = set()
    for item in messages:
        content = item["content"]
        if isinstance(content, str):
            if not content:
                return "messages: text content blocks must be non-empty"
            if pending:
                return "messages: tool_use ids were found without tool_result blocks"
            continue
        if not content:
            return "messages: all messages must have non-empty content"
        results = {b["tool_use_id"] for b in content if b["type"] == "tool_result"}
        if results != pending:
            return "messages: each tool_result must answer the tool_use just before it"
        pending = {b["id"] for b in content if b["type"] == "tool_use"}
    return None


class AnthropicRuntimes:
    """Runtimes on real parts (MiniLM, SQLite, Chroma) whose backend is the real SDK talking to
    one fake server; the ``make_runtime`` pattern of ``conftest.py`` with the Anthropic backend.

    Timeouts and backoff are short so failure tests stay fast; keyword arguments of a call
    override any ``AWAI_LLM__*`` setting, and ``limits`` any ``AWAI_LIMITS__*`` one.
    """

    def __init__(self, tmp_path: Path, embedder: Embedder) -> None:
        self.tmp_path = tmp_path
        self.embedder = embedder
        self.fake = FakeAnthropic()
        self._opened: list[Runtime] = []

    def settings(
        self, name: str = "data", limits: dict[str, object] | None = None, **llm: object
    ) -> Settings:
        return Settings(
            data_dir=self.tmp_path / name,
            limits=limits or {},
            llm={
                "api_key": API_KEY,
                "base_url": self.fake.base_url,
                "timeout_seconds": 2.0,
                "max_retries": 2,
                "retry_base_seconds": 0.05,
                "max_retry_wait_seconds": 3.0,
                **llm,
            },
            _env_file=None,  # type: ignore[call-arg]
        )

    def __call__(
        self, name: str = "data", limits: dict[str, object] | None = None, **llm: object
    ) -> Runtime:
        settings = self.settings(name, limits, **llm)
        store = AwaiStore.open(settings)
        engine = Engine(settings, store, self.embedder, language_backend(settings))
        runtime = Runtime(settings=settings, store=store, engine=engine)
        self._opened.append(runtime)
        return runtime

    def __enter__(self) -> AnthropicRuntimes:
        self.fake.__enter__()
        return self

    def __exit__(self, *exc_info: object) -> None:
        for runtime in self._opened:
            runtime.close()
        self.fake.__exit__(*exc_info)
