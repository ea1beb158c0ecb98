"""Look at a reading as people see it: Slack's Block Kit and Discord's embed, as local HTML.

    .venv/bin/python -m bench.preview --message m048 [--lang ja] [--locale ja] [--details] [--out DIR]
    chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
      --disable-component-update --disable-sync --no-first-run --user-data-dir=$(mktemp -d) \
      --window-size=800,1400 --screenshot=DIR/slack.png DIR/slack.html

Japanese needs a CJK font (Debian's ``fonts-noto-cjk``), else it shows as boxes. ``--locale``
is the reader's Slack or Discord language; without it the reading is in the channel's.

Renders the offline reading of a message of a shipped sample with the real renderers
(:func:`bots.slack.blocks.reading_message`, :func:`bots.discord.embeds.reading_embed`) into two
HTML pages styled after each client, so a change to a reading can be looked at, not only
asserted. It approximates the clients (mrkdwn, Markdown, date tokens); it is no Block Kit Builder.
"""

from __future__ import annotations

import argparse
import html
import re
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from awai_engine.samples import SAMPLES
from awai_engine.settings import Settings
from awai_engine.values import Reading
from awai_engine.visibility import EVERYTHING
from bots.discord.embeds import reading_embed
from bots.discord.keys import channel_key
from bots.language import reader_language
from bots.runtime import open_runtime
from bots.slack.blocks import ReadingTarget, reading_message
from bots.terminal.commands.common import load_and_ingest
from bots.terminal.commands.demo import settings_for

_SLACK_LINK = re.compile(r"<(https?://[^|>]+)\|([^>]+)>")
_SLACK_DATE = re.compile(r"<!date\^\d+\^[^|]*\|([^>]+)>")
_USER = re.compile(r"<@(\w+)>")
# Slack formats emphasis only when its marks stand at word boundaries: after the line's start, a
# space, a zero-width space or an opening bracket, and before a space or punctuation.
_OPENS, _CLOSES = r"(?:(?<=^)|(?<=[\s\u200b(「]))", r"(?=$|[\s\u200b.,:;!?)」、。])"
_SLACK_BOLD = re.compile(_OPENS + r"\*([^*\n]+)\*" + _CLOSES)
_SLACK_ITALIC = re.compile(_OPENS + r"_([^_\n]+)_" + _CLOSES)
_MD_LINK = re.compile(r"\[([^\]]+)\]\((https?://[^)]+)\)")
_DISCORD_TIME = re.compile(r"&lt;t:(\d+):\w&gt;")
_MESSAGE_ID_FIELDS = frozenset({"message_id", "thread_root"})
_FIRST_SNOWFLAKE = 1_100_000_000_000_000_000

PAGE = """<!doctype html><meta charset="utf-8"><style>
body {{ font: 15px/1.46 -apple-system, 'Segoe UI', 'Noto Sans', 'Noto Sans CJK JP', sans-serif;
  margin: 0; padding: 24px; width: 720px; background: {background}; color: {colour}; }}
{style}
</style><body>{body}</body>"""

SLACK_STYLE = """
.msg { border-left: 4px solid #1264a3; padding: 4px 12px; background: #fff; }
.header { font-size: 18px; font-weight: 900; margin: 8px 0; }
.section { margin: 6px 0; white-space: pre-wrap; }
.context { color: #616061; font-size: 12px; margin: 4px 0; white-space: pre-wrap; }
blockquote { border-left: 4px solid #ddd; margin: 2px 0; padding-left: 8px; color: #1d1c1d; }
code { font-family: monospace; background: #f2f2f2; color: #c01343; white-space: pre-wrap; }
a { color: #1264a3; text-decoration: none; }
.button { display: inline-block; border: 1px solid #bbb; border-radius: 4px; padding: 4px 12px;
  margin-right: 8px; font-weight: 700; font-size: 13px; }
.primary { background: #007a5a; color: #fff; border-color: #007a5a; }
.ephemeral { color: #616061; font-size: 12px; margin-bottom: 6px; }
"""

DISCORD_STYLE = """
.embed { background: #2b2d31; border-left: 4px solid #5865f2; border-radius: 4px; padding: 12px 16px; }
.title { font-weight: 700; color: #00a8fc; margin-bottom: 8px; }
.description, .value { white-space: pre-wrap; font-size: 14px; }
.name { font-weight: 700; font-size: 14px; margin-top: 10px; }
.footer { color: #b5bac1; font-size: 12px; margin-top: 12px; }
blockquote { border-left: 4px solid #4e5058; margin: 2px 0; padding-left: 8px; }
a { color: #00a8fc; text-decoration: none; }
.ephemeral { color: #b5bac1; font-size: 12px; margin-bottom: 6px; }
"""


def slack_html(blocks: list[dict]) -> str:
    """Block Kit blocks as HTML, as the Slack client shows a message."""
    parts = ['<div class="ephemeral">Only visible to you</div><div class="msg">']
    for block in blocks:
        kind = block["type"]
        if kind == "header":
            parts.append(f'<div class="header">{html.escape(block["text"]["text"])}</div>')
        elif kind == "section":
            parts.append(f'<div class="section">{_mrkdwn(block["text"]["text"])}</div>')
        elif kind == "context":
            text = " ".join(element["text"] for element in block["elements"])
            parts.append(f'<div class="context">{_mrkdwn(text)}</div>')
        elif kind == "actions":
            buttons = "".join(
                f'<span class="button {element.get("style", "")}">'
                f"{html.escape(element['text']['text'])}</span>"
                for element in block["elements"]
            )
            parts.append(f"<div>{buttons}</div>")
        elif kind == "divider":
            parts.append("<hr>")
    parts.append("</div>")
    return "".join(parts)


def _mrkdwn(text: str) -> str:
    """Slack's mrkdwn as HTML; a quote ends its own line (see :func:`_markdown`)."""
    lines = []
    for line in text.split("\n"):
        quoted = line.startswith(("&gt;", ">"))
        line = re.sub(r"^(?:&gt;|>) ?", "", line) if quoted else line
        line = _SLACK_DATE.sub(r"\1", line)
        line = _SLACK_LINK.sub(r'<a href="\1">\2</a>', line)
        line = _USER.sub(r'<a href="#">@\1</a>', line)
        line = _SLACK_BOLD.sub(r"<b>\1</b>", line)
        line = _SLACK_ITALIC.sub(r"<i>\1</i>", line)
        line = re.sub(r"`([^`]+)`", r"<code>\1</code>", line)
        lines.append(f"<blockquote>{line}</blockquote>" if quoted else f"{line}\n")
    return "".join(lines).removesuffix("\n")


def discord_html(embed: Mapping[str, Any]) -> str:
    """An embed as HTML, as the Discord client shows it (dark theme)."""
    parts = ['<div class="ephemeral">Only you can see this</div><div class="embed">']
    parts.append(f'<div class="title">{html.escape(embed.get("title", ""))}</div>')
    parts.append(f'<div class="description">{_markdown(embed.get("description", ""))}</div>')
    for field in embed.get("fields", []):
        parts.append(f'<div class="name">{_markdown(field["name"])}</div>')
        parts.append(f'<div class="value">{_markdown(field["value"])}</div>')
    parts.append(f'<div class="footer">{html.escape(embed["footer"]["text"])}</div></div>')
    return "".join(parts)


def _markdown(text: str) -> str:
    """Discord's Markdown as HTML. A quote is a block that ends its own line, as Discord's
    blockquote rule takes the line break after it: the break is not shown again as a blank."""
    lines = []
    for line in html.escape(text, quote=False).split("\n"):
        quoted = line.startswith("&gt; ")
        line = line[5:] if quoted else line
        line = _DISCORD_TIME.sub(lambda m: time.strftime("%d/%m/%Y", time.gmtime(int(m[1]))), line)
        line = _MD_LINK.sub(r'<a href="\2">\1</a>', line)
        line = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", line)
        line = re.sub(r"(?<![\w*])\*([^*\n]+)\*(?![\w*])", r"<i>\1</i>", line)
        line = line.replace("\\", "")
        lines.append(f"<blockquote>{line}</blockquote>" if quoted else f"{line}\n")
    return "".join(lines).removesuffix("\n")


def discord_shaped(reading: Reading) -> Reading:
    """The reading as if its channel were a Discord channel: a Discord key, and every message id
    and thread root a snowflake (the sample's ids are words such as ``m012``, and a Discord jump
    link into a thread names the thread by its id). The same sample id always gets the same
    snowflake, so a reply still points into its thread."""
    snowflakes: dict[str, str] = {}

    def snowflake(message_id: str) -> str:
        return snowflakes.setdefault(message_id, str(_FIRST_SNOWFLAKE + len(snowflakes)))

    def shaped(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                key: snowflake(item)
                if key in _MESSAGE_ID_FIELDS and isinstance(item, str)
                else shaped(item)
                for key, item in value.items()
            }
        if isinstance(value, list | tuple):
            return [shaped(item) for item in value]
        return value

    dumped = shaped(reading.model_dump())
    dumped["context"]["channel"] = channel_key(1, 2)
    return Reading.model_validate(dumped)


def pages(reading: Reading, details: bool, locale: str | None = None) -> dict[str, str]:
    """The two HTML pages of ``reading`` for a reader whose Slack or Discord is set to
    ``locale`` (None: a reader whose platform says nothing): file name → page."""
    language = reader_language(reading, locale)
    slack = reading_message(
        reading,
        lambda message_id, _: f"https://example.slack.com/archives/C1/p{message_id}",
        details=details,
        language=language,
        target=ReadingTarget("C1", reading.context.message.message_id),
    )
    embed = reading_embed(discord_shaped(reading), language, details=details).to_dict()
    return {
        "slack.html": PAGE.format(
            background="#f8f8f8", colour="#1d1c1d", style=SLACK_STYLE, body=slack_html(slack.blocks)
        ),
        "discord.html": PAGE.format(
            background="#313338", colour="#dbdee1", style=DISCORD_STYLE, body=discord_html(embed)
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", choices=sorted(SAMPLES), default="en")
    parser.add_argument("--message", help="A message id of the sample (default: its featured one).")
    parser.add_argument("--details", action="store_true", help="The details view.")
    parser.add_argument(
        "--locale", help="The reader's Slack or Discord language (default: none said)."
    )
    parser.add_argument("--out", type=Path, default=Path("preview"))
    args = parser.parse_args()
    sample = SAMPLES[args.lang]
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as data:
        runtime = open_runtime(settings_for(sample, Settings(data_dir=Path(data))))
        try:
            ingested = load_and_ingest(runtime, sample.path, sample.channel, quiet=True)
            message_id = args.message or sample.featured_message
            reading = runtime.engine.read(ingested.transcript.channel, message_id, EVERYTHING)
        finally:
            runtime.close()
    for name, page in pages(reading, args.details, args.locale).items():
        (args.out / name).write_text(page, encoding="utf-8")
        print(args.out / name)


if __name__ == "__main__":
    main()
