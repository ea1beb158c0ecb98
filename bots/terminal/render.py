"""Rendering a reading in the terminal with rich, and as JSON for scripts."""

from __future__ import annotations

import json
from datetime import datetime

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from awai_engine.text import shorten
from awai_engine.values import MessageRef, Reading
from bots.labels import labels_for, recall_reason

MAX_SHOWN_CHARS = 2000


def reading_json(reading: Reading) -> str:
    """One reading as one line of JSON (the ``--json`` output)."""
    return json.dumps(reading.model_dump(mode="json"), ensure_ascii=False, sort_keys=False)


def _when(ref: MessageRef) -> str:
    if ref.ts < 86_400 * 365:  # a transcript without times: only the order is known
        return f"#{ref.position}"
    return datetime.fromtimestamp(ref.ts).astimezone().strftime("%Y-%m-%d %H:%M %Z")


def _prose(text: str) -> Text:
    """Chat text in a cell: folded at the cell's edge, since Japanese has no spaces to wrap at."""
    return Text(text, overflow="fold")


def _name(ref: MessageRef) -> str:
    return f"[{ref.message_id}] {ref.speaker_name}"


def render_reading(reading: Reading, console: Console) -> None:
    words = labels_for(reading.language)
    context = reading.context
    parts: list[object] = []

    thoughts = Table.grid(padding=(0, 1))
    for thought in context.thoughts:
        thoughts.add_row(Text(f"{thought.index + 1}.", style="bold"), _prose(thought.text))
    parts.append(Panel(thoughts, title=words["thoughts"], title_align="left"))

    flow = context.flow
    flow_table = Table.grid(padding=(0, 1))
    for item in flow.earlier:
        flow_table.add_row(Text(_name(item.message), style="cyan"), _prose(item.summary))
    if flow.previous:
        previous = " / ".join(thought.text for thought in flow.previous.thoughts)
        flow_table.add_row(
            Text(_name(flow.previous.message), style="bold cyan"),
            _prose(f"{words['previous']}: {previous}"),
        )
    title = escape(f"{words['flow']} · {words[flow.line]}")
    body = flow_table if flow.previous else Text(words["nothing_before"], style="dim")
    parts.append(Panel(body, title=title, title_align="left"))

    if context.associations:
        table = Table(expand=True, show_edge=False)
        table.add_column("")
        table.add_column(words["thoughts"], ratio=3)
        table.add_column(words["distance"], justify="right")
        table.add_column(words["similarity"], justify="right")
        table.add_column(words["threshold"], justify="right")
        table.add_column(words["activation"], justify="right")
        for item in context.associations:
            mark = "★" if item.important else ""
            reason = recall_reason(item, words)
            cell = Text.assemble(
                (_name(item.source), "cyan"), " ", item.thought.text, overflow="fold"
            )
            if reason:
                cell.append(f" ({reason})", style="dim italic")
            table.add_row(
                mark,
                cell,
                str(item.distance + 1),
                f"{item.similarity:.2f}",
                "–" if reason else f"{item.threshold:.2f}",
                f"{item.activation:.2f}",
            )
        parts.append(Panel(table, title=words["associations"], title_align="left"))
    else:
        parts.append(
            Panel(
                Text(words["no_associations"], style="dim"),
                title=words["associations"],
                title_align="left",
            )
        )

    if context.schemas:
        schemas = Table.grid(padding=(0, 1))
        for schema in context.schemas:
            stance = words.get(schema.stance, schema.stance)
            reason = f" — {schema.stance_reason}" if schema.stance_reason else ""
            schemas.add_row(
                Text(f"{schema.schema_id} v{schema.version}", style="magenta"),
                _prose(f"{schema.summary} ({schema.size}) · {stance}{reason}"),
            )
        parts.append(Panel(schemas, title=words["schemas"], title_align="left"))

    if reading.interpretation:
        interpretation = reading.interpretation
        lines = [_prose(interpretation.meaning)]
        for link in interpretation.links:
            relation = words.get(link.relation, link.relation)
            lines.append(
                _prose(
                    f"  {link.thought_index + 1}. {relation} [{link.message_id}]: {link.explanation}"
                )
            )
        for bearing in interpretation.schema_bearings:
            stance = words.get(bearing.stance, bearing.stance)
            lines.append(_prose(f"  {bearing.schema_id} · {stance}: {bearing.explanation}"))
        parts.append(Panel(Group(*lines), title=words["interpretation"], title_align="left"))
    elif any(note.startswith("Offline reading") for note in reading.notes):
        # No model configured: the label, in the message's language. A model that failed says
        # why in its own note instead.
        parts.append(Text(words["offline"], style="yellow"))
    for note in (
        *context.notes,
        *(n for n in reading.notes if not n.startswith("Offline reading")),
    ):
        parts.append(Text(f"· {note}", style="yellow"))
    parts.append(Text(words["limits"], style="dim"))

    header = escape(f"{words['reading']}: {_name(context.message)} · {_when(context.message)}")
    text = _prose(shorten(context.text, MAX_SHOWN_CHARS))
    console.print(Panel(Group(text, *parts), title=header, title_align="left"))
