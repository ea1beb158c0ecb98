"""HTTP mode: a small threaded server that hands Slack's requests to Bolt and nothing more.

Why not Bolt's own development server: it serves one request at a time. Here every request gets
its own thread, so a burst of shortcuts is acknowledged in parallel well within Slack's 3
seconds. The server only translates: signature checks, routing and OAuth pages are Bolt's.
"""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from slack_bolt import App, BoltRequest, BoltResponse

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
MAX_BODY_BYTES = 4 * 1024 * 1024


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # The default backlog of 5 makes a burst of connections wait for TCP's one-second retry.
    request_queue_size = 128


class SlackHttpServer:
    def __init__(self, app: App, host: str, port: int) -> None:
        self.app = app
        self._server = _Server((host, port), self._handler())
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def serve_forever(self) -> None:
        self._server.serve_forever(poll_interval=0.2)

    def start_in_background(self) -> None:
        self._thread = threading.Thread(target=self.serve_forever, name="awai-slack-http")
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        app = self.app

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                path, _, query = self.path.partition("?")
                length = int(self.headers.get("Content-Length") or 0)
                if path != EVENTS_PATH or length > MAX_BODY_BYTES:
                    self._send(BoltResponse(status=404 if path != EVENTS_PATH else 413, body=""))
                    return
                body = self.rfile.read(length).decode("utf-8")
                self._send(app.dispatch(self._bolt_request(body, query)))

            def do_GET(self) -> None:
                path, _, query = self.path.partition("?")
                flow = app.oauth_flow
                if flow is not None and path == flow.install_path:
                    self._send(flow.handle_installation(self._bolt_request("", query)))
                elif flow is not None and path == flow.redirect_uri_path:
                    self._send(flow.handle_callback(self._bolt_request("", query)))
                else:
                    self._send(BoltResponse(status=404, body=""))

            def _bolt_request(self, body: str, query: str) -> BoltRequest:
                headers: dict[str, list[str]] = {}
                for name, value in self.headers.items():
                    headers.setdefault(name.lower(), []).append(value)
                return BoltRequest(body=body, query=query, headers=headers)

            def _send(self, response: BoltResponse) -> None:
                body = (
                    response.body if isinstance(response.body, str) else json.dumps(response.body)
                )
                data = body.encode("utf-8")
                self.send_response(response.status)
                for name, values in response.headers.items():
                    if name.lower() != "content-length":
                        for value in values:
                            self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                log.debug("%s " + format, self.address_string(), *args)

        return Handler
