"""A running bot says at INFO what it does, and never what people wrote."""

from __future__ import annotations

import logging

import pytest

from tests.slack.conftest import ANN, BEN, GENERAL, SECRET, SlackHarness


@pytest.mark.slow
def test_readings_and_refusals_are_logged_with_their_reason_and_without_message_text(
    slack: SlackHarness, caplog: pytest.LogCaptureFixture
):
    said = slack.seed([(ANN, "The merger closes in March."), (BEN, "Keep it quiet until then.")])
    secret = slack.seed([(BEN, "Salaries go up by ten percent.")], channel=SECRET)[0]

    with caplog.at_level(logging.INFO, logger="bots"):
        slack.send(slack.requests.shortcut(GENERAL, ANN, said[1]))
        slack.send(
            slack.requests.command(
                f"read {slack.api.permalink(SECRET, secret['ts'])}", GENERAL, ANN
            )
        )
        slack.settle()

    logged = caplog.text
    assert f"Read {said[1]['ts']} in slack:T0AWAI:{GENERAL} for {ANN}" in logged
    assert f"Refused {ANN} the reading of {secret['ts']} in slack:T0AWAI:{SECRET}" in logged
    assert "not a member of the channel" in logged
    for text in ("merger", "quiet", "Salaries"):
        assert text not in logged
