"""Requests as Slack sends them: signed with the app's signing secret (or deliberately not)."""

from __future__ import annotations

import itertools
import json
import time
from typing import Any
from urllib.parse import urlencode

from slack_bolt import BoltRequest
from slack_sdk.signature import SignatureVerifier

from tests.slack.mock_slack_api import TEAM_ID

SIGNING_SECRET = "awai-test-signing-secret"


class SlackRequests:
    def __init__(self, response_url_base: str, secret: str = SIGNING_SECRET) -> None:
        self.verifier = SignatureVerifier(secret)
        self.response_url_base = response_url_base
        self._ids = itertools.count(1)

    def headers(
        self, body: str, content_type: str, timestamp: int | None = None, retry: int | None = None
    ) -> dict[str, str]:
        stamp = str(int(time.time()) if timestamp is None else timestamp)
        headers = {
            "content-type": content_type,
            "x-slack-request-timestamp": stamp,
            "x-slack-signature": self.verifier.generate_signature(timestamp=stamp, body=body),
        }
        if retry is not None:
            headers["x-slack-retry-num"] = str(retry)
            headers["x-slack-retry-reason"] = "http_timeout"
        return headers

    def request(self, body: str, content_type: str, **signing: Any) -> BoltRequest:
        headers = self.headers(body, content_type, **signing)
        return BoltRequest(body=body, headers={k: [v] for k, v in headers.items()})

    # -- payload bodies ------------------------------------------------------------------------

    def event_body(self, event: dict[str, Any], event_id: str | None = None) -> str:
        return json.dumps(
            {
                "token": "legacy",
                "team_id": TEAM_ID,
                "api_app_id": "AAWAI",
                "type": "event_callback",
                "event_id": event_id or f"Ev{next(self._ids):08d}",
                "event_time": int(time.time()),
                "event": event,
            }
        )

    def shortcut_body(self, channel_id: str, user_id: str, message: dict[str, Any]) -> str:
        payload = {
            "type": "message_action",
            "callback_id": "read_with_awai",
            "trigger_id": self.trigger(),
            "action_ts": f"{time.time():.6f}",
            "team": {"id": TEAM_ID, "domain": "awai-test"},
            "user": {"id": user_id, "team_id": TEAM_ID},
            "channel": {"id": channel_id, "name": channel_id.lower()},
            "message_ts": message["ts"],
            "message": {k: v for k, v in message.items() if k != "blocks"},
            "response_url": f"{self.response_url_base}/respond/{next(self._ids)}",
        }
        return urlencode({"payload": json.dumps(payload)})

    def command_body(self, text: str, channel_id: str, user_id: str) -> str:
        return urlencode(
            {
                "token": "legacy",
                "team_id": TEAM_ID,
                "team_domain": "awai-test",
                "channel_id": channel_id,
                "user_id": user_id,
                "command": "/awai",
                "text": text,
                "response_url": f"{self.response_url_base}/respond/{next(self._ids)}",
                "trigger_id": self.trigger(),
            }
        )

    def action_body(
        self, channel_id: str, user_id: str, action_id: str, value: str, thread_ts: str | None
    ) -> str:
        """A button of an ephemeral message pressed (``block_actions``), as Slack sends it."""
        payload = {
            "type": "block_actions",
            "trigger_id": self.trigger(),
            "team": {"id": TEAM_ID, "domain": "awai-test"},
            "user": {"id": user_id, "team_id": TEAM_ID},
            "api_app_id": "AAWAI",
            "container": {
                "type": "message",
                "is_ephemeral": True,
                "channel_id": channel_id,
                "thread_ts": thread_ts,
            },
            "channel": {"id": channel_id, "name": channel_id.lower()},
            "response_url": f"{self.response_url_base}/respond/{next(self._ids)}",
            "actions": [
                {
                    "type": "button",
                    "action_id": action_id,
                    "block_id": "b1",
                    "value": value,
                    "action_ts": f"{time.time():.6f}",
                }
            ],
        }
        return urlencode({"payload": json.dumps(payload)})

    def trigger(self) -> str:
        """A trigger id as Slack issues one: usable once, for three seconds."""
        return f"trigger-{next(self._ids)}-{time.time():.3f}"

    # -- signed requests -----------------------------------------------------------------------

    def event(self, event: dict[str, Any], event_id: str | None = None, **signing: Any):
        return self.request(self.event_body(event, event_id), "application/json", **signing)

    def shortcut(self, channel_id: str, user_id: str, message: dict[str, Any], **signing: Any):
        body = self.shortcut_body(channel_id, user_id, message)
        return self.request(body, "application/x-www-form-urlencoded", **signing)

    def command(self, text: str, channel_id: str, user_id: str, **signing: Any):
        body = self.command_body(text, channel_id, user_id)
        return self.request(body, "application/x-www-form-urlencoded", **signing)

    def action(
        self,
        channel_id: str,
        user_id: str,
        action_id: str,
        value: str,
        thread_ts: str | None = None,
        **signing: Any,
    ):
        body = self.action_body(channel_id, user_id, action_id, value, thread_ts)
        return self.request(body, "application/x-www-form-urlencoded", **signing)
