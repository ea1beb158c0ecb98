"""Answering an interaction: acknowledge it once, refuse it privately, report a failure.

Several bot processes may receive the same interaction (a restart, a second instance); Discord
lets one answer it, and the others get error 40060, which is not a failure here.
"""

from __future__ import annotations

import logging

import discord
from discord import app_commands

from bots.discord import messages

log = logging.getLogger(__name__)

ALREADY_ACKNOWLEDGED = 40060
"""Discord's error code when another process answered the interaction first."""


async def acknowledge(interaction: discord.Interaction, ephemeral: bool) -> bool:
    """Defer with "thinking"; ``False`` when another process already answered it."""
    try:
        await interaction.response.defer(thinking=True, ephemeral=ephemeral)
    except discord.HTTPException as error:
        if error.code == ALREADY_ACKNOWLEDGED:
            return False
        raise
    return True


async def refuse_now(interaction: discord.Interaction, text: str) -> None:
    """Answer at once, to the asker only (before any acknowledgement)."""
    await interaction.response.send_message(text, ephemeral=True)


async def report_failure(
    interaction: discord.Interaction, error: app_commands.AppCommandError
) -> None:
    """Log a command's unexpected error and tell the asker, privately, that it was logged."""
    log.exception(
        "command %s failed",
        interaction.command and interaction.command.qualified_name,
        exc_info=error,
    )
    if interaction.response.is_done():
        await interaction.followup.send(messages.FAILED, ephemeral=True)
    else:
        await interaction.response.send_message(messages.FAILED, ephemeral=True)
