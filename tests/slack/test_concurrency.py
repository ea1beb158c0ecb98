"""A burst of shortcuts over real HTTP: every one acknowledged within Slack's 3 seconds."""

from __future__ import annotations

import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from bots.slack.http_server import EVENTS_PATH, SlackHttpServer
from tests.slack.conftest import ANN, BEN, GENERAL, SlackHarness
from tests.slack.signed import SIGNING_SECRET

REQUESTS = 50
SLACK_ACK_DEADLINE_SECONDS = 3.0  # Slack's contract, not a performance target


def test_fifty_concurrent_shortcuts_are_each_acknowledged_within_three_seconds(
    slack: SlackHarness,
):
    said = slack.seed(
        [(ANN if i % 2 else BEN, f"Proposal {i}: we change the schedule.") for i in range(REQUESTS)]
    )
    server = SlackHttpServer(slack.bot.app, SIGNING_SECRET, "127.0.0.1", 0)
    server.start_in_background()
    url = f"http://127.0.0.1:{server.port}{EVENTS_PATH}"

    def shortcut(message: dict) -> tuple[int, float]:
        body = slack.requests.shortcut_body(GENERAL, ANN, message)
        headers = slack.requests.headers(body, "application/x-www-form-urlencoded")
        request = urllib.request.Request(url, data=body.encode(), headers=headers, method="POST")
        started = time.perf_counter()
        with urllib.request.urlopen(request, timeout=30) as response:
            status = response.status
        return status, time.perf_counter() - started

    try:
        with ThreadPoolExecutor(REQUESTS) as pool:
            answers = list(pool.map(shortcut, said))
        slack.settle()
    finally:
        server.stop()

    assert [status for status, _ in answers] == [200] * REQUESTS
    slowest = max(seconds for _, seconds in answers)
    assert slowest < SLACK_ACK_DEADLINE_SECONDS, f"slowest acknowledgement took {slowest:.2f} s"
    readings = slack.readings()
    assert len({call.params["thread_ts"] for call in readings}) == REQUESTS, "each got its reading"
    assert all(call.params["text"].startswith("Reading") for call in readings)
