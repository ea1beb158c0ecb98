"""Everything AWAI says to Discord users outside a reading's embed, in one place so it reads as
one voice (as ``bots/slack/messages.py`` does for Slack).

Every refusal or failure a user can meet has a sentence here that says what happened and what to
do. Sentences that carry numbers are functions.
"""

from __future__ import annotations

from collections.abc import Callable

from awai_engine.posts import Post
from bots.actions.answer import Answer, Outcome

SERVER_CHANNELS_ONLY = "AWAI reads server channels only."
ALREADY_READING = (
    "A reading of that message for you is already on its way (or was just posted); ask again in"
    " a minute for a new one."
)
STILL_STORING = (
    "AWAI is still storing that message, which takes longer than it should. Try again in a minute."
)
NOT_READ = (
    "AWAI has not read that message: it may have no words to read (images, stickers and bots'"
    " messages are not read), or have been deleted."
)
NOT_FOUND = (
    "AWAI could not find that message on Discord: it may have been deleted, or the link may be"
    " incomplete."
)
NOT_SPOKEN = "That is a bot's or a system message; AWAI reads only what people said."
NO_WORDS = "That message has no words for AWAI to read (an image, a sticker or a file only)."

NOTHING_BEFORE = "There is no message before yours here for AWAI to read."
CANNOT_SEE_HERE = "AWAI cannot read the message history here; it needs “Read Message History”."
DMS_CLOSED = (
    "AWAI sends readings asked for with @AWAI read as a direct message, and yours are closed to"
    " it. Use **Read with AWAI** on the message instead (right-click or long-press → Apps): that"
    " reading is shown only to you."
)
MENTION_HELP = (
    "To read a message: reply to it with `@AWAI read`, or send `@AWAI read` right after it (or"
    " `@AWAI read <message link>`); the reading comes as a direct message. **Read with AWAI** on"
    " the message (Apps) shows it only to you here. `/awai help` says more."
)


def reading_by_dm(url: str) -> str:
    return f"Your reading of {url}, as you asked with @AWAI read:"


def shared_already(url: str | None) -> str:
    if url is None:
        return "Someone is sharing this message's reading right now."
    return f"This message's reading is already shared: {url}"


def answered(said: Answer, link_to: Callable[[Post], str]) -> str | None:
    """What the asker is told of how their request for a reading ended; ``None`` when the
    reading itself is the answer."""
    post = None if said.post is None else link_to(said.post)
    match said.outcome:
        case Outcome.REFUSED:
            return said.refusal
        case Outcome.SHARED:
            return f"Shared: {post}"
        case Outcome.SHARED_EARLIER | Outcome.SHARING_NOW:
            return shared_already(post)
        case Outcome.ALREADY_READING:
            return ALREADY_READING
        case Outcome.STILL_STORING:
            return STILL_STORING
        case Outcome.NOT_FOUND:
            return NOT_READ
        case Outcome.FAILED:
            return FAILED
    return None


BACKFILL_TEXT_CHANNELS_ONLY = "AWAI can read the history of text channels and threads only."
BACKFILL_MANAGERS = "people who may manage messages in this channel"
"""Who may run ``/awai backfill`` here (:func:`bots.actions.backfill.check_may_backfill`)."""
BACKFILL_NEEDS_HISTORY = "AWAI needs the “Read Message History” permission in this channel."
BACKFILL_RUNNING = "A backfill of this channel is already running."
BACKFILL_STARTING = "AWAI is reading this channel's earlier messages…"
BACKFILL_FAILED = "something went wrong on AWAI's side"


def backfill_cannot_post(error: str) -> str:
    return f"AWAI cannot post its progress here ({error}); it needs the “Send Messages” permission."


def backfill_started(status_url: str) -> str:
    return f"Backfill started; progress is shown in {status_url}."


def backfill_progress(fetched: int, added: int) -> str:
    return f"AWAI is reading this channel's earlier messages… {fetched:,} so far ({added:,} new)."


def backfill_done(fetched: int, added: int, threads: int = 0) -> str:
    where = f" and {threads:,} of its threads" if threads else ""
    return (
        f"AWAI has read this channel's history{where}: {fetched:,} messages looked at,"
        f" {added:,} new stored."
    )


def backfill_stopped(error: str) -> str:
    return (
        f"AWAI stopped reading this channel's history ({error}). Run `/awai backfill` again to go"
        " on from where it stopped."
    )


DIGEST_TEXT_CHANNELS_ONLY = "AWAI makes digests of text channels only."
NOTHING_READ_HERE = "AWAI has not read anything in this channel yet."


def digest_posted(url: str) -> str:
    return f"The digest is posted for everyone here: {url}"


FORGET_TEXT_CHANNELS_ONLY = "AWAI keeps data of text channels only."
NOTHING_KEPT_HERE = "AWAI keeps nothing of this channel, so nothing of yours."


def forgotten(messages: int, schema_versions: int) -> str:
    return (
        f"Done. AWAI removed {messages:,} of your messages in this channel (their thoughts and"
        f" vectors with them) and {schema_versions:,} versions of your preconceptions made from"
        " them; they will not be read again, even by a backfill. What you write here from now on"
        " is read as before."
    )


FAILED = (
    "Sorry, AWAI could not finish that: something went wrong on its side (it has been noted for"
    " whoever runs AWAI). Please try again in a minute."
)
NOT_ALLOWED_HERE = "You cannot use that AWAI command here."
COMMANDS_OUT_OF_DATE = (
    "That AWAI command is out of date in this server; ask whoever runs AWAI to update its commands."
)


def bot_missing(permissions: list[str]) -> str:
    names = ", ".join(name.replace("_", " ").title() for name in permissions)
    return f"AWAI needs these permissions here first: {names}."


def cooldown(seconds: float) -> str:
    return f"Please wait {seconds:.0f} seconds before asking again."
