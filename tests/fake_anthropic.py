"""A local fake of the Anthropic Messages and Models APIs, over real HTTP, for the real SDK.

It checks what a real API would refuse and records every request so tests can inspect the system
prompt, the output format, cache_control and text. What it refuses, as the API documents it:
- credentials (401 ``authentication_error``), required fields, a first turn not from the user, a
  tool_result without its tool_use;
- a model not in its catalogue (404 ``not_found_error`` naming the model), on ``/v1/messages`` and
  ``GET /v1/models/{id}``;
- a forced ``tool_choice`` (``tool`` or ``any``) on a model that rejects it (Claude Sonnet 5.5:
  "What's new in Claude Sonnet 5.5", platform.claude.com), ``output_config.effort`` on a model
  without effort (Claude Haiku 4.5), structured outputs on a model without them;
- an ``output_config.format`` that is not ``json_schema`` with a schema in the subset the API
  compiles: every object closed (``additionalProperties: false``), no numeric, length or count
  bounds (what the SDK's ``transform_schema`` moves into descriptions).
What it does not enforce: the answer's conformance to the schema (replies are scripted, so tests
can send what the real API would never produce), token limits, rate limits by volume, thinking
block signatures.

Replies are scripted per test (``script``) and otherwise come from ``respond``: by default a
canned, valid answer for the task, worked out from the request by simple rules, after a thinking
block on models that think by default (as Sonnet 5.5 does). Error replies reproduce the API's
shapes: 429 with retry-after, 500, 529 overloaded, a hang longer than the client's timeout, a body
that is not JSON.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from pathlib import Path
from typing import Any

from awai_engine.backends.anthropic.answers import ANSWER_MODELS, output_format
from awai_engine.embedding import Embedder
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
    content_type: str = "application/json"


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def task(self) -> str | None:
        """Which of AWAI's tasks the request asks for, known by its output format's schema."""
        format_ = (self.body.get("output_config") or {}).get("format")
        return next((task for task, known in FORMATS.items() if known == format_), None)

    def prompt_text(self) -> str:
        """Every piece of text the model would read: system, output schema and the messages."""
        parts = [block["text"] for block in self.body.get("system", [])]
        format_ = (self.body.get("output_config") or {}).get("format")
        if format_:
            parts.append(json.dumps(format_["schema"], ensure_ascii=False))
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


def message(content: list[dict[str, Any]], stop_reason: str = "end_turn", **usage: int) -> Reply:
    """A message reply; without ``usage`` the fake counts it from the request it answers."""
    return Reply(
        body={
            "id": f"msg_fake_{next(_ids)}",
            "type": "message",
            "role": "assistant",
            "model": "claude-fake",
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": (
                {
                    "input_tokens": usage.get("input_tokens", 100),
                    "output_tokens": usage.get("output_tokens", 20),
                    "cache_read_input_tokens": usage.get("cache_read_input_tokens", 0),
                    "cache_creation_input_tokens": usage.get("cache_creation_input_tokens", 0),
                }
                if usage
                else None
            ),
        }
    )


def structured(value: object, thinking: bool = False, **usage: int) -> Reply:
    """A structured-output answer: ``value`` as JSON text (a ``str`` is sent as it is, to inject
    what is not JSON), after a thinking block if ``thinking``."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    blocks = [{"type": "text", "text": text}]
    if thinking:
        blocks.insert(0, {"type": "thinking", "thinking": "…", "signature": "sig-fake"})
    return message(blocks, **usage)


def text_answer(text: str) -> Reply:
    return message([{"type": "text", "text": text}], stop_reason="end_turn")


def error(status: int, kind: str, text: str, headers: dict[str, str] | None = None) -> Reply:
    body = {
        "type": "error",
        "error": {"type": kind, "message": text},
        "request_id": f"req_fake_{next(_ids)}",
    }
    return Reply(status=status, body=body, headers=headers or {})


def rate_limited(retry_after: str) -> Reply:
    return error(429, "rate_limit_error", "rate limited", {"retry-after": retry_after})


def server_error() -> Reply:
    return error(500, "api_error", "internal error")


def overloaded() -> Reply:
    return error(529, "overloaded_error", "Overloaded")


def hang(seconds: float) -> Reply:
    return Reply(delay=seconds, body=b"{}")


_EXTRACT = re.compile(r"<extract [^>]*>(.*?)</extract>", re.DOTALL)
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")
_SCHEMA_REF = re.compile(r'<said ref="(P\d+)"')


def canned_answer(request: Received) -> Reply:
    """A valid answer for the task, by fixed rules: sentences become thoughts, the first is the
    summary; a reading cites nothing and judges every preconception unrelated."""
    text = request.user_text()
    thinks = MODELS[request.body["model"]].thinks_by_default
    format_ = (request.body.get("output_config") or {}).get("format")
    if request.task is None and format_:
        schema = format_["schema"]
        return structured(example_of(schema, schema.get("$defs", {})), thinks)
    if request.task == "extract_thoughts":
        found = _EXTRACT.search(text)
        said = html.unescape(found.group(1)) if found else "?"
        sentences = [part for part in _SENTENCE.split(said.strip()) if part.strip()] or [said]
        return structured({"thoughts": sentences, "summary": sentences[0]}, thinks)
    if request.task == "summarise_schema":
        return structured({"summary": "A canned preconception."}, thinks)
    bearings = [
        {"schema": ref, "stance": "unrelated", "explanation": "canned"}
        for ref in dict.fromkeys(_SCHEMA_REF.findall(text))
    ]
    answer = {"meaning": "A canned reading.", "links": [], "schema_bearings": bearings}
    return structured(answer, thinks)


def example_of(schema: dict[str, Any], definitions: dict[str, Any]) -> object:
    """The same instance of any schema every time (a request with a format the fake does not
    know, such as a benchmark's grader, gets this): every property present, strings "canned",
    numbers 1, the first of an enum, arrays as short as allowed."""
    if "$ref" in schema:
        return example_of(definitions[schema["$ref"].rsplit("/", 1)[-1]], definitions)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    if "anyOf" in schema:
        return example_of(schema["anyOf"][0], definitions)
    kind = schema.get("type")
    if kind == "object":
        return {
            name: example_of(child, definitions)
            for name, child in schema.get("properties", {}).items()
        }
    if kind == "array":
        return [example_of(schema["items"], definitions)] * schema.get("minItems", 0)
    return {"string": "canned", "integer": 1, "number": 1, "boolean": True}.get(kind)


@dataclass(frozen=True)
class FakeModel:
    """One model of the fake's catalogue: what ``GET /v1/models/{id}`` says and what the
    Messages API accepts with it."""

    display_name: str
    created_at: str
    forced_tool_choice: bool = True
    structured_outputs: bool = True
    effort: bool = True
    thinks_by_default: bool = False

    def info(self, model_id: str) -> dict[str, Any]:
        """The Models API's object for this model (the fields the SDK's ``ModelInfo`` reads)."""
        yes, no = {"supported": True}, {"supported": False}
        effort = {
            "supported": self.effort,
            **{level: yes if self.effort else no for level in ("low", "medium", "high", "max")},
        }
        return {
            "type": "model",
            "id": model_id,
            "display_name": self.display_name,
            "created_at": self.created_at,
            "lifecycle": "active",
            "max_input_tokens": 1_000_000,
            "max_tokens": 128_000,
            "capabilities": {
                "batch": yes,
                "structured_outputs": yes if self.structured_outputs else no,
                "effort": effort,
            },
        }


# The models the fake knows, with the behaviour their documentation gives them.
MODELS: dict[str, FakeModel] = {
    "claude-sonnet-5-5": FakeModel(
        "Claude Sonnet 5.5",
        "2026-09-28T00:00:00Z",
        forced_tool_choice=False,
        thinks_by_default=True,
    ),
    "claude-sonnet-5": FakeModel("Claude Sonnet 5", "2026-06-30T00:00:00Z", thinks_by_default=True),
    "claude-sonnet-4-6": FakeModel("Claude Sonnet 4.6", "2026-02-17T00:00:00Z"),
    "claude-haiku-4-5": FakeModel("Claude Haiku 4.5", "2025-10-01T00:00:00Z", effort=False),
    "claude-3-haiku-20240307": FakeModel(
        "Claude Haiku 3", "2024-03-07T00:00:00Z", structured_outputs=False, effort=False
    ),
}
FORMATS = {task: output_format(task) for task in ANSWER_MODELS}
# Keywords the API's schema compiler rejects (the SDK's transform_schema moves them into
# descriptions before sending).
UNSUPPORTED_SCHEMA_KEYWORDS = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
    }
)


def fake_tokens(text: str) -> int:
    """The fake's own token count (not AWAI's estimate): about four UTF-8 bytes per token."""
    return max(1, math.ceil(len(text.encode("utf-8")) / 4))


# What the fake's cache needs, as the API documents it: a prefix shorter than the model's minimum
# cacheable length is not cached (silently), and an entry lives five minutes from its last use.
FAKE_CACHE_MINIMUM = 1024
CACHE_TTL_SECONDS = 300.0
TOOL_USE_TOKENS = 313


class PromptCache:
    """The API's prompt cache as the fake keeps it: prefixes up to the last ``cache_control``
    breakpoint, in the API's order (tools, then system, then messages). An entry is kept per model
    and output format too: the fake does not assume a cache survives a change of format."""

    def __init__(self) -> None:
        self._entries: dict[str, float] = {}
        self._lock = threading.Lock()

    def usage(self, body: dict[str, Any], output_tokens: int) -> dict[str, int]:
        blocks: list[tuple[str, bool]] = [
            (json.dumps(tool, sort_keys=True), "cache_control" in tool)
            for tool in body.get("tools", [])
        ]
        system = body.get("system") or []
        if isinstance(system, str):
            blocks.append((system, False))
        else:
            blocks.extend((block["text"], "cache_control" in block) for block in system)
        for item in body["messages"]:
            content = item["content"]
            if isinstance(content, str):
                blocks.append((content, False))
            else:
                blocks.extend(
                    (json.dumps(block, sort_keys=True), "cache_control" in block)
                    for block in content
                )
        format_ = (body.get("output_config") or {}).get("format")
        total = (
            sum(fake_tokens(text) for text, _ in blocks)
            + (TOOL_USE_TOKENS if body.get("tools") else 0)
            + (fake_tokens(json.dumps(format_)) if format_ else 0)
        )
        marked = [n for n, (_, mark) in enumerate(blocks) if mark]
        read = created = 0
        if marked:
            prefix = blocks[: marked[-1] + 1]
            tokens = sum(fake_tokens(text) for text, _ in prefix)
            if tokens >= FAKE_CACHE_MINIMUM:
                key = hashlib.sha256(
                    json.dumps(
                        [body.get("model"), format_, [text for text, _ in prefix]], sort_keys=True
                    ).encode()
                ).hexdigest()
                now = time.monotonic()
                with self._lock:
                    alive = self._entries.get(key, -1.0) > now
                    self._entries[key] = now + CACHE_TTL_SECONDS
                read, created = (tokens, 0) if alive else (0, tokens)
        return {
            "input_tokens": total - read - created,
            "output_tokens": output_tokens,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": created,
        }


_CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
MAX_BATCH_REQUESTS = 100_000


@dataclass
class FakeBatch:
    """One message batch: its requests, answered all at once when it ends."""

    id: str
    created_at: datetime
    requests: list[tuple[str, dict[str, Any]]]
    polls_left: int
    canceled: bool = False
    results: list[dict[str, Any]] | None = None
    ended_at: datetime | None = None


class FakeAnthropic:
    """The fake server. Use as a context manager; ``base_url`` is where the SDK should point."""

    def __init__(self, respond: Callable[[Received], Reply] = canned_answer) -> None:
        self.respond = respond
        self.requests: list[Received] = []
        self.usages: list[dict[str, int]] = []  # the usage of every message answered, in order
        self.posts = 0  # every HTTP request, refused ones included
        self.cache = PromptCache()
        self.batches: dict[str, FakeBatch] = {}
        self.batch_polls = 1  # retrieves that still report "in_progress" before a batch ends
        self.hold_batches = False  # True: batches stay in progress until set back to False
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

    def calls(self, task: str) -> list[Received]:
        return [request for request in self.requests if request.task == task]

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def _route(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        with self._lock:
            self.posts += 1
        if headers.get("authorization") != f"Bearer {API_KEY}" and (
            headers.get("x-api-key") != API_KEY
        ):
            return error(401, "authentication_error", "invalid x-api-key")
        parts = path.split("/")  # "", "v1", "messages", ["batches", id, ["results" | "cancel"]]
        if method == "GET" and path == "/v1/models":
            listed = [known.info(model_id) for model_id, known in MODELS.items()]
            return Reply(
                body={
                    "data": listed,
                    "has_more": False,
                    "first_id": listed[0]["id"],
                    "last_id": listed[-1]["id"],
                }
            )
        if method == "GET" and len(parts) == 4 and parts[2] == "models":
            return self._model(parts[3])
        if method == "POST" and path == "/v1/messages":
            return self._message(raw)
        if method == "POST" and path == "/v1/messages/batches":
            return self._create_batch(raw)
        if len(parts) >= 5 and parts[3] == "batches" and parts[4] in self.batches:
            batch = self.batches[parts[4]]
            tail = parts[5] if len(parts) > 5 else None
            if method == "GET" and tail is None:
                return Reply(body=self._batch_state(batch, poll=True))
            if method == "GET" and tail == "results":
                return self._batch_results(batch)
            if method == "POST" and tail == "cancel":
                batch.canceled = True
                return Reply(body=self._batch_state(batch, poll=False))
        return error(404, "not_found_error", f"no route {method} {path}")

    def _model(self, model_id: str) -> Reply:
        """``GET /v1/models/{id}``: the model's object, or the API's 404 naming it."""
        known = MODELS.get(model_id)
        if known is None:
            return error(404, "not_found_error", f"model: {model_id}")
        return Reply(body=known.info(model_id))

    def _message(self, raw: bytes) -> Reply:
        try:
            body = json.loads(raw)
        except ValueError:
            return error(400, "invalid_request_error", "the body is not JSON")
        return self._answer_body(body)

    def _answer_body(self, body: dict[str, Any]) -> Reply:
        """What ``POST /v1/messages`` answers for ``body`` (a batch's requests go through here)."""
        if body.get("model") is not None and body["model"] not in MODELS:
            return error(404, "not_found_error", f"model: {body['model']}")
        problem = _request_problem(body)
        if problem:
            return error(400, "invalid_request_error", problem)
        received = Received(headers={}, body=body)
        with self._lock:
            self.requests.append(received)
            scripted = self._script.popleft() if self._script else None
        reply = scripted or self.respond(received)
        return self._accounted(body, reply)

    # -- the Message Batches API -----------------------------------------------------------------

    def _create_batch(self, raw: bytes) -> Reply:
        try:
            body = json.loads(raw)
        except ValueError:
            return error(400, "invalid_request_error", "the body is not JSON")
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            return error(400, "invalid_request_error", "requests: at least one request is required")
        if len(requests) > MAX_BATCH_REQUESTS:
            return error(400, "invalid_request_error", "requests: too many requests in one batch")
        ids = [item.get("custom_id") for item in requests]
        if any(not isinstance(i, str) or not _CUSTOM_ID.fullmatch(i) for i in ids):
            return error(
                400, "invalid_request_error", "custom_id: must match ^[a-zA-Z0-9_-]{1,64}$"
            )
        if len(set(ids)) != len(ids):
            return error(400, "invalid_request_error", "custom_id: must be unique in the batch")
        if any(not isinstance(item.get("params"), dict) for item in requests):
            return error(400, "invalid_request_error", "params: Field required")
        batch = FakeBatch(
            id=f"msgbatch_fake_{next(_ids)}",
            created_at=datetime.now(UTC),
            requests=[(item["custom_id"], item["params"]) for item in requests],
            polls_left=self.batch_polls,
        )
        with self._lock:
            self.batches[batch.id] = batch
        return Reply(body=self._batch_state(batch, poll=False))

    def _batch_state(self, batch: FakeBatch, poll: bool) -> dict[str, Any]:
        """The batch object; a poll counts down to its end (never while ``hold_batches``)."""
        if poll and batch.results is None and not self.hold_batches:
            batch.polls_left -= 1
        if batch.results is None and (batch.polls_left <= 0 or batch.canceled):
            batch.results = [
                self._batch_item(batch, custom_id, params) for custom_id, params in batch.requests
            ]
            batch.ended_at = datetime.now(UTC)
        ended = batch.results is not None
        counts = dict.fromkeys(("processing", "succeeded", "errored", "canceled", "expired"), 0)
        if ended:
            for item in batch.results or []:
                counts[item["result"]["type"]] += 1
        else:
            counts["processing"] = len(batch.requests)
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts,
            "created_at": batch.created_at.isoformat(),
            "expires_at": (batch.created_at + timedelta(hours=24)).isoformat(),
            "ended_at": batch.ended_at.isoformat() if batch.ended_at else None,
            "cancel_initiated_at": None,
            "archived_at": None,
            "results_url": (
                f"{self.base_url}/v1/messages/batches/{batch.id}/results" if ended else None
            ),
        }

    def _batch_item(self, batch: FakeBatch, custom_id: str, params: dict[str, Any]) -> dict:
        if batch.canceled:
            return {"custom_id": custom_id, "result": {"type": "canceled"}}
        reply = self._answer_body(params)
        if reply.status == 200 and isinstance(reply.body, dict):
            return {"custom_id": custom_id, "result": {"type": "succeeded", "message": reply.body}}
        failure = reply.body if isinstance(reply.body, dict) and "error" in reply.body else None
        failure = failure or {"type": "error", "error": {"type": "api_error", "message": "failed"}}
        return {"custom_id": custom_id, "result": {"type": "errored", "error": failure}}

    def _batch_results(self, batch: FakeBatch) -> Reply:
        if batch.results is None:
            return error(400, "invalid_request_error", "the batch has not ended")
        lines = [json.dumps(item) for item in reversed(batch.results)]  # any order, as the API
        return Reply(body=("\n".join(lines) + "\n").encode(), content_type="application/binary")

    def _accounted(self, body: dict[str, Any], reply: Reply) -> Reply:
        """A message reply without usage gets the usage this request would cost, cache included."""
        if not isinstance(reply.body, dict) or reply.body.get("type") != "message":
            return reply
        if reply.body.get("usage") is None:
            output = fake_tokens(json.dumps(reply.body["content"]))
            reply = replace(reply, body={**reply.body, "usage": self.cache.usage(body, output)})
        with self._lock:
            self.usages.append(reply.body["usage"])  # type: ignore[index]
        return reply

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self._answer("POST")

            def do_GET(self) -> None:
                self._answer("GET")

            def _answer(self, method: str) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                headers = {key.lower(): value for key, value in self.headers.items()}
                reply = fake._route(method, self.path.split("?")[0].rstrip("/"), headers, raw)
                if reply.delay and fake._stopping.wait(reply.delay):
                    return
                payload = (
                    reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                )
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", reply.content_type)
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
    model = MODELS[body["model"]]
    names = {tool["name"] for tool in body.get("tools", [])}
    choice = body.get("tool_choice")
    if choice and choice.get("type") in ("tool", "any") and not model.forced_tool_choice:
        return 'tool_choice: type "tool" and "any" are not supported for this model.'
    if choice and choice.get("type") == "tool" and choice.get("name") not in names:
        return f"tool_choice: tool {choice.get('name')!r} is not in tools"
    problem = _output_config_problem(body.get("output_config"), model)
    if problem:
        return problem
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


def _output_config_problem(config: object, model: FakeModel) -> str | None:
    """What the API would refuse in ``output_config`` for ``model``, or ``None``."""
    if config is None:
        return None
    if not isinstance(config, dict) or set(config) - {"format", "effort"}:
        return "output_config: only format and effort are accepted"
    if config.get("effort") is not None:
        if not model.effort:
            return "output_config.effort: effort is not supported for this model."
        if config["effort"] not in ("low", "medium", "high", "xhigh", "max"):
            return "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
    format_ = config.get("format")
    if format_ is None:
        return None
    if not model.structured_outputs:
        return "output_config.format: structured outputs are not supported for this model."
    if not isinstance(format_, dict) or format_.get("type") != "json_schema":
        return "output_config.format.type: Input should be 'json_schema'"
    if not isinstance(format_.get("schema"), dict):
        return "output_config.format.schema: Field required"
    return _schema_problem(format_["schema"], "output_config.format.schema")


def _schema_problem(node: object, where: str) -> str | None:
    """The first part of a schema outside the subset the API compiles, or ``None``."""
    if isinstance(node, list):
        for n, item in enumerate(node):
            if problem := _schema_problem(item, f"{where}[{n}]"):
                return problem
        return None
    if not isinstance(node, dict):
        return None
    unsupported = UNSUPPORTED_SCHEMA_KEYWORDS & set(node)
    if unsupported:
        return f"{where}: keyword {sorted(unsupported)[0]!r} is not supported"
    if node.get("minItems") not in (None, 0, 1):
        return f"{where}: minItems above 1 is not supported"
    if node.get("type") == "object" and node.get("additionalProperties") is not False:
        return f"{where}: objects must set additionalProperties to false"
    children: list[tuple[str, object]] = [
        (f"{where}.{key}.{name}", value)
        for key in ("properties", "$defs")
        for name, value in (node.get(key) or {}).items()
    ]
    children.extend(
        (f"{where}.{key}", node[key]) for key in ("items", "anyOf", "allOf") if key in node
    )
    for place, child in children:
        if problem := _schema_problem(child, place):
            return problem
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
        runtime = Runtime(settings, store, self.embedder, language_backend(settings))
        self._opened.append(runtime)
        return runtime

    def __enter__(self) -> AnthropicRuntimes:
        self.fake.__enter__()
        return self

    def __exit__(self, *exc_info: object) -> None:
        for runtime in self._opened:
            runtime.close()
        self.fake.__exit__(*exc_info)
