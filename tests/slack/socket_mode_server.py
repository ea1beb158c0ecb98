"""A local stand-in for Slack's Socket Mode websocket endpoint, on 127.0.0.1.

The mock Web API's ``apps.connections.open`` hands out this server's URL; the real slack_sdk
Socket Mode client connects to it, as to Slack. Each connection gets Slack's ``hello`` first;
tests then send envelopes (events as Slack wraps them) and see the client's acknowledgements,
and can drop a connection to make the client reconnect.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from websockets.sync.server import ServerConnection, serve


class LocalSocketMode:
    def __init__(self) -> None:
        self.connections: list[ServerConnection] = []
        self.acks: list[str] = []
        self.lock = threading.Lock()
        self._server = serve(self._serve, "127.0.0.1", 0)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self._server.socket.getsockname()[1]}/link"

    def start(self) -> LocalSocketMode:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()

    def send_event(self, body: dict[str, Any], envelope_id: str) -> None:
        """An Events API payload on the newest connection, wrapped in Slack's envelope."""
        envelope = {
            "envelope_id": envelope_id,
            "type": "events_api",
            "accepts_response_payload": False,
            "retry_attempt": 0,
            "retry_reason": "",
            "payload": body,
        }
        self.connections[-1].send(json.dumps(envelope))

    def drop(self) -> None:
        """Close the newest connection, as Slack does when it rotates its servers."""
        self.connections[-1].close()

    def wait_for(self, condition, seconds: float = 60.0) -> None:  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + seconds
        while not condition():
            assert time.monotonic() < deadline, "Socket Mode did not get there"
            time.sleep(0.05)

    def _serve(self, connection: ServerConnection) -> None:
        with self.lock:
            self.connections.append(connection)
        hello = {
            "type": "hello",
            "num_connections": 1,
            "debug_info": {"host": "local", "approximate_connection_time": 3600},
            "connection_info": {"app_id": "AAWAI"},
        }
        connection.send(json.dumps(hello))
        for raw in connection:
            message = json.loads(raw)
            if "envelope_id" in message:
                with self.lock:
                    self.acks.append(message["envelope_id"])
