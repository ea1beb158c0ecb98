"""Which server runs HTTP mode: Bolt's adapters on well-kept servers, against Bolt's own.

Each candidate serves the same Bolt ``App`` (a shortcut listener that acknowledges after 50 ms,
about what parsing and queueing cost) in a process of its own, on 127.0.0.1, and is measured in
the same run:

- burst: 50 signed shortcut requests at once; the slowest acknowledgement and all 50 together;
- slow clients: threads the server process gains while 40 clients each hold half a request;
- unsigned body: resident memory the process gains while a 64 MB chunked body, unsigned, is sent;
- ``Content-Length: -1``: the status the server answers.

Candidates: waitress + Bolt's WSGI adapter behind AWAI's signature guard (what ``awai slack``
runs), uvicorn + Bolt's ASGI adapter, and the anchor a user would try first, Bolt's built-in
development server (``App.start``). Run: ``.venv/bin/python -m bench.slack_http_server``.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rich.console import Console
from rich.table import Table

from tests.slack.signed import SIGNING_SECRET, SlackRequests

CANDIDATES = ("waitress-wsgi", "uvicorn-asgi", "bolt-dev-server")
BURST = 50
SLOW_CLIENTS = 40
UNSIGNED_MB = 64
ACK_WORK_SECONDS = 0.05


def serve(name: str, port: int) -> None:
    """Run one candidate in this process until killed."""
    from slack_bolt import App
    from slack_bolt.authorization import AuthorizeResult

    def authorize(enterprise_id, team_id, logger):  # type: ignore[no-untyped-def]
        return AuthorizeResult(
            enterprise_id=enterprise_id, team_id=team_id, bot_token="xoxb-b", bot_user_id="UB"
        )

    app = App(signing_secret=SIGNING_SECRET, authorize=authorize)

    @app.shortcut("read_with_awai")
    def on_read(ack) -> None:  # type: ignore[no-untyped-def]
        time.sleep(ACK_WORK_SECONDS)
        ack()

    if name == "waitress-wsgi":
        from bots.slack.http_server import SlackHttpServer

        SlackHttpServer(app, SIGNING_SECRET, "127.0.0.1", port).serve_forever()
    elif name == "uvicorn-asgi":
        import uvicorn
        from slack_bolt.adapter.asgi import SlackRequestHandler

        uvicorn.run(SlackRequestHandler(app), host="127.0.0.1", port=port, log_level="error")
    else:
        app.start(port=port)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _status(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def _wait_listening(port: int) -> None:
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nothing listens on {port}")


def _burst(port: int) -> tuple[float, float, int]:
    requests = SlackRequests("http://127.0.0.1:9")
    message = {"type": "message", "ts": "1700000000.000100", "user": "U1", "text": "hi"}

    def one(_: int) -> float | None:
        body = requests.shortcut_body("C1", "U1", message)
        headers = requests.headers(body, "application/x-www-form-urlencoded")
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/slack/events", data=body.encode(), headers=headers
        )
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                response.read()
        except OSError:  # refused, reset, or an HTTP error status
            return None
        return time.perf_counter() - started

    started = time.perf_counter()
    with ThreadPoolExecutor(BURST) as pool:
        latencies = list(pool.map(one, range(BURST)))
    answered = [seconds for seconds in latencies if seconds is not None]
    return max(answered, default=0.0), time.perf_counter() - started, BURST - len(answered)


def _slow_clients(port: int, pid: int) -> str:
    """Threads gained while slow clients hold half a request, and whether a real one gets in."""
    before = _status(pid, "Threads")
    held = []
    for _ in range(SLOW_CLIENTS):
        try:
            connection = socket.create_connection(("127.0.0.1", port), timeout=2)
            connection.sendall(b"POST /slack/events HTTP/1.1\r\nContent-Le")
            held.append(connection)
        except OSError:
            break
    time.sleep(1.0)
    gained = _status(pid, "Threads") - before
    slowest, _, failed = _burst(port)
    for connection in held:
        connection.close()
    served = f"{slowest:.2f} s" if not failed else f"{failed} of {BURST} failed"
    return f"+{gained} threads, {len(held)} held; burst meanwhile: {served}"


def _unsigned_body(port: int, pid: int) -> tuple[int, str]:
    before = _status(pid, "VmRSS")
    peak = [before]
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _status(pid, "VmRSS"))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    chunk = b"x" * 65536
    status = "sent all"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        try:
            connection.sendall(
                b"POST /slack/events HTTP/1.1\r\nHost: b\r\nTransfer-Encoding: chunked\r\n\r\n"
            )
            for _ in range(UNSIGNED_MB * 16):
                connection.sendall(b"10000\r\n" + chunk + b"\r\n")
            connection.sendall(b"0\r\n\r\n")
            status = connection.recv(64).split(b"\r\n")[0].decode() or "closed"
        except OSError as error:
            status = f"refused ({type(error).__name__})"
    time.sleep(0.3)
    stop.set()
    watcher.join()
    return (peak[0] - before) // 1024, status


def _negative_length(port: int) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(
            b"POST /slack/events HTTP/1.1\r\nHost: b\r\nContent-Length: -1\r\n\r\n{}"
        )
        try:
            answer = connection.recv(256).split(b"\r\n")[0].decode()
        except (TimeoutError, OSError) as error:
            answer = type(error).__name__
    return answer or "closed"


def measure(name: str) -> dict[str, str]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.slack_http_server", "--serve", name, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_listening(port)
        _burst(port)  # warm-up
        slowest, total, failed = _burst(port)
        threads = _slow_clients(port, process.pid)
        rss, unsigned = _unsigned_body(port, process.pid)
        negative = _negative_length(port)
    finally:
        process.kill()
        process.wait()
    return {
        "slowest ack": f"{slowest:.2f} s",
        "50 acks": f"{total:.2f} s",
        "of 50 failed": str(failed),
        "40 slow clients": threads,
        f"RSS for {UNSIGNED_MB} MB unsigned": f"{rss} MB ({unsigned})",
        "Content-Length -1": negative,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--serve", nargs=2, metavar=("NAME", "PORT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve[0], int(args.serve[1]))
        return
    results = {name: measure(name) for name in CANDIDATES}
    table = Table(title="Slack HTTP mode servers (one run, same machine)")
    table.add_column("")
    for name in CANDIDATES:
        table.add_column(name)
    for row in results[CANDIDATES[0]]:
        table.add_row(row, *(results[name][row] for name in CANDIDATES))
    Console().print(table)


if __name__ == "__main__":
    main()
