"""``awai discord [--sync [--guild ID] | --clear-guild ID]``: run the bot, or manage its commands.

Registering commands is its own step, run after installing or upgrading AWAI: Discord rate-limits
it, so the bot never does it by itself on connect. See ``manifest/discord.md``.
"""

from __future__ import annotations

import argparse
import asyncio

from bots.runtime import open_runtime
from bots.settings import BotSettings
from bots.terminal.say import fail
from bots.terminal.writing import writer_lock


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "discord", help="Run the Discord bot, or register its commands (--sync)."
    )
    parser.add_argument(
        "--sync",
        action="store_true",
        help="Register /awai and the “Read with AWAI” message menu with Discord, then exit.",
    )
    parser.add_argument(
        "--guild",
        type=int,
        metavar="ID",
        help="With --sync: register in this server only (at once; global takes up to an hour).",
    )
    parser.add_argument(
        "--clear-guild",
        type=int,
        metavar="ID",
        help="Remove the commands registered in this server only (after --sync --guild, then a"
        " global --sync, each command shows twice there), then exit.",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: BotSettings) -> int:
    # Imported here: every `awai` command registers this module, and discord.py with aiohttp
    # costs most of a second to import, which only this command should pay.
    import discord

    from bots.discord.bot import PORTAL_HINT, clear_guild_commands, serve, sync_once

    if args.guild is not None and not args.sync:
        fail("--guild goes with --sync.")
        return 2
    if args.clear_guild is not None and args.sync:
        fail("--clear-guild is its own step: run it without --sync.")
        return 2
    if settings.discord.token is None:
        fail(
            "set AWAI_DISCORD__TOKEN to the bot token (Developer Portal → your"
            " application → Bot → Reset Token); see manifest/discord.md."
        )
        return 2
    token = settings.discord.token.get_secret_value()
    serving = not args.sync and args.clear_guild is None  # a bot holds the folder until it stops
    with writer_lock(settings, "discord", until_stopped=serving), open_runtime(settings) as runtime:
        try:
            if args.clear_guild is not None:
                asyncio.run(clear_guild_commands(runtime, token, args.clear_guild))
                print(f"Removed AWAI's commands registered in server {args.clear_guild} only.")
                return 0
            if args.sync:
                names = asyncio.run(sync_once(runtime, token, args.guild))
                where = f"server {args.guild}" if args.guild else "every server (may take an hour)"
                print(f"Registered {', '.join(names)} in {where}.")
                return 0
            asyncio.run(serve(runtime, token))
            return 0
        except discord.LoginFailure:
            fail("Discord refused the token in AWAI_DISCORD__TOKEN.")
            return 2
        except discord.PrivilegedIntentsRequired:
            fail(PORTAL_HINT)
            return 2
