"""Socket Mode against a local websocket server: events acknowledged, catch-up on every hello."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from bots.slack.socket_mode import socket_mode_handler
from tests.slack.conftest import ANN, BEN, CAT, GENERAL, SlackHarness
from tests.slack.socket_mode_server import LocalSocketMode


@pytest.fixture
def socket_mode(slack: SlackHarness) -> Iterator[LocalSocketMode]:
    server = LocalSocketMode().start()
    slack.api.socket_mode_url = server.url
    yield server
    server.stop()


@pytest.mark.slow
def test_each_connection_catches_up_and_events_are_acknowledged_and_stored(
    slack: SlackHarness, socket_mode: LocalSocketMode
):
    slack.seed([(ANN, "Stored before AWAI went down.")])
    missed = slack.api.add_message(GENERAL, BEN, "Said while AWAI was down.")
    handler = socket_mode_handler(slack.bot, "xapp-test", ping_interval=0.5)
    handler.connect()
    try:
        socket_mode.wait_for(lambda: missed["ts"] in slack.stored_texts())

        live = slack.api.add_message(GENERAL, CAT, "Said live over the websocket.")
        event = {**live, "channel": GENERAL, "channel_type": "channel"}
        socket_mode.send_event(
            json.loads(slack.requests.event_body(event, "Ev-live")), "envelope-1"
        )
        socket_mode.wait_for(lambda: "envelope-1" in socket_mode.acks)
        socket_mode.wait_for(lambda: live["ts"] in slack.stored_texts())

        socket_mode.drop()  # Slack closes the connection; meanwhile someone speaks
        between = slack.api.add_message(GENERAL, ANN, "Said while the connection was down.")
        socket_mode.wait_for(lambda: len(socket_mode.connections) == 2)
        socket_mode.wait_for(lambda: between["ts"] in slack.stored_texts())
    finally:
        handler.close()
    slack.settle()

    assert len(slack.api.calls_to("apps.connections.open")) >= 2
    assert len(slack.stored_texts()) == 4
