"""The reading's preconceptions box shows what the message relates to, each quote once."""

from __future__ import annotations

from awai_engine.values import (
    Flow,
    Headline,
    Interpretation,
    Reading,
    ReadingContext,
    RecalledSchema,
    SchemaBearing,
    Thought,
)
from bots.layout import layout, plain_text
from tests.factories import message_ref

THOUGHTS = ("接続プールを50にします。", "タイムアウトも見ます。", "よろしくお願いします。")


def _schema(schema_id: str, summary: str, returned_by: tuple[int, ...]) -> RecalledSchema:
    return RecalledSchema(
        schema_id=schema_id,
        version=3,
        summary=summary,
        size=4,
        similarity=0.7,
        as_of=5,
        returned_by=returned_by,
    )


def _reading(*schemas: RecalledSchema, interpretation: Interpretation | None = None) -> Reading:
    context = ReadingContext(
        channel="terminal:local:ops",
        message=message_ref("m9", "田中", 9),
        text="".join(THOUGHTS),
        thoughts=tuple(Thought(index=n, text=text) for n, text in enumerate(THOUGHTS)),
        flow=Flow(line="top-level"),
        schemas=schemas,
    )
    return Reading(
        context=context,
        backend="offline",
        offline=interpretation is None,
        language="ja",
        headline=Headline(connection=None),
        connections=(),
        interpretation=interpretation,
    )


def _box(reading: Reading) -> list[str]:
    section = layout(reading).section("preconceptions")
    return [] if section is None else [plain_text(line) for line in section.lines]


def test_a_preconception_the_message_does_not_come_back_to_is_not_shown() -> None:
    shown = _box(_reading(_schema("a", "接続プール", (0,)), _schema("b", "監視、通知先", ())))
    assert len(shown) == 1 and shown[0].startswith("接続プール")
    assert _box(_reading(_schema("b", "監視、通知先", ()))) == []


def test_a_preconception_the_model_says_the_message_bears_on_is_shown() -> None:
    bearing = SchemaBearing(schema_id="b", stance="opposes", explanation="通知先を変えない")
    interpretation = Interpretation(meaning="s", schema_bearings=(bearing,))
    shown = _box(_reading(_schema("b", "監視、通知先", ()), interpretation=interpretation))
    assert len(shown) == 1 and "通知先を変えない" in shown[0]


def test_the_same_words_of_the_message_are_quoted_once_across_preconceptions() -> None:
    shown = _box(_reading(_schema("a", "接続プール", (0,)), _schema("b", "決済", (0, 1))))
    assert sum(THOUGHTS[0].rstrip("。") in line for line in shown) == 1
    assert THOUGHTS[1].rstrip("。") in shown[1]  # the second quotes what it has of its own
    repeated = _box(_reading(_schema("a", "接続プール", (0,)), _schema("b", "決済", (0,))))
    assert sum(THOUGHTS[0].rstrip("。") in line for line in repeated) == 1
    assert "同じ発言" in repeated[1]
