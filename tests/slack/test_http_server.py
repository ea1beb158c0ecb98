"""HTTP mode under hostile or broken clients, over real sockets to the real server.

What the hand-written server got wrong, each reproduced here: slow clients holding a thread each,
bodies read without bound before the signature check, tracebacks on a bad length or a non-UTF-8
body, and bytes left after a 413 read as a second request.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from urllib.parse import urlencode

import pytest

from bots.slack.http_server import (
    CONNECTION_LIMIT,
    EVENTS_PATH,
    MAX_BODY_BYTES,
    WHOLE_REQUEST_SECONDS,
    SlackHttpServer,
)
from tests.slack.conftest import ANN, GENERAL, SlackHarness
from tests.slack.signed import SIGNING_SECRET

SLOW_CLIENTS = 40
AWAI_LOGGERS = ("bots", "awai_engine", "storage")  # the packages whose log lines are ours


@pytest.fixture
def server(slack: SlackHarness) -> Iterator[SlackHttpServer]:
    served = SlackHttpServer(slack.bot.app, SIGNING_SECRET, "127.0.0.1", 0, idle_timeout_seconds=1)
    served.start_in_background()
    yield served
    served.stop()


def _connect(server: SlackHttpServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=30)


def _exchange(server: SlackHttpServer, raw: bytes) -> bytes:
    """Send raw bytes while reading the answer, until the server closes the connection.

    Reading alongside matters: a server that refuses a body closes the connection with bytes
    still unread, and the reset that follows would discard an answer read only afterwards.
    """
    with _connect(server) as connection:
        answer: list[bytes] = []
        reader = threading.Thread(target=lambda: answer.append(_read_all(connection)))
        reader.start()
        try:
            for start in range(0, len(raw), 65536):
                connection.sendall(raw[start : start + 65536])
            connection.shutdown(socket.SHUT_WR)
        except OSError:  # the server stopped reading: it has answered and closed
            pass
        reader.join()
        return answer[0]


def _read_all(connection: socket.socket) -> bytes:
    chunks = []
    try:
        while chunk := connection.recv(65536):
            chunks.append(chunk)
    except ConnectionResetError:
        pass
    return b"".join(chunks)


def _status_lines(answer: bytes) -> list[bytes]:
    return [line for line in answer.split(b"\r\n") if line.startswith(b"HTTP/1.1 ")]


def _request(body: bytes, headers: dict[str, str]) -> bytes:
    head = f"POST {EVENTS_PATH} HTTP/1.1\r\nHost: awai\r\n" + "".join(
        f"{name}: {value}\r\n" for name, value in headers.items()
    )
    return head.encode() + b"\r\n" + body


def _signed(slack: SlackHarness, body: bytes) -> dict[str, str]:
    return slack.requests.headers(body.decode(), "application/json")


@pytest.mark.slow
def test_slow_clients_hold_sockets_not_threads_and_silent_ones_are_closed(
    slack: SlackHarness, server: SlackHttpServer
):
    message = slack.seed([(ANN, "We ship on Friday.")])[0]
    threads_before = threading.active_count()
    slow = [_connect(server) for _ in range(SLOW_CLIENTS)]
    for connection in slow:  # half a request line, then nothing
        connection.sendall(b"POST /slack/events HTTP/1.1\r\nContent-Le")

    body = slack.requests.shortcut_body(GENERAL, ANN, message).encode()
    headers = slack.requests.headers(body.decode(), "application/x-www-form-urlencoded")
    answer = _exchange(
        server, _request(body, {**headers, "Content-Length": str(len(body)), "Connection": "close"})
    )
    assert _status_lines(answer) == [b"HTTP/1.1 200 OK"]
    assert threading.active_count() - threads_before < SLOW_CLIENTS / 4

    for connection in slow:  # the server gives up on each silent client by itself
        assert _read_all(connection) == b""
        connection.close()
    slack.settle()


def test_slow_clients_holding_every_connection_do_not_keep_a_signed_request_out(
    slack: SlackHarness,
):
    """The issue's attack: as many clients as the server takes connections, each sending one
    header byte every 4 s (never silent long enough to be closed as idle)."""
    served = SlackHttpServer(slack.bot.app, SIGNING_SECRET, "127.0.0.1", 0)  # 10 s idle timeout
    served.start_in_background()
    slow = [_connect(served) for _ in range(CONNECTION_LIMIT)]
    stop = threading.Event()

    def drip() -> None:
        for byte in itertools.cycle(b"POST /slack/events HTTP/1.1\r\nX-Slow: yes"):
            for connection in slow:
                with contextlib.suppress(OSError):  # closed by the server: that is the point
                    connection.sendall(bytes([byte]))
            if stop.wait(4):
                return

    dripping = threading.Thread(target=drip)
    dripping.start()
    try:
        time.sleep(1)  # every connection taken, every slow client has sent its first byte
        message = slack.seed([(ANN, "We ship on Friday.")])[0]
        body = slack.requests.shortcut_body(GENERAL, ANN, message).encode()
        headers = slack.requests.headers(body.decode(), "application/x-www-form-urlencoded")
        request = _request(
            body, {**headers, "Content-Length": str(len(body)), "Connection": "close"}
        )
        started = time.monotonic()
        answer = _exchange(served, request)
        answered_in = time.monotonic() - started
        assert _status_lines(answer) == [b"HTTP/1.1 200 OK"]
        assert answered_in < 3.0, "Slack gives up on an acknowledgement after 3 s"
        slack.settle()
    finally:
        stop.set()
        dripping.join()
        for connection in slow:
            connection.close()
        served.stop()


def _answer(connection: socket.socket) -> bytes:
    """One whole answer read from a kept-alive connection (its ``Content-Length`` bytes)."""
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = connection.recv(65536)
        if not chunk:
            return answer
        answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length and (chunk := connection.recv(65536)):
        body += chunk
    return head + b"\r\n\r\n" + body


@pytest.fixture
def patient_server(slack: SlackHarness) -> Iterator[SlackHttpServer]:
    """A server with the default idle timeout (10 s), longer than the slow-client limit."""
    served = SlackHttpServer(slack.bot.app, SIGNING_SECRET, "127.0.0.1", 0)
    served.start_in_background()
    yield served
    served.stop()


def test_a_kept_alive_connection_is_timed_per_request_when_every_connection_is_taken(
    slack: SlackHarness, patient_server: SlackHttpServer
):
    """A connection older than the slow-client limit, partway through its second request when
    the last connection is taken, is answered: the limit counts from the request's first byte."""
    server = patient_server
    body = json.dumps({"type": "url_verification", "challenge": "abc123", "token": "x"}).encode()
    with _connect(server) as kept:
        kept.sendall(_request(body, {**_signed(slack, body), "Content-Length": str(len(body))}))
        assert _status_lines(_answer(kept)) == [b"HTTP/1.1 200 OK"]
        time.sleep(WHOLE_REQUEST_SECONDS * 0.75)
        second = _request(body, {**_signed(slack, body), "Content-Length": str(len(body))})
        half = len(second) - len(body) // 2
        kept.sendall(second[:half])
        others = [_connect(server) for _ in range(CONNECTION_LIMIT - 1)]
        for other in others:  # every connection taken, each partway through a request
            other.sendall(b"POST /slack/events HTTP/1.1\r\n")
        waited_until = time.monotonic() + WHOLE_REQUEST_SECONDS * 0.5
        while time.monotonic() < waited_until:  # the others drip, as slow clients do
            for other in others:
                other.sendall(b"X")
            time.sleep(0.05)
        # the kept connection is now older than the limit, its current request is not
        kept.sendall(second[half:])
        answer = _answer(kept)
        for other in others:
            other.close()
    assert _status_lines(answer) == [b"HTTP/1.1 200 OK"]
    assert answer.endswith(b'{"challenge": "abc123"}')


def test_an_unsigned_chunked_body_over_the_limit_is_refused_and_never_parsed(
    slack: SlackHarness, server: SlackHttpServer
):
    calls_before = len(slack.api.calls)
    chunk = b"x" * 65536
    chunks = b"".join(
        b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(MAX_BODY_BYTES // 65536 + 8)
    )
    raw = _request(chunks + b"0\r\n\r\n", {"Transfer-Encoding": "chunked"})
    answer = _exchange(server, raw)
    assert _status_lines(answer) == [b"HTTP/1.1 413 Request Entity Too Large"]
    assert len(slack.api.calls) == calls_before, "Bolt never saw it"


def test_bytes_after_a_refused_body_are_not_read_as_a_second_request(
    slack: SlackHarness, server: SlackHttpServer
):
    message = slack.seed([(ANN, "We ship on Friday.")])[0]
    smuggled = slack.requests.shortcut_body(GENERAL, ANN, message).encode()
    inner = _request(
        smuggled,
        {
            **slack.requests.headers(smuggled.decode(), "application/x-www-form-urlencoded"),
            "Content-Length": str(len(smuggled)),
        },
    )
    too_long = str(MAX_BODY_BYTES + 1)
    answer = _exchange(server, _request(inner, {"Content-Length": too_long}))
    assert _status_lines(answer) == [b"HTTP/1.1 413 Request Entity Too Large"]
    slack.settle()
    assert slack.api.calls_to("chat.postMessage") == [], "the smuggled shortcut was not run"


@pytest.mark.parametrize("length", ["-1", "many", "12, 12"])
def test_a_broken_content_length_is_a_bad_request(
    slack: SlackHarness, server: SlackHttpServer, length: str
):
    answer = _exchange(server, _request(b"{}", {"Content-Length": length, "Connection": "close"}))
    assert _status_lines(answer) == [b"HTTP/1.1 400 Bad Request"]


def test_an_unsigned_body_is_refused_before_it_is_parsed(
    slack: SlackHarness, server: SlackHttpServer
):
    body = b"{not json"
    answer = _exchange(
        server,
        _request(body, {"Content-Length": str(len(body)), "X-Slack-Signature": "v0=forged"}),
    )
    assert _status_lines(answer) == [b"HTTP/1.1 401 Unauthorized"]


def test_a_body_that_is_not_utf8_is_a_bad_request_not_a_traceback(
    slack: SlackHarness, server: SlackHttpServer
):
    body = json.dumps({"type": "event_callback"}).encode()[:-1] + b"\xff}"
    headers = {**slack.requests.headers("{}", "application/json"), "Connection": "close"}
    headers["Content-Length"] = str(len(body))
    answer = _exchange(server, _request(body, headers))
    assert _status_lines(answer) == [b"HTTP/1.1 400 Bad Request"]


def test_a_signed_url_verification_is_answered_through_bolt(
    slack: SlackHarness, server: SlackHttpServer
):
    body = json.dumps({"type": "url_verification", "challenge": "abc123", "token": "x"}).encode()
    headers = {**_signed(slack, body), "Content-Length": str(len(body)), "Connection": "close"}
    answer = _exchange(server, _request(body, headers))
    assert _status_lines(answer) == [b"HTTP/1.1 200 OK"]
    assert answer.endswith(b'{"challenge": "abc123"}')


def _form_payload(payload: str) -> str:
    return urlencode({"payload": payload})


def _event_callback(**fields: object) -> str:
    """An Events API body with a message event, ``fields`` replacing or adding to it."""
    event = {"type": "message", "user": "U1", "channel": "C1", "text": "hi", "ts": "1.0"}
    return json.dumps({"type": "event_callback", "team_id": "T1", "event": event, **fields})


# Validly signed bodies Slack never sends, each of a kind that Bolt failed on with a 500.
MALFORMED = {
    "json-not-json": ("application/json", "{not json"),
    "json-a-list": ("application/json", "[1, 2]"),
    "json-a-string": ("application/json", '"event_callback"'),
    "event-a-string": ("application/json", '{"type": "event_callback", "event": "message"}'),
    "event-team-a-list": (
        "application/json",
        '{"type": "event_callback", "team": [], "event": {"type": "message"}}',
    ),
    "payload-not-json": ("application/x-www-form-urlencoded", _form_payload("{not json")),
    "payload-a-list": ("application/x-www-form-urlencoded", _form_payload("[]")),
    "payload-a-string": ("application/x-www-form-urlencoded", _form_payload('"x"')),
    "actions-a-string": (
        "application/x-www-form-urlencoded",
        _form_payload('{"type": "block_actions", "user": {"id": "U1"}, "actions": "x"}'),
    ),
    "shortcut-team-a-string": (
        "application/x-www-form-urlencoded",
        _form_payload('{"type": "message_action", "callback_id": "read_with_awai", "team": "T"}'),
    ),
    "event-user-a-list": (
        "application/json",
        _event_callback(event={"type": "message", "user": ["U"], "channel": "C1", "ts": "1.0"}),
    ),
    "event-channel-id-a-number": (
        "application/json",
        _event_callback(event={"type": "message", "user": "U1", "channel": {"id": 1}, "ts": "1"}),
    ),
    "event-type-a-number": ("application/json", _event_callback(event={"type": 5})),
    "type-a-list": ("application/json", json.dumps({"type": ["event_callback"], "team_id": "T"})),
    "team-id-a-list": ("application/json", _event_callback(team_id=["T1"])),
    "enterprise-id-a-list": ("application/json", _event_callback(enterprise_id=["E1"])),
    "enterprise-install-a-word": ("application/json", _event_callback(is_enterprise_install="yes")),
    "authorization-team-a-list": (
        "application/json",
        _event_callback(authorizations=[{"team_id": ["T1"], "user_id": "U1", "is_bot": True}]),
    ),
    "shortcut-ids-lists": (
        "application/x-www-form-urlencoded",
        _form_payload(
            json.dumps(
                {
                    "type": "message_action",
                    "callback_id": "read_with_awai",
                    "team": {"id": ["T"]},
                    "user": {"id": ["U"]},
                    "channel": {"id": "C"},
                    "message": {"ts": "1.0"},
                }
            )
        ),
    ),
    "shortcut-callback-a-number": (
        "application/x-www-form-urlencoded",
        _form_payload(
            json.dumps({"type": "message_action", "callback_id": 5, "team": {"id": "T"}})
        ),
    ),
}


def _send_signed(
    slack: SlackHarness,
    server: SlackHttpServer,
    caplog: pytest.LogCaptureFixture,
    content_type: str,
    text: str,
) -> bytes:
    """Send ``text`` validly signed, log lines captured, and wait for the workers it started."""
    body = text.encode()
    headers = {
        **slack.requests.headers(text, content_type),
        "Content-Length": str(len(body)),
        "Connection": "close",
    }
    with caplog.at_level(logging.INFO):
        answer = _exchange(server, _request(body, headers))
        slack.settle()
    return answer


# Bodies as Slack sends them, in the shapes the check must keep letting through: strings in a
# slash command's form, objects where some events put them, nested messages of an edit.
SLACK_SHAPED = {
    "command-form-strings": (
        "application/x-www-form-urlencoded",
        urlencode(
            {
                "team_id": "T1",
                "enterprise_id": "",
                "is_enterprise_install": "false",
                "api_app_id": "AAWAI",
                "channel_id": "C1",
                "user_id": "U1",
                "command": "/awai",
                "text": "help",
            }
        ),
    ),
    "edit-with-nested-messages": (
        "application/json",
        _event_callback(
            event={
                "type": "message",
                "subtype": "message_changed",
                "channel": "C1",
                "ts": "2.0",
                "message": {
                    "type": "message",
                    "user": "U1",
                    "text": "new",
                    "ts": "1.0",
                    "edited": {"user": "U1", "ts": "2.0"},
                },
                "previous_message": {"type": "message", "user": "U1", "text": "old", "ts": "1.0"},
            },
            authorizations=[
                {
                    "team_id": "T1",
                    "user_id": "UB",
                    "is_bot": True,
                    "is_enterprise_install": False,
                    "enterprise_id": None,
                }
            ],
            is_enterprise_install=False,
        ),
    ),
    "user-event-with-user-object": (
        "application/json",
        _event_callback(event={"type": "user_change", "user": {"id": "U1", "team_id": "T1"}}),
    ),
    "channel-event-with-channel-object": (
        "application/json",
        _event_callback(event={"type": "channel_created", "channel": {"id": "C9", "name": "x"}}),
    ),
}


@pytest.mark.parametrize("kind", list(SLACK_SHAPED))
def test_a_signed_body_of_a_shape_slack_sends_passes_the_payload_check(
    slack: SlackHarness,
    server: SlackHttpServer,
    caplog: pytest.LogCaptureFixture,
    kind: str,
):
    answer = _send_signed(slack, server, caplog, *SLACK_SHAPED[kind])
    # Bolt answers: 200, or 404 for an event AWAI has no listener for; never the check's 400.
    assert _status_lines(answer) in ([b"HTTP/1.1 200 OK"], [b"HTTP/1.1 404 Not Found"])
    assert not [record for record in caplog.records if "Refused" in record.getMessage()]


@pytest.mark.parametrize("kind", list(MALFORMED))
def test_a_signed_body_that_is_no_slack_payload_is_a_bad_request_with_one_log_line(
    slack: SlackHarness,
    server: SlackHttpServer,
    caplog: pytest.LogCaptureFixture,
    kind: str,
):
    answer = _send_signed(slack, server, caplog, *MALFORMED[kind])
    assert _status_lines(answer) == [b"HTTP/1.1 400 Bad Request"]
    # AWAI's own lines only: a library's say their own state (waitress.queue's "Task queue depth
    # is N" whenever a loaded machine has every worker thread busy for a moment failed CI once).
    said = [
        record
        for record in caplog.records
        if record.levelno >= logging.INFO and record.name.split(".")[0] in AWAI_LOGGERS
    ]
    assert [record.getMessage().split(" (")[0] for record in said] == [
        "Refused a signed request that is no Slack payload"
    ], [record.getMessage() for record in said]
    assert all(record.exc_info is None and "\n" not in record.getMessage() for record in said)
