"""The rules the fake Discord enforces, as Discord documents and applies them (API v10).

Kept apart from the server (:mod:`tests.discord.fake_discord`) so each rule reads as one function,
and written from Discord's documentation, not from the bot's own limits module: a double that
shared the bot's constants would agree with the bot's mistakes.

- Message bodies: content at most 2000 characters, at most 10 embeds, each embed's title 256,
  description 4096, 25 fields with names of 256 and values of 1024, footer 2048, author name 256,
  and 6000 for all embeds of one message together; a new message needs something to show.
  Characters are counted as Discord counts them (UTF-16 code units).
- Interactions: the first response within 3 s of the interaction's creation, else 10062 Unknown
  interaction; one response only (40060 for a second); follow-ups and edits of the original only
  after a response, and only for 15 minutes (then 50027 Invalid Webhook Token); the first
  follow-up after a deferred ("thinking") response *is* that response, shown with the deferral's
  visibility whatever flags it carries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

EPHEMERAL = 1 << 6

CONTENT_LIMIT = 2000
EMBEDS_PER_MESSAGE = 10
EMBED_TOTAL = 6000
EMBED_FIELDS = 25
EMBED_TEXT_LIMITS = {"title": 256, "description": 4096}
FIELD_LIMITS = {"name": 256, "value": 1024}
FOOTER_LIMIT = 2048
AUTHOR_LIMIT = 256

ACKNOWLEDGE_SECONDS = 3.0
TOKEN_SECONDS = 15 * 60.0

# Discord's JSON error codes used here
UNKNOWN_CHANNEL = 10003
UNKNOWN_MESSAGE = 10008
UNKNOWN_WEBHOOK = 10015
UNKNOWN_INTERACTION = 10062
MISSING_ACCESS = 50001
CANNOT_DM = 50007
EMPTY_MESSAGE = 50006
MISSING_PERMISSIONS = 50013
INVALID_WEBHOOK_TOKEN = 50027
INVALID_FORM_BODY = 50035
ALREADY_ACKNOWLEDGED = 40060


@dataclass(frozen=True)
class Refusal:
    """What Discord answers instead of doing it: an HTTP status, a JSON code and its message."""

    status: int
    code: int
    message: str

    def body(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message}


def units(text: str) -> int:
    """Length as Discord counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def message_problems(body: dict[str, Any], creating: bool, files: int = 0) -> list[str]:
    """Why Discord would refuse this message body with 50035 (or 50006), each as a path."""
    problems: list[str] = []
    content = body.get("content") or ""
    if units(content) > CONTENT_LIMIT:
        problems.append(f"content: {units(content)} > {CONTENT_LIMIT}")
    embeds = body.get("embeds") or []
    if len(embeds) > EMBEDS_PER_MESSAGE:
        problems.append(f"embeds: {len(embeds)} > {EMBEDS_PER_MESSAGE}")
    total = 0
    for index, embed in enumerate(embeds):
        for key, limit in EMBED_TEXT_LIMITS.items():
            text = embed.get(key) or ""
            total += units(text)
            if units(text) > limit:
                problems.append(f"embeds.{index}.{key}: {units(text)} > {limit}")
        fields = embed.get("fields") or []
        if len(fields) > EMBED_FIELDS:
            problems.append(f"embeds.{index}.fields: {len(fields)} > {EMBED_FIELDS}")
        for number, embed_field in enumerate(fields):
            for key, limit in FIELD_LIMITS.items():
                text = embed_field.get(key) or ""
                total += units(text)
                if not text:
                    problems.append(f"embeds.{index}.fields.{number}.{key}: required")
                elif units(text) > limit:
                    problems.append(
                        f"embeds.{index}.fields.{number}.{key}: {units(text)} > {limit}"
                    )
        for key, inner, limit in (
            ("footer", "text", FOOTER_LIMIT),
            ("author", "name", AUTHOR_LIMIT),
        ):
            text = (embed.get(key) or {}).get(inner) or ""
            total += units(text)
            if units(text) > limit:
                problems.append(f"embeds.{index}.{key}.{inner}: {units(text)} > {limit}")
    if total > EMBED_TOTAL:
        problems.append(f"embeds: {total} characters in all > {EMBED_TOTAL}")
    shows_something = content or embeds or files or body.get("components") or body.get("poll")
    if creating and not shows_something:
        problems.append("empty")
    return problems


def body_refusal(body: dict[str, Any], creating: bool, files: int = 0) -> Refusal | None:
    problems = message_problems(body, creating, files)
    if not problems:
        return None
    if problems == ["empty"]:
        return Refusal(400, EMPTY_MESSAGE, "Cannot send an empty message")
    return Refusal(400, INVALID_FORM_BODY, "Invalid Form Body: " + "; ".join(problems))


@dataclass
class InteractionState:
    """One interaction as Discord tracks it: its token's age and how it was answered."""

    token: str
    created: float
    channel_id: int
    user_id: int
    response: int | None = None
    """The callback type it was answered with (4 message, 5 deferred, 6/7 component update, 9 modal)."""
    deferred_ephemeral: bool = False
    thinking: bool = False
    """Deferred with "thinking" and not yet replaced by its first follow-up."""

    def respond(self, now: float, kind: int, flags: int) -> Refusal | None:
        if now - self.created > ACKNOWLEDGE_SECONDS:
            return Refusal(404, UNKNOWN_INTERACTION, "Unknown interaction")
        if self.response is not None:
            return Refusal(400, ALREADY_ACKNOWLEDGED, "Interaction has already been acknowledged.")
        self.response = kind
        self.deferred_ephemeral = bool(flags & EPHEMERAL)
        self.thinking = kind == 5
        return None

    def follow_up(self, now: float) -> Refusal | None:
        """Whether a follow-up (or an edit of the original) may be made now."""
        if now - self.created > TOKEN_SECONDS:
            return Refusal(401, INVALID_WEBHOOK_TOKEN, "Invalid Webhook Token")
        if self.response is None:
            return Refusal(404, UNKNOWN_WEBHOOK, "Unknown Webhook")
        return None

    def follow_up_visibility(self, flags: int) -> bool:
        """Whether the follow-up about to be made is ephemeral: the first one after a deferral
        replaces the "thinking" message and keeps its visibility, the flag notwithstanding."""
        if self.thinking:
            self.thinking = False
            return self.deferred_ephemeral
        return bool(flags & EPHEMERAL)


class Clock:
    """The fake's clock: it moves only when a test moves it, so deadlines are tested without
    waiting and never depend on how loaded the machine is."""

    def __init__(self) -> None:
        self._now = 0.0

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds
