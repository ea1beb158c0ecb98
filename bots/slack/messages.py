"""Everything AWAI says to Slack users outside a reading, in one place so it reads as one voice.

Every error a user can meet has a sentence here that says what happened and what to do.
"""

from __future__ import annotations

from bots.commands import OTHERS, listed, who_may_backfill

BACKFILL_MANAGERS = "workspace admins and owners, and whoever created the channel"
"""Who may run ``/awai backfill`` in a channel (:func:`bots.actions.backfill.check_may_backfill`)."""
HELP = (
    "*AWAI* reads a message in the context of what was said before it, and only before it.\n"
    "• On any message (threads too): *More actions* (⋮) → *Read with AWAI*.\n"
    "• In a thread: `@AWAI read` reads the message just before yours; `@AWAI read <link>` reads"
    " a linked one.\n"
    "• `/awai read <message link>`: read a linked message (use *Copy link* on it).\n"
    + "".join(f"• {listed(name)}\n" for name in OTHERS)
    + "• `/awai help`: this text.\n"
    + who_may_backfill(BACKFILL_MANAGERS)
)
READ_QUEUED = "Reading that message; the reading will appear in its thread."
READ_QUEUED_EPHEMERAL = (
    "Reading that message; the reading will appear here shortly, for you only. Its *Share in"
    " thread* button posts it for everyone."
)
ALREADY_SHARED = "This message's reading is already shared in its thread: {link}"
ALREADY_SHARING = (
    "Someone is sharing this message's reading right now; it will appear in its thread."
)
ALREADY_READING = "AWAI is already reading that message for you; one reading is on its way."
NOT_A_MEMBER = (
    "Sorry, you can only read messages of channels you are a member of, and you are not a"
    " member of that one."
)
CANNOT_SEE_CHANNEL = (
    "Sorry, AWAI cannot see that channel. If it is yours, invite AWAI with `/invite @AWAI`"
    " and try again."
)
STILL_STORING = (
    "AWAI is still storing that message, which takes longer than it should. Try again in a minute."
)
NOT_FOUND = (
    "Sorry, AWAI could not find that message. It may have been deleted, or the link may be"
    " incomplete."
)
OTHER_WORKSPACE = (
    "Sorry, that link points to another Slack workspace. AWAI reads only messages of this"
    " workspace, and never mixes workspaces."
)
NOT_SPOKEN = "That is a bot or system message; AWAI reads only what people said."
NO_WORDS = "That message has no words for AWAI to read (a file or an image only)."
NOTHING_BEFORE = (
    "There is no earlier message here for AWAI to read. Use *Read with AWAI* on a message, or"
    " `@AWAI read <link>`."
)
CANNOT_POST = (
    "Sorry, AWAI cannot post in that channel. Invite it with `/invite @AWAI` and try again."
)
FAILED = (
    "Sorry, something went wrong while AWAI was reading this message. Nothing was lost; please"
    " try again in a minute."
)
UNKNOWN_COMMAND = "AWAI does not know `{command}`.\n\n" + HELP
READ_NEEDS_LINK = "Give the message's link: `/awai read <link>` (use *Copy link* on the message)."
DIGEST_QUEUED = "Making this channel's digest; it will be posted here shortly."
NOTHING_READ_YET = (
    "AWAI has not read anything in this channel yet. Invite it (`/invite @AWAI`) or run"
    " `/awai backfill` to read the channel's history."
)
DIGEST_FAILED = "Sorry, AWAI could not make the digest just now. Please try again in a minute."
FORGET_QUEUED = "Forgetting what you said in this channel…"
FORGET_FAILED = (
    "Sorry, AWAI could not finish forgetting just now. Please run `/awai forget-me` again."
)
BACKFILL_QUEUED = (
    "Reading this channel's history if you may ask for it; progress will be shown in the channel."
)
BACKFILL_RUNNING = "AWAI is already reading this channel's history."
BACKFILL_STARTED = "Reading this channel's history… :books:"
BACKFILL_PROGRESS = "Reading this channel's history… {count:,} messages so far."
BACKFILL_DONE = "Read this channel's history: {count:,} messages. Readings can now use them."
BACKFILL_FAILED = "something went wrong on AWAI's side"
BACKFILL_PAUSED = (
    "Paused reading this channel's history after {count:,} messages ({reason})."
    " `/awai backfill` resumes where it stopped."
)


def forgotten(count: int) -> str:
    """The answer to ``/awai forget-me``."""
    said = f"{count:,} message{'s' if count != 1 else ''}" if count else "nothing"
    return (
        f"Done: AWAI removed {said} of yours from this channel's memory, and rebuilt every"
        " summary that used them. What you write from now on will be read again; run"
        " `/awai forget-me` whenever you like."
    )
