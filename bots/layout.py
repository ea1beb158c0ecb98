"""One reading, laid out once for every surface: what it says, in which order, in which words.

The terminal, Slack and Discord used to walk a :class:`Reading` each by hand and drifted apart.
Here a reading becomes a :class:`ReadingLayout` — a title, the message, and ordered sections of
lines made of neutral pieces (plain text, emphasis, a link to an earlier message, a moment) — the
way errbot's ``Card`` is one message every backend renders. Each renderer only formats pieces:
rich markup, Slack mrkdwn, Discord Markdown. The order is the reading's point: first what the
message does to what came before it, then the earlier messages it connects to, then the speaker's
preconceptions, then the flow just before it. Numbers (closeness in meaning and its bar) appear
only in the details view, and there in words a person follows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, Protocol

from awai_engine.text import as_said, shorten
from awai_engine.values import Association, Connection, MessageRef, Reading, ReadingContext
from bots.labels import counted, labels_for
from bots.language import prevailing_language
from bots.note_words import note_text

UNTIMED = 86_400 * 365
"""Times below a year after the epoch mean a transcript without times: only the order is known."""

QUOTED_EARLIER_CHARS = 160
"""How much of an earlier message a headline or a connection quotes."""

QUOTED_THOUGHT_CHARS = 60
"""How much of the message's own thought a preconception's line quotes (the message is shown
whole just above)."""

_PLACEHOLDER = re.compile(r"(\{who\}|\{what\})")
_CODE_BLOCK = re.compile(r"```(?:[\w+#.-]*\n)?(.*?)(?:```|\Z)", re.DOTALL)
"""A fenced code block: its language tag, then its code up to the closing fence (or the end)."""


@dataclass(frozen=True)
class Plain:
    text: str


@dataclass(frozen=True)
class Strong:
    text: str


@dataclass(frozen=True)
class Quiet:
    """Secondary words (a reason, a label saying the relation came from cues)."""

    text: str


@dataclass(frozen=True)
class Link:
    """An earlier message, named by ``text`` (usually its speaker), linked where the surface can."""

    ref: MessageRef
    text: str


@dataclass(frozen=True)
class Moment:
    """When a message was said; each surface shows it in the reader's own time zone if it can."""

    ts: float

    def utc(self) -> datetime | None:
        """The moment as a date, or None for a time no calendar holds (a transcript's bad ts)."""
        return moment_in_utc(self.ts)


def moment_in_utc(ts: float) -> datetime | None:
    """``ts`` as a UTC datetime; None below a year after the epoch (a transcript without times,
    where only the order is known) or beyond what a calendar holds."""
    if not ts >= UNTIMED:
        return None
    try:
        return datetime.fromtimestamp(ts, UTC)
    except (OverflowError, OSError, ValueError):
        return None


Piece = Plain | Strong | Quiet | Link | Moment

FENCE = re.compile(r"^\s*```[\w+#.-]*\s*$")
"""A line that is only a code fence, with or without a language tag (```kotlin): each surface
shows the lines between two as code, not the fences."""


@dataclass(frozen=True)
class Line:
    pieces: tuple[Piece, ...]
    quote: str | None = None
    """Words of an earlier message shown under the line, as a quotation."""


SectionKind = Literal[
    "headline", "meaning", "connections", "preconceptions", "flow", "thoughts", "details", "notes"
]


@dataclass(frozen=True)
class Section:
    kind: SectionKind
    title: str | None
    lines: tuple[Line, ...]


@dataclass(frozen=True)
class ReadingLayout:
    """A reading as every surface shows it, in order."""

    title: str
    message: MessageRef
    channel: str
    text: str
    line: str
    """"thread" in the reader's language for a message of a thread; empty in the channel's own
    flow, which needs no saying (a bare "channel" read as a missing channel name)."""
    sections: tuple[Section, ...]
    footer: str
    language: str
    plain_summary: str
    """One sentence without markup: notifications, screen readers, Slack's ``text``."""
    words: dict[str, str] = field(repr=False, default_factory=dict)
    written_by: str = ""
    """Which language model wrote the reading, in words ("Read by the language model …"); empty
    offline, where the headline's note already says how it was read."""

    def section(self, kind: SectionKind) -> Section | None:
        return next((section for section in self.sections if section.kind == kind), None)


def layout(reading: Reading, language: str | None = None, details: bool = False) -> ReadingLayout:
    """The layout of ``reading`` in ``language`` (the reader's; default the language its
    channel is talking in, :func:`bots.language.prevailing_language`).

    ``details`` adds the numbers behind each connection, the message's thoughts and the cost.
    """
    language = language or prevailing_language(reading)
    words = labels_for(language)
    context = reading.context
    sections = [
        _headline(reading, words),
        _meaning(reading, words),
        _connections(reading, words),
        _preconceptions(reading, words),
        _flow(context, words),
    ]
    if details:
        sections += [_thoughts(context, words), _details(reading, words)]
    sections.append(_notes(reading, words))
    return ReadingLayout(
        title=f"{words['reading']}: {context.message.speaker_name}",
        message=context.message,
        channel=context.channel,
        text=context.text,
        line=words["thread"] if context.flow.line == "thread" else "",
        sections=tuple(section for section in sections if section.lines),
        footer=words["limits"],
        written_by="" if reading.offline else _model_words(reading, words),
        language=language,
        plain_summary=_plain_summary(reading, words),
        words=words,
    )


def headline_line(connection: Connection, words: dict[str, str]) -> Line:
    """ "Returns to Dev: “background sync is draining …” · 45 messages earlier, <when>"."""
    phrase = words[f"relation:{connection.relation}"]
    what = quoted(connection.earlier_text, QUOTED_EARLIER_CHARS, words)
    pieces: list[Piece] = []
    for chunk in _PLACEHOLDER.split(phrase):
        if chunk == "{who}":
            pieces.append(Link(connection.message, connection.message.speaker_name))
        elif chunk == "{what}":
            pieces.append(Plain(what))
        elif chunk:
            pieces.append(Plain(chunk))
    if connection.condition:
        condition = shorten(connection.condition, QUOTED_EARLIER_CHARS)
        pieces.append(Plain(words["on_condition"].format(condition=condition)))
    pieces += [Quiet(" · "), *_distance(connection, words)]
    return Line(_merged(pieces))


def quoted(text: str, width: int, words: dict[str, str]) -> str:
    """An earlier message's words as a one-line quotation of at most ``width`` columns."""
    return shorten(code_as_a_line(text, words), width)


def code_as_a_line(text: str, words: dict[str, str]) -> str:
    """``text`` with each fenced code block as "(code) its first line …": a quotation runs on
    one line, where fences and the code's layout would read as noise (```kotlin val …```)."""

    def line(block: re.Match[str]) -> str:
        lines = [part.strip() for part in block.group(1).split("\n") if part.strip()]
        shown = [words["code"], *lines[:1], *(["…"] if len(lines) > 1 else [])]
        return f"\x00{' '.join(shown)}\x00"

    return re.sub(r"\s*\x00\s*", " ", _CODE_BLOCK.sub(line, text)).strip()


def _headline(reading: Reading, words: dict[str, str]) -> Section:
    connection = reading.headline.connection
    if connection is None:
        # The list below must not be contradicted: with connections, none is *clearly* it.
        line = Line(
            (Plain(words["no_clear_target" if reading.connections else "nothing_connects"]),)
        )
    else:
        line = headline_line(connection, words)
    if reading.offline_reason is not None:  # said once, here: why offline, and what that means
        source = words[f"offline:{reading.offline_reason}"]
    elif reading.headline.decided_by == "model":
        source = words["from_model"]
    else:
        source = words["from_cues"]
    lines = [line]
    if connection is not None or reading.interpretation is None:
        lines.append(Line((Quiet(source),)))
    return Section("headline", None, tuple(lines))


def _meaning(reading: Reading, words: dict[str, str]) -> Section:
    if reading.interpretation is None:
        return Section("meaning", None, ())
    return Section(
        "meaning", words["interpretation"], (Line((Plain(reading.interpretation.meaning),)),)
    )


def _connections(reading: Reading, words: dict[str, str]) -> Section:
    headline = reading.headline.connection
    listed = [
        connection
        for connection in reading.connections
        # the headline already says it, with the same words
        if headline is None or connection.message.message_id != headline.message.message_id
    ]
    lines = []
    for connection in listed[:LISTED_MOST]:
        pieces: list[Piece] = []
        verbed = connection.relation not in _UNVERBED_IN_THE_LIST
        if verbed:
            verb = _capitalised(words[f"relation-short:{connection.relation}"])
            pieces += [Strong(verb), Plain(" ")]
        who = connection.message.speaker_name
        if connection.relation == "continues":  # the speaker's own: "Continues Aiko" misreads
            who = words["own_message"].format(who=who)
        pieces += [Link(connection.message, who), Quiet(" · "), *_distance(connection, words)]
        if connection.origin not in _ORIGINS_SAID_ALREADY and not (
            connection.origin == "own" and connection.relation == "continues"
        ):
            pieces.append(Quiet(f" · {words[f'reason:{connection.origin}']}"))
        if connection.condition:
            condition = shorten(connection.condition, QUOTED_EARLIER_CHARS)
            pieces.append(Plain(words["on_condition"].format(condition=condition)))
        quote = quoted(connection.earlier_text, QUOTED_EARLIER_CHARS, words)
        lines.append(Line(tuple(pieces), quote=quote))
        if connection.explanation:
            lines.append(Line((Plain(connection.explanation),)))
    if len(listed) > LISTED_MOST:
        lines.append(Line((Quiet(words["more_connections"].format(n=len(listed) - LISTED_MOST)),)))
    return Section("connections", words["associations"], tuple(lines))


LISTED_MOST = 4
"""Connections listed under the headline, best first (the scorer's order): with their quotes,
four fill a Discord field's 1,024 characters and a phone screen; more read as a transcript."""


_UNVERBED_IN_THE_LIST = frozenset({"relates-to", "replies-to", "answers"})
"""Relations a listed connection shows without their verb: a plain connection needs none on each
line, and what the message replies to or answers is the headline's to say — a list saying
"Replies to Suzuki" under a headline naming another message (or none) would contradict it."""

_BEARS = frozenset({"supports", "opposes"})
"""Stances by which a language model says a preconception bears on the message: one the message
does not come back to is shown only then."""

_ORIGINS_SAID_ALREADY = frozenset({"meaning", "flow"})
"""Origins a listed connection leaves unsaid: "close in meaning" is what every connection is,
and "just before" already says "flow"."""


def _preconceptions(reading: Reading, words: dict[str, str]) -> Section:
    context = reading.context
    bearings = {}
    if reading.interpretation is not None:
        bearings = {b.schema_id: b for b in reading.interpretation.schema_bearings}
    important = any(item.important for item in context.associations)
    lines = []
    quoted_thoughts: set[int] = set()
    for schema in context.schemas:
        bearing = bearings.get(schema.schema_id)
        if not schema.returned_by and (bearing is None or bearing.stance not in _BEARS):
            continue  # recalled, but the message neither comes back to it nor bears on it
        stance = words.get(schema.stance, schema.stance)
        why = schema.stance_reason
        if bearing is not None:
            stance, why = words.get(bearing.stance, bearing.stance), bearing.explanation
        pieces: list[Piece] = [
            Strong(schema.summary),
            Quiet(f" · {words['thoughts_count'].format(n=schema.size)} · "),
            Plain(stance),
        ]
        if why:
            pieces.append(Plain(f" — {why}"))
        if schema.returned_by:
            said = _returns_to_it(schema.returned_by, context, words, quoted_thoughts)
            pieces.append(Quiet(" · " + said))
            quoted_thoughts.update(schema.returned_by)
        lines.append(Line(tuple(pieces)))
    if lines and important:
        lines.append(Line((Quiet(f"★ {words['important']}"),)))
    return Section("preconceptions", words["schemas"], tuple(lines))


def _returns_to_it(
    returned_by: tuple[int, ...],
    context: ReadingContext,
    words: dict[str, str],
    quoted_already: set[int],
) -> str:
    """Where the message comes back to a preconception, in its own words: the whole message
    when every thought of it does, else the first thought that does, quoted (a person never
    saw the message numbered into thoughts). A thought another preconception's line quoted
    already is not quoted again: the same words twice read as a glitch."""
    if len(returned_by) >= len(context.thoughts):
        return words["returns_to_it"]
    fresh = [index for index in returned_by if index not in quoted_already]
    if not fresh:
        return words["returns_to_it_too"]
    thought = next((t for t in context.thoughts if t.index == fresh[0]), None)
    if thought is None:
        return words["returns_to_it"]
    return words["returns_to_it_in"].format(what=quoted(thought.text, QUOTED_THOUGHT_CHARS, words))


def _flow(context: ReadingContext, words: dict[str, str]) -> Section:
    flow = context.flow
    # "Just before" is the channel's flow unless said otherwise: only a thread is named.
    title = f"{words['flow']} · {words['thread']}" if flow.line == "thread" else words["flow"]
    lines = [
        Line(
            (
                Link(item.message, item.message.speaker_name),
                Plain(f": {code_as_a_line(item.summary, words)}"),
            )
        )
        for item in flow.earlier
    ]
    if flow.previous is not None:
        said = code_as_a_line(as_said([thought.text for thought in flow.previous.thoughts]), words)
        lines.append(
            Line(
                (
                    Link(flow.previous.message, flow.previous.message.speaker_name),
                    Plain(f": {said}"),
                )
            )
        )
    if not lines:
        lines = [Line((Quiet(words["nothing_before"]),))]
    return Section("flow", title, tuple(lines))


def _thoughts(context: ReadingContext, words: dict[str, str]) -> Section:
    return Section(
        "thoughts",
        words["thoughts"],
        tuple(
            Line((Plain(f"{t.index + 1}. {' '.join(code_as_a_line(t.text, words).split())}"),))
            for t in context.thoughts
        ),
    )


def _details(reading: Reading, words: dict[str, str]) -> Section:
    """The numbers behind every recalled thought, and what read it, each said in words a person
    follows: how far back, why recalled, how close in meaning against the bar it had, how fresh
    in mind, how often said."""
    lines = []
    for item in reading.context.associations:
        mark = "★ " if item.important else ""
        lines.append(
            Line(
                (
                    Plain(mark),
                    Link(item.source, item.source.speaker_name),
                    Quiet(" · " + " · ".join(_recall_details(item, words))),
                ),
                quote=quoted(item.thought.text, QUOTED_EARLIER_CHARS, words),
            )
        )
    for schema in reading.context.schemas:
        closeness = words["detail:schema"].format(similarity=f"{schema.similarity:.2f}")
        lines.append(Line((Plain(schema.summary), Quiet(f" · {closeness}"))))
    lines.append(Line((Quiet(_read_by(reading, words)),)))
    return Section("details", words["details"], tuple(lines))


FRESH_ACTIVATION = 0.0
"""ACT-R activation (ln Σ age^−d) at or above which a thought is fresh in mind: 0 is one said
once just before, or said again and again a little further back."""

HELD_ACTIVATION = -1.5
"""Activation at or above which a thought is still in mind: −1.5 is one said once about twenty
messages back (decay 0.5, ages in messages); below, it is fading."""


def _recall_details(item: Association, words: dict[str, str]) -> list[str]:
    """One recalled thought's numbers as phrases, in the order a reader asks about them."""
    similarity, threshold = f"{item.similarity:.2f}", f"{item.threshold:.2f}"
    if item.distance == 0:
        where = words["just_before"]
    else:
        where = words["messages_earlier"].format(n=item.distance + 1)
    if item.reason == "meaning":
        why = [words["detail:close"].format(similarity=similarity, threshold=threshold)]
    else:  # recalled otherwise: its closeness is shown against the bar it did not need
        closeness = words["detail:closeness"].format(similarity=similarity, threshold=threshold)
        why = [words[f"reason:{item.reason}"], closeness]
    if item.activation >= FRESH_ACTIVATION:
        freshness = words["detail:fresh"]
    elif item.activation >= HELD_ACTIVATION:
        freshness = words["detail:held"]
    else:
        freshness = words["detail:fading"]
    said = counted(words, "detail:said", item.occurrences).format(n=item.occurrences)
    return [where, *why, freshness, said]


def _read_by(reading: Reading, words: dict[str, str]) -> str:
    """What read the message — offline cues or which language model — and what that cost."""
    read_by = words["read_by:offline"] if reading.offline else _model_words(reading, words)
    if reading.usage is not None:
        usage = reading.usage
        read_by += " · " + words["tokens"].format(
            sent=usage.input_tokens, written=usage.output_tokens
        )
    return read_by


def _model_words(reading: Reading, words: dict[str, str]) -> str:
    """The model that wrote a reading, in words: its name without the backend's bookkeeping
    ("anthropic:claude-…" reads "Read by the language model claude-…")."""
    return words["read_by:model"].format(model=reading.backend.partition(":")[2] or reading.backend)


def _notes(reading: Reading, words: dict[str, str]) -> Section:
    """The notes: what was cut, why the model gave no reading, which thoughts are offline
    fallbacks (why the reading is offline is said once, under its headline). Notes carry no
    status codes or setting names; operators read those in the log."""
    lines = [
        Line((Quiet(note_text(note, words, reading.context.thoughts)),))
        for note in (*reading.context.notes, *reading.notes)
    ]
    return Section("notes", None, tuple(lines))


def _distance(connection: Connection, words: dict[str, str]) -> list[Piece]:
    if connection.distance == 0:
        return [Quiet(words["just_before"])]
    earlier = words["messages_earlier"].format(n=connection.distance + 1)
    if moment_in_utc(connection.message.ts) is None:  # a transcript without times: no gap left
        return [Quiet(earlier)]
    return [Quiet(earlier + words["moment_gap"]), Moment(connection.message.ts)]


_EDGES = re.compile(r"^([\s·,:;、・]*)(.*?)([\s·,:;、・]*)$", re.DOTALL)


class Marks(Protocol):
    """How a chat surface writes a line's pieces in its markup (Slack's mrkdwn, Discord's
    Markdown): its emphasis marks and escape, and how it links and dates."""

    strong: str
    quiet: str
    boundary: str
    """What stands between an emphasis mark and a word character beside it, where the markup
    formats marks only at word boundaries (Slack); empty where it needs nothing (Discord)."""

    def escape(self, text: str) -> str: ...

    def link(self, link: Link) -> str: ...

    def moment(self, moment: Moment) -> str: ...


def marked(pieces: Iterable[Piece], marks: Marks, bold: bool = False) -> str:
    """A line's pieces in a surface's markup; ``bold`` sets plain words strong too (the
    headline). The walk is one for every chat surface; only ``marks`` differ."""
    out = []
    boundary = marks.boundary
    for piece in pieces:
        match piece:
            case Strong(text):
                out.append(wrapped(text, marks.strong, marks.escape, boundary))
            case Quiet(text):
                out.append(wrapped(text, marks.quiet, marks.escape, boundary))
            case Link():
                out.append(marks.link(piece))
            case Moment():
                out.append(marks.moment(piece))
            case Plain(text) if bold:
                out.append(wrapped(text, marks.strong, marks.escape, boundary))
            case Plain(text):
                out.append(marks.escape(text))
    return unbounded("".join(out), boundary)


def wrapped(text: str, mark: str, escape: Callable[[str], str], boundary: str = "") -> str:
    """``text`` between a surface's emphasis ``mark``s, each part escaped by ``escape``, with
    its edge spaces and separators left outside: Slack's mrkdwn and Discord's Markdown format
    ``_words_`` only when the marks touch words. ``boundary`` goes outside each mark (see
    :attr:`Marks.boundary`); :func:`unbounded` takes it away again where a space already is."""
    lead, core, tail = _EDGES.match(text).groups()  # type: ignore[union-attr]
    if not core:
        return escape(text)
    return f"{escape(lead)}{boundary}{mark}{escape(core)}{mark}{boundary}{escape(tail)}"


def unbounded(text: str, boundary: str) -> str:
    """``text`` without the ``boundary`` marks that stand next to a space or a line's edge,
    where the emphasis mark has its word boundary already."""
    if not boundary:
        return text
    mark = re.escape(boundary)
    return re.sub(rf"(?:(?<=\s)|^){mark}|{mark}(?=\s|$)", "", text, flags=re.MULTILINE)


def _merged(pieces: list[Piece]) -> tuple[Piece, ...]:
    """Adjacent plain pieces as one, so a surface formats a phrase once, not word by word."""
    merged: list[Piece] = []
    for piece in pieces:
        if isinstance(piece, Plain) and merged and isinstance(merged[-1], Plain):
            merged[-1] = Plain(merged[-1].text + piece.text)
        else:
            merged.append(piece)
    return tuple(merged)


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _plain_summary(reading: Reading, words: dict[str, str]) -> str:
    name = reading.context.message.speaker_name
    connection = reading.headline.connection
    if reading.interpretation is not None:
        body = reading.interpretation.meaning
    elif connection is not None:
        body = plain_text(headline_line(connection, words))
    else:
        body = words["no_clear_target" if reading.connections else "nothing_connects"]
    return f"{words['reading']} · {name}: {body}"


def plain_text(line: Line) -> str:
    """A line without markup or links, a moment as its UTC date (what a notification or a
    client that cannot show a date token reads)."""
    return "".join(_plain(piece) for piece in line.pieces)


def _plain(piece: Piece) -> str:
    if isinstance(piece, Moment):
        when = piece.utc()
        return "" if when is None else f"{when:%Y-%m-%d}"
    return piece.text
