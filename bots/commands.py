"""The ``/awai`` commands every chat platform answers, and what each does, said once.

Why here: Slack's ``/awai help``, Discord's ``/awai help`` and the descriptions Discord shows
beside each command all describe the same commands, and had drifted into three wordings of one
(the digest was "recurring ideas" on Slack, "preconceptions" on Discord). Each platform adds only
what is its own: how to reach "Read with AWAI", who may run a backfill there.
"""

from __future__ import annotations

DOES = {
    "read": "read a message in the context of what came before it",
    "digest": "each speaker's preconceptions in this channel, with a map",
    "forget-me": "remove everything you said in this channel from AWAI",
    "backfill": "read this channel's earlier messages into AWAI (resumes where it stopped)",
    "help": "what AWAI does, its commands, and what it cannot see",
}
"""What each command does, as the end of "``/awai digest``: …" (Discord takes at most 100
characters as a command's description)."""

OTHERS = ("digest", "forget-me", "backfill")
"""The commands a help lists after the ways to read a message."""


def description(name: str) -> str:
    """What ``name`` does, as a sentence (a command's description)."""
    does = DOES[name]
    return does[:1].upper() + does[1:] + "."


def listed(name: str) -> str:
    """``/awai name``: what it does, as a line of a help (the command set as code)."""
    return f"`/awai {name}`: {DOES[name]}."


def who_may_backfill(managers: str) -> str:
    """Who may run ``/awai backfill``, as a sentence of a help and of a refusal: the rule is one
    (:func:`bots.actions.backfill.check_may_backfill`), ``managers`` the platform's word for it."""
    return f"Backfill is for {managers}."
