"""Plays Slack and the load balancer in front of several ``awai slack`` processes.

Run by ``deploy/local-stack.sh`` after it has started PostgreSQL and a Chroma server and run
``awai db upgrade``, with ``AWAI_DATABASE_URL``, ``AWAI_CHROMA_URL`` and ``AWAI_DATA_DIR`` set:
``python -m tests.backends.stack_check PROCESSES``. It starts a local Slack Web API
(``tests/slack/mock_slack_api.py``), the given number of ``awai slack`` processes in HTTP mode
exactly as ``deploy/README.md`` runs them (each on its own port), then sends signed requests the
way Slack does behind a load balancer that spreads them over the processes: a message event and
Slack's retry of it to different processes, a reply, and the same person's reading request twice,
once to each process. It checks that each message is stored once, that one reading is posted,
and that the second request is told a reading is already on its way. Exit status 0: all held.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from sqlalchemy import func, select

from awai_engine.settings import load_settings
from bots.slack import messages
from bots.slack.blocks import SHARE_ACTION, ReadingTarget
from storage.sql import Database, UtteranceRow
from tests.backends.servers import free_port
from tests.slack.mock_slack_api import BOT_USER_ID, MockSlackApi
from tests.slack.signed import SIGNING_SECRET, SlackRequests

ANN, BEN = "U1ANN", "U2BEN"
GENERAL = "C1GENERAL"
START_TIMEOUT_SECONDS = 240.0
WORK_TIMEOUT_SECONDS = 120.0
QUIET_SECONDS = 3.0


def main(processes: int) -> int:
    api = MockSlackApi().start()
    api.add_user(ANN, "Ann")
    api.add_user(BEN, "Ben")
    api.add_channel(GENERAL, "general", {ANN, BEN, BOT_USER_ID})
    ports = [free_port() for _ in range(processes)]
    bots = [_start_bot(api, port) for port in ports]
    try:
        for bot, port in zip(bots, ports, strict=True):
            _wait_listening(bot, port)
        print(f"stack-check: {processes} awai slack processes listen on ports {ports}")
        return _exercise(api, ports)
    finally:
        for bot in bots:
            bot.terminate()
        for bot in bots:
            bot.wait(timeout=30)
        api.stop()


def _start_bot(api: MockSlackApi, port: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "AWAI_SLACK__MODE": "http",
        "AWAI_SLACK__BOT_TOKEN": "xoxb-local-stack",
        "AWAI_SLACK__SIGNING_SECRET": SIGNING_SECRET,
        "AWAI_SLACK__API_BASE_URL": api.base_url,
        "AWAI_SLACK__HOST": "127.0.0.1",
        "AWAI_SLACK__PORT": str(port),
        "OMP_NUM_THREADS": "1",
    }
    awai = Path(sys.executable).with_name("awai")
    return subprocess.Popen([str(awai), "slack"], env=env)


def _wait_listening(bot: subprocess.Popen[bytes], port: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if bot.poll() is not None:
            raise SystemExit(f"stack-check: awai slack on port {port} exited with {bot.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"stack-check: awai slack did not listen on port {port}")


def _post(port: int, body: str, content_type: str, requests: SlackRequests, **signing) -> int:  # type: ignore[no-untyped-def]
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/slack/events",
        data=body.encode(),
        headers=requests.headers(body, content_type, **signing),
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status


def _exercise(api: MockSlackApi, ports: list[int]) -> int:
    requests = SlackRequests(api.url)
    first, second = ports[0], ports[-1]
    said = api.add_message(GENERAL, ANN, "Shall we ship the beta on Friday?")
    answer = api.add_message(GENERAL, BEN, "Friday works if QA signs off by Thursday.")
    for message in (said, answer):
        event = {**message, "channel": GENERAL, "channel_type": "channel"}
        body = requests.event_body(event, event_id=f"Ev-{message['ts']}")
        _post(first, body, "application/json", requests)
        _post(second, body, "application/json", requests, retry=1)  # Slack's retry, elsewhere
    _wait_for(lambda: sum(_copies()) == 2, "both messages stored")

    for port in (first, second):  # the same person asks twice; each request hits a process
        body = requests.shortcut_body(GENERAL, ANN, answer)
        _post(port, body, "application/x-www-form-urlencoded", requests)
    _wait_for(lambda: len(_private_readings(api)) >= 1, "a reading delivered")
    time.sleep(QUIET_SECONDS)  # room for a second reading, if one were coming
    readings = len(_private_readings(api))
    refused = [r.get("text") for r in api.responses].count(messages.ALREADY_READING)

    share = ReadingTarget(GENERAL, answer["ts"]).value()
    for port in (first, second):  # Share pressed twice, each press reaching another process
        body = requests.action_body(GENERAL, ANN, SHARE_ACTION, share, None)
        _post(port, body, "application/x-www-form-urlencoded", requests)
    _wait_for(lambda: len(api.calls_to("chat.postMessage")) >= 1, "a reading shared")
    time.sleep(QUIET_SECONDS)
    shared = len(api.calls_to("chat.postMessage"))
    told = [r.get("text", "") for r in api.responses]
    second_share = sum(
        text == messages.ALREADY_SHARING or text.startswith(messages.ALREADY_SHARED[:40])
        for text in told
    )
    checks = {
        "each message stored once": _copies() == [1, 1],
        "one private reading delivered": readings == 1,
        "the second request told a reading is on its way": refused == 1,
        "one shared reading posted": shared == 1,
        "the second share told it is shared": second_share == 1,
    }
    for name, held in checks.items():
        print(f"stack-check: {'ok  ' if held else 'FAIL'} {name}")
    return 0 if all(checks.values()) else 1


def _private_readings(api: MockSlackApi) -> list:
    """Readings sent to the asker alone: ephemeral messages carrying a reading's Share button."""
    return [
        call
        for call in api.calls_to("chat.postEphemeral")
        if SHARE_ACTION in json.dumps(call.params.get("blocks") or "")
    ]


def _wait_for(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + WORK_TIMEOUT_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"stack-check: timed out waiting for {what}")
        time.sleep(0.2)


def _copies() -> list[int]:
    """Rows per stored message id, in the database every process writes to (this run's own)."""
    database = Database(load_settings().resolved_database_url())
    try:
        with database.read() as session:
            return list(
                session.scalars(
                    select(func.count()).select_from(UtteranceRow).group_by(UtteranceRow.message_id)
                )
            )
    finally:
        database.dispose()


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2))
