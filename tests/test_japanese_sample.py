"""The Japanese sample read with the multilingual encoder, against MiniLM on the same messages.

The sample (awai_engine/samples/japanese_team.jsonl) has a topic that returns after a long gap
(the backup restore test: m002–m005, back at m034–m037, partly in English), a speaker who keeps
returning to one worry (田中, losing data: m004, m010, m024, m031, m036, m039) and English mixed in.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from awai_engine.backends.offline import OfflineBackend
from awai_engine.calibration import KNOWN_SCALES, calibrated
from awai_engine.embedding import Embedder
from awai_engine.samples import SAMPLES
from awai_engine.settings import EmbeddingSettings, Settings
from awai_engine.values import ReadingContext, Utterance
from awai_engine.visibility import EVERYTHING
from bots.labels import labels_for
from bots.runtime import Runtime, open_runtime
from bots.terminal.cli import main
from bots.terminal.transcript import read_transcript
from storage.store import AwaiStore
from tests.factories import utterance

SAMPLE = SAMPLES["ja"]
RESTORE_TEST_EARLY = {"m002", "m003", "m005"}  # the messages that first name the restore test
WORRY = ("m004", "m010", "m024", "m031", "m036", "m039")  # 田中 on losing data


@pytest.fixture(scope="session")
def use_embedder() -> Embedder:
    return Embedder(EmbeddingSettings(backend="multilingual-use"))


def runtime_on(path: Path, embedder: Embedder) -> Runtime:
    """A runtime as open_runtime builds it (thresholds calibrated), with the given embedder."""
    settings = Settings(data_dir=path, _env_file=None, embedding=embedder.settings)  # type: ignore[call-arg]
    settings = calibrated(settings, embedder)
    store = AwaiStore.open(settings)
    return Runtime(settings, store, embedder, OfflineBackend(settings.limits))


@pytest.fixture(scope="module")
def sample_read(
    tmp_path_factory: pytest.TempPathFactory, embedder: Embedder, use_embedder: Embedder
) -> Iterator[dict[str, Callable[[str], ReadingContext]]]:
    """The sample ingested once with each encoder; maps "use" / "minilm" to a context reader."""
    transcript = read_transcript(SAMPLE.path, SAMPLE.channel, 10**7)
    runtimes = {
        "use": runtime_on(tmp_path_factory.mktemp("use"), use_embedder),
        "minilm": runtime_on(tmp_path_factory.mktemp("minilm"), embedder),
    }
    for runtime in runtimes.values():
        runtime.engine.ingest(transcript.utterances)
    yield {
        name: (
            lambda message_id, r=runtime: r.engine.context(
                transcript.channel, message_id, EVERYTHING
            )
        )
        for name, runtime in runtimes.items()
    }
    for runtime in runtimes.values():
        runtime.close()


def sources(context: ReadingContext) -> list[str]:
    return [item.source.message_id for item in context.associations]


@pytest.mark.slow
def test_the_returning_topic_is_recalled_across_the_gap_with_the_multilingual_encoder(
    sample_read: dict[str, Callable[[str], ReadingContext]],
) -> None:
    featured = sample_read["use"](SAMPLE.featured_message)  # m034: "backup の restore test"
    recalled = sources(featured)
    assert set(recalled[:2]) <= RESTORE_TEST_EARLY  # the two strongest recalls are the topic
    assert {"m002", "m005"} <= set(recalled)
    assert min(a.distance for a in featured.associations if a.source.message_id == "m002") >= 28
    english = sample_read["use"]("m036")  # "The restore test from backup … has to pass …"
    assert RESTORE_TEST_EARLY & set(sources(english))


def test_minilm_recalls_other_things_instead_of_the_returning_topic(
    sample_read: dict[str, Callable[[str], ReadingContext]],
) -> None:
    featured = sample_read["minilm"](SAMPLE.featured_message)
    # MiniLM does recall: nearly every Japanese pair passes its thresholds. But not the topic.
    assert featured.associations
    assert not RESTORE_TEST_EARLY & set(sources(featured))
    assert not RESTORE_TEST_EARLY & set(sources(sample_read["minilm"]("m036")))


def test_each_time_the_worry_returns_an_earlier_mention_of_it_is_recalled(
    sample_read: dict[str, Callable[[str], ReadingContext]],
) -> None:
    for n, message_id in enumerate(WORRY[1:], start=1):
        earlier = set(WORRY[:n])
        assert earlier & set(sources(sample_read["use"](message_id))), message_id
    assert "m004" in sources(sample_read["use"]("m036"))  # the fear, back in English


def test_the_repeated_worry_forms_a_schema_that_his_next_message_recalls(
    sample_read: dict[str, Callable[[str], ReadingContext]],
) -> None:
    recalled = sample_read["use"]("m039").schemas  # 田中's last word on it, after m036
    worry = [s for s in recalled if s.size >= 3 and len(set(s.members) & set(WORRY)) >= 3]
    assert worry, recalled
    assert len(set(worry[0].members) & set(WORRY)) >= 0.6 * len(worry[0].members)
    assert worry[0].returned_by  # m039 comes back to it


def test_the_worry_messages_are_each_others_nearest_among_the_speakers_messages(
    use_embedder: Embedder,
) -> None:
    transcript = read_transcript(SAMPLE.path, SAMPLE.channel, 10**7)
    backend = OfflineBackend()
    own = [u for u in transcript.utterances if u.speaker_name == "田中"]
    vectors = {
        u.message_id: use_embedder.encode([t.text for t in backend.extract_one(u.text).thoughts])
        for u in own
    }

    def closeness(a: str, b: str) -> float:  # the closest pair of their thoughts
        return float((vectors[a] @ vectors[b].T).max())

    for message_id in WORRY:
        others = [u.message_id for u in own if u.message_id != message_id]
        nearest = max(others, key=lambda other: closeness(message_id, other))
        assert nearest in WORRY, (message_id, nearest)


def test_an_english_message_recalls_the_japanese_one_that_says_the_same(
    sample_read: dict[str, Callable[[str], ReadingContext]],
) -> None:
    def recalls_the_fear(context: ReadingContext) -> bool:
        return any(
            item.source.message_id == "m004"
            and item.thought.text.startswith("移行中にデータが消える")
            for item in context.associations
        )

    assert recalls_the_fear(sample_read["use"]("m036"))  # "Losing data during the migration …"
    assert not recalls_the_fear(sample_read["minilm"]("m036"))


PAIRS = [
    ("The deploy failed because the disk was full.", "ディスクが一杯でデプロイが失敗しました。"),
    ("Can we move the release to Thursday?", "リリースを木曜日に延期できますか？"),
    (
        "The screen reader cannot reach the snooze button.",
        "スクリーンリーダーでスヌーズボタンに届きません。",
    ),
]
FILLER = [
    "Lunch at noon?",
    "請求書の件は経理に回しました。",
    "The design review moved to room 3.",
    "新しいノートPCが届きました。",
    "Pricing should include a free tier.",
    "来週は祝日があるので注意してください。",
]


@pytest.mark.parametrize(("first", "later"), [(0, 1), (1, 0)], ids=["en-then-ja", "ja-then-en"])
@pytest.mark.slow
def test_the_same_thing_said_in_the_other_language_is_associated(
    tmp_path: Path, use_embedder: Embedder, embedder: Embedder, first: int, later: int
) -> None:
    found = {}
    for name, model in (("use", use_embedder), ("minilm", embedder)):
        runtime = runtime_on(tmp_path / name, model)
        for n, pair in enumerate(PAIRS):
            channel = f"terminal:local:pair{n}"
            said = [utterance("m00", pair[first], speaker="ann", channel=channel)]
            said += [
                utterance(f"m{i + 1:02d}", text, speaker="bo", channel=channel)
                for i, text in enumerate(FILLER)
            ]
            said.append(utterance("m99", pair[later], speaker="cy", channel=channel))
            runtime.engine.ingest(said)
            found[name, n] = "m00" in sources(runtime.engine.context(channel, "m99", EVERYTHING))
        runtime.close()
    assert all(found["use", n] for n in range(len(PAIRS)))
    assert not any(found["minilm", n] for n in range(len(PAIRS)))


def test_open_runtime_puts_the_thresholds_on_the_configured_models_scale(tmp_path: Path) -> None:
    settings = Settings(  # type: ignore[call-arg]
        data_dir=tmp_path, _env_file=None, embedding=EmbeddingSettings(backend="multilingual-use")
    )
    runtime = open_runtime(settings)
    try:
        scale = KNOWN_SCALES[runtime.engine.embedder.model_name]
        assert runtime.engine.settings.association.theta_0 == scale.similarity(
            settings.association.theta_0
        )
        assert runtime.settings == runtime.engine.settings
    finally:
        runtime.close()


SENTENCES = [
    "バックアップの復元テストは最後にいつやりましたか？",
    "移行中にデータが消えるのが一番怖いです。",
    "The restore test on the new DC has to pass before go-live.",
    "Losing data during the migration is what scares me most.",
    "了解です",
    "ok 👍",
    "リハーサルは土曜の夜にやります。検証環境を使います。",
    "DNSのTTLはいつ下げますか？",
    "- 注文件数の照合\n- 行数の照合",
    "手順書は更新しましたが、まだレビューしていません。",
]
counter = itertools.count()


@pytest.fixture
def two_use_stores(tmp_path: Path, use_embedder: Embedder) -> Iterator[tuple[Runtime, Runtime]]:
    stores = (
        runtime_on(tmp_path / "full", use_embedder),
        runtime_on(tmp_path / "prefix", use_embedder),
    )
    yield stores
    for runtime in stores:
        runtime.close()


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    spec=st.lists(
        st.tuples(st.sampled_from(SENTENCES), st.sampled_from(["佐藤", "鈴木", "田中"])),
        min_size=2,
        max_size=12,
    ),
    data=st.data(),
)
@pytest.mark.slow
def test_no_future_leak_with_the_multilingual_encoder(
    two_use_stores: tuple[Runtime, Runtime], spec: list[tuple[str, str]], data: st.DataObject
) -> None:
    full, prefix = two_use_stores
    channel = f"terminal:local:ja{next(counter)}"
    messages: list[Utterance] = [
        utterance(f"m{i:03d}", text, speaker=speaker, ts=1_700_000_000 + 60 * i, channel=channel)
        for i, (text, speaker) in enumerate(spec)
    ]
    i = data.draw(st.integers(0, len(messages) - 2), label="message read")
    target = messages[i].message_id

    full.engine.ingest(messages[: i + 1])
    before = full.engine.context(channel, target, EVERYTHING)
    full.engine.ingest(messages[i + 1 :])
    after = full.engine.context(channel, target, EVERYTHING)
    prefix.engine.ingest(messages[: i + 1])
    only_prefix = prefix.engine.context(channel, target, EVERYTHING)

    assert after == before
    assert only_prefix == before


@pytest.mark.slow
def test_the_japanese_demo_reads_with_the_multilingual_encoder_and_speaks_japanese(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    assert main(["--data-dir", str(tmp_path), "demo", "--lang", "ja", "--json"]) == 0
    reading = json.loads(capsys.readouterr().out)
    assert reading["language"] == "ja"
    assert {"m002", "m005"} <= {
        a["source"]["message_id"] for a in reading["context"]["associations"]
    }

    assert main(["--data-dir", str(tmp_path), "demo", "--lang", "ja"]) == 0
    shown = capsys.readouterr().out
    # What the terminal shows, whatever width the console took: a long label may wrap inside
    # its panel, so panel edges and white space are left out on both sides.
    flat = "".join(ch for ch in shown if not ch.isspace() and ch != "│")
    japanese, english = labels_for("ja"), labels_for("en")

    def on_screen(label: str) -> bool:
        return "".join(label.split()) in flat

    for key in ("associations", "flow", "offline:not-configured"):
        assert on_screen(japanese[key])
        assert not on_screen(english[key])
    # The encoder is shown by what it recalled (above), never by its name: that is the
    # operator's bookkeeping, not a reader's.
    assert not on_screen("universal-sentence-encoder-multilingual-3")
    assert on_screen("バックアップの復元テストは最後にいつやりましたか？")  # folded, never cut
