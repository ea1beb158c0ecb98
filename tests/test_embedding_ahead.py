"""Texts embedded ahead (``Embedder.encode_ahead``): the same bits as in place, never twice, gone
with a forget, and a failure that is the caller's in place."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest

from awai_engine.embedding import Embedder
from awai_engine.settings import EmbeddingSettings
from awai_engine.text_caches import forget_cached_texts
from tests.test_embedding_onnx import sample_texts


class Counting(Embedder):
    """The real embedder, noting each text it embeds and in which thread; a call holding
    ``failing`` fails, as a model can fail on one input."""

    def __init__(self, settings: EmbeddingSettings | None = None, failing: str = "") -> None:
        super().__init__(settings or EmbeddingSettings(), cache_size=0)
        self.embedded: list[tuple[str, str]] = []
        self._failing = failing
        self._noting = threading.Lock()

    def encode_uncached(self, texts: Sequence[str]) -> np.ndarray:
        with self._noting:
            self.embedded.extend((threading.current_thread().name, text) for text in texts)
        if self._failing and any(self._failing in text for text in texts):
            raise RuntimeError("the model failed on this input")
        return super().encode_uncached(texts)

    def texts(self) -> list[str]:
        with self._noting:
            return [text for _, text in self.embedded]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return list(dict.fromkeys(sample_texts()))[:60]


def test_a_text_embedded_ahead_gets_the_bits_it_gets_in_place(
    embedder: Embedder, texts: list[str]
) -> None:
    ahead = Counting()
    ahead.encode_ahead(texts[:40])
    got = ahead.encode(texts[20:])  # half made ahead, half in place, in another batching
    assert np.array_equal(got, embedder.encode_uncached(texts[20:]))


def test_a_text_embedded_ahead_is_not_embedded_again(texts: list[str]) -> None:
    ahead = Counting()
    ahead.encode_ahead(texts[:40])
    ahead.encode(texts[20:])
    assert sorted(ahead.texts()) == sorted(texts)  # each once
    assert all(
        name.startswith("awai-embed-ahead") for name, text in ahead.embedded if text in texts[:40]
    )
    assert {name for name, text in ahead.embedded if text in texts[40:]} == {"MainThread"}


def test_what_was_embedded_ahead_and_not_asked_for_is_dropped_at_the_next_call(
    texts: list[str],
) -> None:
    ahead = Counting()
    ahead.encode_ahead(texts[:10])
    ahead.encode_ahead(texts[10:20])
    ahead.encode(texts[:20])
    assert sorted(ahead.texts()) == sorted(texts[:10] * 2 + texts[10:20])


def test_a_forget_drops_the_vectors_made_ahead(texts: list[str]) -> None:
    ahead = Counting()
    ahead.encode_ahead(texts[:10])
    forget_cached_texts()
    ahead.encode(texts[:10])
    assert sorted(ahead.texts()) == sorted(texts[:10] * 2)


def test_a_call_that_failed_ahead_is_made_again_in_place_where_its_failure_is_the_callers(
    texts: list[str],
) -> None:
    ahead = Counting(failing="POISON")
    ahead.encode_ahead([*texts[:5], "This one is POISON for the model."])
    assert ahead.encode(texts[:5]).shape == (5, ahead.dimension)
    with pytest.raises(RuntimeError, match="the model failed"):
        ahead.encode(["This one is POISON for the model."])


def test_an_encoder_whose_bits_follow_the_batch_embeds_nothing_ahead(texts: list[str]) -> None:
    use = Counting(EmbeddingSettings(backend="multilingual-use"))
    use.encode_ahead(texts[:10])
    assert use.embedded == []
    use.encode(texts[:10])
    assert {name for name, _ in use.embedded} == {"MainThread"}
