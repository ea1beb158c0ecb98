"""Japanese text handling: sentence and clause boundaries, and shortening on display width."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from awai_engine.backends.offline import OfflineBackend
from awai_engine.text import (
    detect_language,
    display_width,
    shorten,
    split_sentences,
    without_honorific,
)
from bots.terminal.transcript import addressees


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        (
            "おはようございます。受注管理システムの移行、今日から始めます。",
            ["おはようございます。", "受注管理システムの移行、今日から始めます。"],
        ),
        ("本当に？！　はい。", ["本当に？！", "はい。"]),
        ("ｶﾞｰﾄﾞ完了｡次へ｡", ["ｶﾞｰﾄﾞ完了｡", "次へ｡"]),
        (
            "お願いします。Can we have it done before the 10th? Sure!",
            ["お願いします。", "Can we have it done before the 10th?", "Sure!"],
        ),
        ("Done!次は移行です。", ["Done!", "次は移行です。"]),
    ],
)
def test_sentences_end_at_full_width_marks_without_spaces(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences


def test_a_full_stop_inside_quoted_speech_does_not_end_the_outer_sentence() -> None:
    text = "彼は「了解です。明日やります。」と言っていました。次に進みます。"
    assert split_sentences(text) == [
        "彼は「了解です。明日やります。」と言っていました。",
        "次に進みます。",
    ]


def test_links_versions_and_file_names_are_not_cut_at_their_dots_or_question_marks() -> None:
    text = "See https://wiki.example.co.jp/a?b=1 for v1.2 of Node.js. 確認をお願いします。"
    assert split_sentences(text) == [
        "See https://wiki.example.co.jp/a?b=1 for v1.2 of Node.js.",
        "確認をお願いします。",
    ]


@pytest.mark.parametrize(
    ("text", "clauses"),
    [
        (
            "手順書は更新しましたが、まだレビューしていません。",
            ["手順書は更新しましたが", "まだレビューしていません。"],
        ),
        ("時間がかかりますし、費用も高いです。", ["時間がかかりますし", "費用も高いです。"]),
        ("了解です、明日やります。", ["了解です", "明日やります。"]),
    ],
)
def test_a_comma_joining_two_finite_polite_clauses_makes_two_thoughts(
    text: str, clauses: list[str]
) -> None:
    assert split_sentences(text) == clauses


@pytest.mark.parametrize(
    "text",
    [
        "再開できる方式なので、切れたところから続きます。",  # a reason: one claim
        "ただ、新DC側ではまだ復元テストをしていません。",  # a leading conjunction
        "切り戻しになった場合、新DCで受け付けた注文はどうなりますか？",  # a condition
        "はい、１０日までに終わらせます。",
        "です、はい。",  # a clause too short to stand alone
    ],
)
def test_other_commas_keep_the_sentence_whole(text: str) -> None:
    assert split_sentences(text) == [text]


def test_offline_thoughts_of_a_japanese_message_are_its_sentences_and_never_empty() -> None:
    extraction = OfflineBackend().extract_one(
        "リハーサル、お疲れさまでした。ところで、backup の restore test はどうなりましたか？"
        "　go-live の前に、新DCでもちゃんと戻せることを確認しておきたいです。"
    )
    assert [thought.text for thought in extraction.thoughts] == [
        "リハーサル、お疲れさまでした。",
        "ところで、backup の restore test はどうなりましたか？",
        "go-live の前に、新DCでもちゃんと戻せることを確認しておきたいです。",
    ]
    assert OfflineBackend().extract_one("。。。！").thoughts[0].text.strip()


def test_shortening_counts_wide_characters_as_two_columns() -> None:
    text = "検証環境での復元テストは成功しました。ただ、新DC側ではまだ復元テストをしていません。"
    short = shorten(text, 40)
    assert display_width(short) <= 40
    assert short.endswith("…")
    assert short == "検証環境での復元テストは成功しました…"  # cut at the sentence end, not mid-word
    english = shorten("The restore test on the new DC has to pass before go-live.", 40)
    assert english == "The restore test on the new DC has to…"


def test_an_english_cut_after_a_full_stop_ends_in_the_ellipsis_alone() -> None:
    short = shorten("We shipped the build today. Then more words follow here for sure", 33)
    assert short == "We shipped the build today…"


def test_shortening_japanese_without_a_nearby_boundary_cuts_on_width() -> None:
    short = shorten("新DCでのバックアップ復元テストを水曜の夜に入れます", 20)
    assert display_width(short) <= 20
    assert short.startswith("新DCでのバックア")


@given(st.text(alphabet="あア漢字ｱa 、。.!？😀", min_size=0, max_size=80), st.integers(1, 60))
def test_a_shortened_text_never_exceeds_its_width(text: str, width: int) -> None:
    short = shorten(text, width)
    assert display_width(short) <= width
    if display_width(" ".join(text.split())) <= width:
        assert short == " ".join(text.split())


def test_language_of_a_code_switched_japanese_message_is_japanese() -> None:
    assert detect_language("ところで、backup の restore test はどうなりましたか？") == "ja"
    assert detect_language("The restore test has to pass before go-live.") == "en"


@pytest.mark.parametrize(
    ("text", "addressed"),
    [
        ("田中さん、切り戻しの手順を確認してもらえますか？", ("田中",)),
        ("@佐藤さん 告知文を見ました。", ("佐藤",)),
        ("鈴木くん：リハーサルの件です。", ("鈴木",)),
        ("@Ann thanks.", ("Ann",)),
        ("ところで、田中さんの件はどうなりましたか？", ()),  # a name mid-sentence is not an address
    ],
)
def test_japanese_names_are_recognised_as_addressed_despite_honorifics(
    text: str, addressed: tuple[str, ...]
) -> None:
    assert addressees(text, {"田中", "佐藤", "鈴木", "Ann"}) == addressed


def test_an_honorific_is_removed_only_when_a_name_remains() -> None:
    assert without_honorific("佐藤様") == "佐藤"
    assert without_honorific("さん") == "さん"
    assert without_honorific("Sam") == "Sam"


def test_a_cut_that_would_split_a_link_keeps_the_link_whole_and_shortens_the_words_before() -> None:
    text = "Here is the design review doc for all of us: https://figma.example/file/abc123 thanks"
    short = shorten(text, 60)
    assert display_width(short) <= 60
    assert "https://figma.example/file/abc123" in short
    assert short.startswith("Here is the") and short.endswith("…")
    assert shorten("Docs: https://x.example/a", 40) == "Docs: https://x.example/a"


@given(
    st.text(alphabet="あ漢a 、。.", max_size=40),
    st.text(alphabet="abc/.-", min_size=1, max_size=30),
    st.text(alphabet="あa ", max_size=20),
    st.integers(1, 80),
)
def test_a_shortened_text_with_a_link_never_exceeds_its_width(
    before: str, path: str, after: str, width: int
) -> None:
    short = shorten(f"{before} https://x.example/{path} {after}", width)
    assert display_width(short) <= width
