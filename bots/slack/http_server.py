"""HTTP mode: Bolt's own WSGI adapter on waitress, behind a guard that checks signatures first.

Why waitress (measured in ``bench/slack_http_server.py``): its I/O loop reads requests without a
thread each, so slow or idle clients cost a socket, not a worker, and it hands a request to its
thread pool only once the whole body is in. It bounds bodies whether they come with a
``Content-Length`` or chunked (413, and the connection is closed, so no leftover bytes are read
as a request), answers a missing, negative or non-numeric length with 400, and closes
connections that stay silent. Bolt's ASGI adapter on uvicorn, by contrast, runs a sync ``App``'s
``dispatch`` on the event loop itself, one request at a time.

The guard in front of Bolt checks the signature over the body before anything parses it, so an
unsigned body costs an HMAC and a 401, and one that is not even UTF-8 a 400; a signed body that
is no Slack payload gets a 400 too (:class:`ParsedRequestsOnly`). Routing, the second signature
check and the OAuth pages stay Bolt's. Clients too slow to send a whole request cannot hold
every connection (:class:`SlowClientsMakeRoom`).
"""

from __future__ import annotations

import io
import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import waitress
from slack_bolt import App, BoltRequest, BoltResponse
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_bolt.adapter.wsgi.http_request import WsgiHttpRequest
from slack_sdk.signature import SignatureVerifier
from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.server import TcpWSGIServer

from bots.slack.payload_shape import payload_problem

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
MAX_BODY_BYTES = 2 * 1024 * 1024
"""Slack's largest payloads (a 40,000-character message edited, with its previous version and
blocks) stay well under this."""
IDLE_TIMEOUT_SECONDS = 10
"""A connection that sends nothing for this long is closed (Slack sends a request at once)."""
CLEANUP_SECONDS = 2
"""How often idle connections are looked for."""
SERVER_THREADS = 16
"""Threads that run Bolt's ``dispatch``; each waits at most for one listener's ``ack()``."""
CONNECTION_LIMIT = 200
WHOLE_REQUEST_SECONDS = 2
"""Once every connection is taken, one that has been sending its current request for this long
(timed from the request's first byte), or idle this long since its last reply, is closed to make
room. Slack sends each request at once, so only a slow or stalled client takes longer; and a
Slack request kept waiting for room waits at most this long, inside the 3 s Slack gives an
acknowledgement."""

Environ = dict[str, Any]
StartResponse = Callable[..., Any]
WsgiApp = Callable[[Environ, StartResponse], Iterable[bytes]]


class SignedRequestsOnly:
    """WSGI middleware: a POST to the events path reaches Bolt only if Slack signed its bytes."""

    def __init__(self, handler: WsgiApp, signing_secret: str, path: str = EVENTS_PATH) -> None:
        self.handler = handler
        self.verifier = SignatureVerifier(signing_secret)
        self.path = path

    def __call__(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") != "POST" or environ.get("PATH_INFO") != self.path:
            return self.handler(environ, start_response)
        # waitress has already read (and bounded) the whole body, de-chunked, and set its length.
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        try:
            text = body.decode("utf-8")  # what Slack signs and sends: UTF-8, always
        except UnicodeDecodeError:
            log.info("Refused an HTTP request whose body is not UTF-8")
            return _plain(start_response, "400 Bad Request", "the body is not UTF-8")
        timestamp = environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP", "")
        signature = environ.get("HTTP_X_SLACK_SIGNATURE", "")
        if not (timestamp.isdigit() and self.verifier.is_valid(text, timestamp, signature)):
            log.info("Refused an HTTP request without a valid Slack signature")
            return _plain(start_response, "401 Unauthorized", "invalid signature")
        environ["wsgi.input"] = io.BytesIO(body)
        return self.handler(environ, start_response)


class ParsedRequestsOnly(SlackRequestHandler):
    """Bolt's WSGI adapter, answering 400 to a signed body that is no Slack payload.

    Bolt parses the body and reads the team, user and channel out of it while it builds its
    request, and its authorisation and listener matching read ``event``, ``actions`` and the
    like as objects, before any listener runs: a body that is not JSON, a ``payload`` that is
    not an object, an ``event`` that is a string, each raised there and answered 500 with a
    traceback; a ``team_id`` or ``event.user`` that is a list got through and failed in a
    background worker (:mod:`bots.slack.payload_shape`). Slack never sends such a body, so it is
    the sender's mistake: 400, one log line.
    """

    def dispatch(self, request: WsgiHttpRequest) -> BoltResponse:
        try:
            bolt_request = BoltRequest(
                body=request.get_body(), query=request.query_string, headers=request.get_headers()
            )
            problem = payload_problem(bolt_request.body, bolt_request.context)
        except (ValueError, TypeError, AttributeError, KeyError, IndexError) as error:
            problem = f"{type(error).__name__}: {str(error)[:200]}"
        if problem is not None:
            log.info("Refused a signed request that is no Slack payload (%s)", problem)
            return BoltResponse(status=400, body="the body is not a Slack payload")
        return self.app.dispatch(bolt_request)


class TimedChannel(HTTPChannel):
    """waitress's connection, knowing when the request it is receiving began (``None`` between
    requests), so a kept-alive connection is timed per request, not from when it opened."""

    request_started: float | None = None

    def received(self, data: bytes) -> bool:
        if self.request is None and data:  # these bytes begin a request
            self.request_started = time.time()
        received = bool(super().received(data))
        if self.request is None:  # every request begun is whole: none is being received
            self.request_started = None
        return received

    def stalled_since(self) -> float:
        """When the request being received began, or when an idle connection last did
        anything (its last reply sent)."""
        return self.last_activity if self.request_started is None else self.request_started


class SlowClientsMakeRoom(TcpWSGIServer):
    """waitress's TCP server, closing the slowest clients when every connection is taken.

    waitress closes a connection only once it has been silent for ``channel_timeout``, and
    stops accepting at ``connection_limit``: 200 clients that each send one header byte every
    four seconds are never silent, so they held every connection and no signed request got in
    for as long as they stayed. waitress has no header timeout and no per-client limit, so
    this adds the rule they would give: when the connections are all taken, every one that has
    spent :data:`WHOLE_REQUEST_SECONDS` on its current request without handing it over whole,
    or sat idle that long since its last reply, is closed (a request being served is never
    cut), and the waiting clients are accepted in their place. Behind a proxy that buffers
    requests (nginx's default, ``docs/slack.md``), slow clients never reach this server at all.

    Listens on the first address of ``host`` (an IP address, as AWAI's settings give it).
    """

    channel_class = TimedChannel

    def readable(self) -> bool:
        if self.accepting and len(self._map) >= self.adj.connection_limit:
            self._make_room(time.time())
        return bool(super().readable())

    def _make_room(self, now: float) -> None:
        cutoff = now - WHOLE_REQUEST_SECONDS
        stalled = [
            channel
            for channel in self.active_channels.values()
            if not channel.requests and not channel.will_close and channel.stalled_since() < cutoff
        ]
        for channel in stalled:
            channel.will_close = True
        if stalled:
            log.warning(
                "Every connection was taken: closed %d that had sent no whole request in %d s",
                len(stalled),
                WHOLE_REQUEST_SECONDS,
            )


class SlackHttpServer:
    """Serve one Bolt app on ``host:port`` until :meth:`stop` (or Ctrl-C / SIGTERM)."""

    def __init__(
        self,
        app: App,
        signing_secret: str,
        host: str,
        port: int,
        idle_timeout_seconds: int = IDLE_TIMEOUT_SECONDS,
    ) -> None:
        guarded = SignedRequestsOnly(ParsedRequestsOnly(app, EVENTS_PATH), signing_secret)
        self._map: dict[int, Any] = {}
        adjustments = Adjustments(
            host=host,
            port=port,
            threads=SERVER_THREADS,
            connection_limit=CONNECTION_LIMIT,
            channel_timeout=idle_timeout_seconds,
            cleanup_interval=min(CLEANUP_SECONDS, idle_timeout_seconds),
            max_request_body_size=MAX_BODY_BYTES,
            # poll(), not select(): select() fails outright once the process holds a file
            # descriptor numbered 1,024 or more (a busy bot: Chroma, database, Slack clients).
            asyncore_use_poll=True,
            ident="awai",
        )
        self._server = SlowClientsMakeRoom(guarded, map=self._map, adj=adjustments)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.effective_port)

    def serve_forever(self) -> None:
        self._server.run()

    def start_in_background(self) -> None:
        self._thread = threading.Thread(target=self.serve_forever, name="awai-slack-http")
        self._thread.start()

    def stop(self) -> None:
        """Close the listening socket and every connection, from the server's own loop."""
        self._server.task_dispatcher.shutdown()
        self._server.trigger.pull_trigger(lambda: waitress.wasyncore.close_all(self._map))
        if self._thread is not None:
            self._thread.join()


def _plain(start_response: StartResponse, status: str, text: str) -> list[bytes]:
    data = text.encode()
    start_response(
        status,
        [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(data)))],
    )
    return [data]
