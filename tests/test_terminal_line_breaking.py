"""Japanese lines in the terminal break where Japanese typesetting allows (禁則処理)."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st
from rich._wrap import divide_line
from rich.cells import cell_len
from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from bots.terminal.line_breaking import NO_LINE_END, NO_LINE_START, WrappedText, break_offsets
from bots.terminal.say import tell

JAPANESE = (
    "「一時的にご利用いただけません」の後ろに、再開予定時刻を入れたほうが親切だと思います。"
    "切り替えの３日前に300秒まで下げます。ちょっと待って、ログを見ます！（念のため）"
    "AWAIが読めるのは、このチャンネルでこの発言より前に話された言葉だけです。"
)
ENGLISH = "I think that works, as long as Tuesday's test covers refunds too (and the retries)."


def _lines(text: str, offsets: list[int]) -> list[str]:
    return [text[a:b] for a, b in zip([0, *offsets], [*offsets, len(text)], strict=True)]


def test_no_japanese_line_starts_on_a_closing_mark_or_ends_on_an_opening_one() -> None:
    for width in range(6, 61):
        lines = _lines(JAPANESE, break_offsets(JAPANESE, width))
        assert all(cell_len(line) <= width for line in lines), width
        assert all(line[0] not in NO_LINE_START for line in lines[1:]), (width, lines)
        assert all(line[-1] not in NO_LINE_END for line in lines[:-1]), (width, lines)


def test_the_rule_is_needed_rich_alone_breaks_before_full_stops() -> None:
    starts = [
        line[0]
        for width in range(6, 61)
        for line in _lines(JAPANESE, divide_line(JAPANESE, width))[1:]
    ]
    assert any(start in NO_LINE_START for start in starts)


def test_english_breaks_at_spaces_exactly_as_rich_does() -> None:
    for width in range(6, 61):
        assert break_offsets(ENGLISH, width) == divide_line(ENGLISH, width), width


def test_a_panel_of_japanese_keeps_every_character_in_order_within_its_border() -> None:
    out = io.StringIO()
    console = Console(file=out, width=30, color_system=None, legacy_windows=False)
    console.print(Panel(WrappedText(JAPANESE, overflow="fold")))
    inner = [line[2:-2].rstrip() for line in out.getvalue().splitlines()[1:-1]]
    assert all(cell_len(line) <= 26 for line in inner)
    assert "".join(inner) == JAPANESE
    assert all(line[:1] not in NO_LINE_START for line in inner)


def test_japanese_after_a_label_fills_the_labels_line_instead_of_leaving_it_alone() -> None:
    line = "[m008] 佐藤: ネットワーク構成について。新DCとの専用線は４月１日に開通予定です。"

    first, *rest = _lines(line, break_offsets(line, 40))

    assert first.startswith("[m008] 佐藤: ネットワーク") and cell_len(first) >= 38
    assert "".join([first, *rest]) == line


def test_a_url_inside_japanese_moves_whole_to_the_next_line() -> None:
    line = "資料はこちらです：https://wiki.example.co.jp/migration/plan を見てください。"

    lines = _lines(line, break_offsets(line, 50))

    assert lines[0] == "資料はこちらです："  # the URL (41 cells) did not fit after it
    assert any(part.startswith("https://wiki.example.co.jp/migration/plan") for part in lines)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text("abcdefghij,.'()", min_size=1, max_size=12), min_size=1, max_size=30),
    st.integers(12, 60),
)
def test_any_english_whose_words_fit_a_line_breaks_as_rich_does(
    words: list[str], width: int
) -> None:
    # (A word longer than the line is folded at the width; rich also starts the next line on the
    # space after such a word, which these breaks do not.)
    text = " ".join(words)

    assert break_offsets(text, width) == divide_line(text, width)


def test_a_break_pulled_back_may_land_on_a_space_before_japanese() -> None:
    line = "サンプル: データセンター移行を計画する。m034 で、序盤に話した話題が戻ります。"
    width = cell_len("サンプル: データセンター移行を計画する。m034 で")

    lines = _lines(line, break_offsets(line, width))

    assert lines[0].endswith("m034 ") and lines[1].startswith("で、序盤")


def test_a_joined_emoji_is_never_torn_across_lines() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    line = f"ok, see {family} and {family} here"

    for width in range(8, 30):
        lines = _lines(line, break_offsets(line, width))
        assert all(not part.endswith("\u200d") for part in lines), (width, lines)


def test_a_message_on_a_terminal_breaks_between_words_and_leaves_a_command_whole() -> None:
    console = Console(record=True, width=40, force_terminal=True, color_system=None)
    command = "    jq -c '.messages[] | {id, speaker}' day.json > day-lines.jsonl"
    said = "line 3 of the transcript was refused because its speaker is empty. Convert it with:"
    tell(console, Text(f"{said}\n{command}"))
    lines = console.export_text().splitlines()
    assert all(len(line) <= 40 for line in lines[:-1])
    assert " ".join(lines[:-1]).split() == said.split()  # no word split across lines
    assert lines[-1] == command


def test_a_message_piped_keeps_each_line_whole() -> None:
    console = Console(record=True, width=40, force_terminal=False, color_system=None)
    said = "line 3 of the transcript was refused because its speaker is empty."
    tell(console, Text(said))
    assert console.export_text().splitlines() == [said]
