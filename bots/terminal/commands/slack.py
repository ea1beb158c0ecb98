"""``awai slack [--check]``: run the Slack app in Socket Mode or HTTP mode, as the settings say.

The scheduler service (re-clustering, scheduled digests) runs in the same process.

``--check`` validates the Slack settings and asks Slack who the bot token belongs to, then exits:
a quick way to see that ``.env`` is right before starting the app for real.
"""

from __future__ import annotations

import argparse
import logging
import signal
from types import FrameType
from typing import TYPE_CHECKING

from bots.runtime import open_runtime
from bots.settings import BotSettings
from bots.terminal.say import fail, stderr
from bots.terminal.visible import one_line
from bots.terminal.writing import writer_lock

if TYPE_CHECKING:
    from bots.slack.app import SlackBot

log = logging.getLogger(__name__)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "slack", help="Run the Slack app (Socket Mode or HTTP, as AWAI_SLACK__MODE says)."
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="Check the Slack settings and the bot token with Slack, then exit.",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: BotSettings) -> int:
    # Imported here: every `awai` command registers this module, and Bolt, the Slack SDK and
    # APScheduler cost a second to import, which only this command should pay.
    from slack_bolt.error import BoltError
    from slack_sdk.errors import SlackApiError, SlackClientError

    from bots.scheduler import SchedulerService
    from bots.slack.app import build_bot, check_startup
    from bots.slack.schedule import schedule_digests

    slack = settings.slack
    check_startup(slack)
    try:
        if args.check:
            return _check(settings)
        signal.signal(signal.SIGTERM, _stop_on_sigterm)
        # A running bot says what it does (connections, catch-up, readings and refusals, never
        # message text) even without --verbose; libraries stay at warnings.
        logging.getLogger("bots").setLevel(logging.INFO)
        with writer_lock(settings, "slack", until_stopped=True), open_runtime(settings) as runtime:
            scheduler = SchedulerService(runtime)
            bot = build_bot(runtime)
            try:
                schedule_digests(bot, scheduler)
                scheduler.start()  # re-clustering and scheduled digests, in this process
                _serve(bot, settings)
            finally:
                scheduler.shutdown(wait=False)
                bot.close()
    except (BoltError, SlackApiError, SlackClientError, OSError) as error:
        fail(f"slack: {error}")
        return 2
    return 0


def _stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    """SIGTERM (systemd, docker stop) stops the app as Ctrl-C does: queued work finishes first."""
    raise SystemExit(0)


def _check(settings: BotSettings) -> int:
    from bots.slack.clients import web_client

    slack = settings.slack
    if slack.workspaces == "multi":
        stderr.print(
            f"Multi-workspace mode: install AWAI at http://{slack.host}:{slack.port}/slack/install",
            highlight=False,
        )
        return 0
    assert slack.bot_token is not None, "checked by check_startup"
    identity = web_client(slack, slack.bot_token.get_secret_value()).auth_test()
    stderr.print(
        f"Slack settings are fine: {slack.mode} mode, bot @{one_line(str(identity['user']))} in"
        f" workspace {one_line(str(identity['team']))} ({one_line(str(identity['team_id']))}).",
        highlight=False,
    )
    return 0


def _serve(bot: SlackBot, settings: BotSettings) -> None:
    from bots.slack.http_server import EVENTS_PATH, SlackHttpServer
    from bots.slack.socket_mode import socket_mode_handler

    slack = settings.slack
    if slack.mode == "socket":
        assert slack.app_token is not None, "checked by check_startup"
        handler = socket_mode_handler(bot, slack.app_token.get_secret_value())
        stderr.print("AWAI is connected to Slack (Socket Mode). Ctrl-C stops it.")
        try:
            handler.start()
        finally:
            handler.close()
        return
    assert slack.signing_secret is not None, "checked by check_startup"
    log.info("Serving Slack over HTTP on %s:%d; catching up", slack.host, slack.port)
    bot.catch_up()  # what was said while AWAI was down
    server = SlackHttpServer(
        bot.app, slack.signing_secret.get_secret_value(), slack.host, slack.port
    )
    stderr.print(
        f"AWAI listens for Slack on http://{slack.host}:{server.port}{EVENTS_PATH}. Ctrl-C stops it.",
        highlight=False,
    )
    server.serve_forever()
