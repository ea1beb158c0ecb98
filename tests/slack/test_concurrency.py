"""A burst of shortcuts over real HTTP: every one acknowledged before any reading is done.

Slack drops an interaction not acknowledged within 3 seconds. Rather than timing the answers
(a loaded machine would make that flaky, and a fast one would prove nothing), the readings are
held back until every request has had its answer: if an acknowledgement waited for its reading,
the requests could not all return while no reading had run.
"""

from __future__ import annotations

import threading
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from bots.slack.http_server import EVENTS_PATH, SlackHttpServer
from tests.slack.conftest import ANN, BEN, GENERAL, SlackHarness
from tests.slack.signed import SIGNING_SECRET

REQUESTS = 50
ANSWER_TIMEOUT_SECONDS = 30  # a hang, not a deadline: an ack that waits for its reading never ends


@pytest.mark.slow
def test_fifty_concurrent_shortcuts_are_each_acknowledged_before_any_reading_is_done(
    slack: SlackHarness, monkeypatch: pytest.MonkeyPatch
):
    said = slack.seed(
        [(ANN if i % 2 else BEN, f"Proposal {i}: we change the schedule.") for i in range(REQUESTS)]
    )
    readings_may_run = threading.Event()
    readings_started = 0
    counting = threading.Lock()
    read = slack.runtime.read_storing_first

    def held_read(*args: Any, **kwargs: Any) -> Any:
        nonlocal readings_started
        with counting:
            readings_started += 1
        assert readings_may_run.wait(ANSWER_TIMEOUT_SECONDS * 2), "the readings were never let go"
        return read(*args, **kwargs)

    monkeypatch.setattr(slack.runtime, "read_storing_first", held_read)
    server = SlackHttpServer(slack.bot.app, SIGNING_SECRET, "127.0.0.1", 0)
    server.start_in_background()
    url = f"http://127.0.0.1:{server.port}{EVENTS_PATH}"

    def shortcut(message: dict) -> int:
        body = slack.requests.shortcut_body(GENERAL, ANN, message)
        headers = slack.requests.headers(body, "application/x-www-form-urlencoded")
        request = urllib.request.Request(url, data=body.encode(), headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=ANSWER_TIMEOUT_SECONDS) as response:
            return response.status

    try:
        with ThreadPoolExecutor(REQUESTS) as pool:
            statuses = list(pool.map(shortcut, said))
        assert statuses == [200] * REQUESTS, "every shortcut acknowledged"
        assert slack.readings() == [], "no reading was posted before the last acknowledgement"
        readings_may_run.set()
        slack.settle()
    finally:
        readings_may_run.set()
        server.stop()

    assert readings_started == REQUESTS
    readings = slack.readings()
    assert len({call.params["thread_ts"] for call in readings}) == REQUESTS, "each got its reading"
    assert all(call.params["text"].startswith("Reading") for call in readings)
