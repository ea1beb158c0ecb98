"""Answering an interaction: acknowledge it once, refuse it privately, report a failure.

Several bot processes may receive the same interaction (a restart, a second instance); Discord
lets one answer it, and the others get error 40060, which is not a failure here.

Every acknowledgement is private (``ephemeral``): after a public deferral Discord shows the first
follow-up to everyone whatever its flags say, so a refusal or an error could not be kept to the
asker. What is meant for everyone (a reading or digest in public mode) is posted in the channel
separately. Every error of every command, the "Read with AWAI" menu included (discord.py sends
context-menu errors only to the tree's handler), ends in :class:`AwaiTree`'s ``on_error``, which
answers the asker privately.
"""

from __future__ import annotations

import logging

import discord
from discord import app_commands

from bots.discord import messages

log = logging.getLogger(__name__)

ALREADY_ACKNOWLEDGED = 40060
"""Discord's error code when another process answered the interaction first."""


async def acknowledge(interaction: discord.Interaction) -> bool:
    """Defer privately with "thinking"; ``False`` when another process already answered it."""
    try:
        await interaction.response.defer(thinking=True, ephemeral=True)
    except discord.HTTPException as error:
        if error.code == ALREADY_ACKNOWLEDGED:
            return False
        raise
    return True


async def refuse_now(interaction: discord.Interaction, text: str) -> None:
    """Answer at once, to the asker only (before any acknowledgement)."""
    await interaction.response.send_message(text, ephemeral=True)


async def tell_privately(interaction: discord.Interaction, text: str) -> None:
    """Say ``text`` to the asker only: as the answer, or (once acknowledged) as a follow-up."""
    if interaction.response.is_done():
        await interaction.followup.send(text, ephemeral=True)
    else:
        await interaction.response.send_message(text, ephemeral=True)


def failure_text(error: app_commands.AppCommandError) -> str:
    """What the asker is told about a command that did not run, in their words."""
    if isinstance(error, app_commands.NoPrivateMessage):
        return messages.SERVER_CHANNELS_ONLY
    if isinstance(error, app_commands.BotMissingPermissions):
        return messages.bot_missing(error.missing_permissions)
    if isinstance(error, app_commands.CommandOnCooldown):
        return messages.cooldown(error.retry_after)
    if isinstance(error, app_commands.CheckFailure):
        return messages.NOT_ALLOWED_HERE
    if isinstance(error, app_commands.CommandNotFound | app_commands.CommandSignatureMismatch):
        return messages.COMMANDS_OUT_OF_DATE
    return messages.FAILED


async def report_failure(
    interaction: discord.Interaction, error: app_commands.AppCommandError
) -> None:
    """Log a command's error (with its traceback when unexpected) and tell the asker privately.

    When the answer itself cannot be sent (the interaction's token expired, another process
    answered), that is logged too: there is nobody else to tell.
    """
    name = interaction.command.qualified_name if interaction.command else "?"
    if isinstance(error, app_commands.CommandInvokeError):
        log.error("command %s failed", name, exc_info=error.original)
    else:
        log.info("command %s not run: %s", name, error)
    try:
        await tell_privately(interaction, failure_text(error))
    except discord.HTTPException as answer_error:
        log.warning("could not tell the asker of %s about it: %s", name, answer_error)


class AwaiTree(app_commands.CommandTree):
    """The command tree whose error handler answers: slash commands and context menus alike."""

    async def on_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError, /
    ) -> None:
        await report_failure(interaction, error)
