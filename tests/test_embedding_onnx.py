"""MiniLM on ONNX Runtime: the torch vectors without torch, from a file exported once.

The tolerance the two runtimes share a model name under is a cosine of at least 0.999 per text
(measured on real chat lines by ``bench/embedding_runtimes.py``; here on the shipped samples).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from awai_engine.calibration import reference_texts
from awai_engine.embedding import Embedder, EmbeddingModelError
from awai_engine.embedding_backends.onnx_backend import TOKENS_PER_ROW, length_batches
from awai_engine.embedding_backends.onnx_export import _cache_path
from awai_engine.embedding_backends.sentence_model import (
    PACKAGED_MINILM,
    model_directory,
    read_sentence_model,
)
from awai_engine.samples import SAMPLES
from awai_engine.settings import EmbeddingSettings

TREE = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "transformers", "sentence_transformers")


def sample_texts() -> list[str]:
    texts = list(reference_texts())
    for sample in SAMPLES.values():
        for line in sample.path.read_text(encoding="utf-8").splitlines():
            texts.append(json.loads(line)["text"])
    return texts


@pytest.fixture(scope="module")
def torch_embedder() -> Embedder:
    return Embedder(EmbeddingSettings(runtime="torch"), cache_size=0)


def test_the_default_runtime_is_onnx_and_keeps_minilms_name(embedder: Embedder) -> None:
    assert embedder.settings.runtime == "onnx"
    assert embedder.model_name == PACKAGED_MINILM
    assert embedder.dimension == 384


@pytest.mark.slow
def test_onnx_vectors_match_the_torch_vectors_of_every_shipped_line(
    embedder: Embedder, torch_embedder: Embedder
) -> None:
    texts = sample_texts()
    onnx = embedder.encode_uncached(texts)
    torch = torch_embedder.encode_uncached(texts)
    cosine = np.sum(onnx * torch, axis=1)
    assert len(texts) > 100
    assert cosine.min() >= 0.999, texts[int(cosine.argmin())]
    assert np.allclose(np.linalg.norm(onnx, axis=1), 1.0, atol=1e-5)


def test_a_text_padded_in_a_batch_gets_its_vector_alone(embedder: Embedder) -> None:
    """Padding is masked out: the traced graph does not take a shortcut for unpadded batches."""
    short = "ok, ship it"
    long = " ".join(["the staging deploy failed again because the disk on the runner is full"] * 6)
    alone = embedder.encode_uncached([short])[0]
    padded = embedder.encode_uncached([long, short, "yes"])[1]
    assert np.array_equal(alone, padded)


@pytest.mark.parametrize("threads", [1, 4])
def test_a_texts_vector_does_not_depend_on_the_batch_it_was_encoded_in(threads: int) -> None:
    """Bit for bit: the invariant compares vectors of one text embedded in different calls (a
    forget empties the embedder's cache), and a last bit can move a rounded similarity. ONNX
    Runtime's ReduceSum pooled a text in a batch of fewer rows than threads in another order, so
    a line alone, or in 2 or 3 under 4 threads, differed from the same line among many."""
    encoder = Embedder(EmbeddingSettings(threads=threads), cache_size=0)
    texts = sample_texts()
    together = encoder.encode_uncached(texts)
    rng = np.random.default_rng(threads)
    for size in (1, 2, 3, 5, 40):
        for _ in range(3):
            rows = rng.choice(len(texts), size, replace=False)
            batch = encoder.encode_uncached([texts[row] for row in rows])
            differ = [
                texts[row]
                for row, vector in zip(rows, batch, strict=True)
                if not np.array_equal(vector, together[row])
            ]
            assert differ == [], f"{len(differ)} of {size} texts got other bits: {differ[:3]}"


@pytest.mark.slow
def test_texts_too_long_for_the_model_are_truncated_as_sentence_transformers_does(
    embedder: Embedder, torch_embedder: Embedder
) -> None:
    text = " ".join(f"word{i}" for i in range(600))  # far beyond 256 tokens
    cosine = float(embedder.encode_uncached([text])[0] @ torch_embedder.encode_uncached([text])[0])
    assert cosine >= 0.999


@pytest.mark.slow
def test_the_onnx_runtime_imports_no_torch_transformers_or_sentence_transformers() -> None:
    code = (
        "import sys; from awai_engine.embedding import Embedder;"
        "from awai_engine.settings import EmbeddingSettings;"
        "Embedder(EmbeddingSettings()).encode(['good morning']);"
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    assert _printed_by_a_fresh_process(code) == "[]"


@pytest.mark.slow
def test_awai_commands_start_without_the_platform_libraries() -> None:
    code = (
        "import sys; from bots.terminal import cli;"
        "print([m for m in ('discord', 'slack_bolt', 'slack_sdk', 'apscheduler', *"
        f"{HEAVY!r}) if m in sys.modules])"
    )
    assert _printed_by_a_fresh_process(code) == "[]"


def _printed_by_a_fresh_process(code: str) -> str:
    """What ``code`` prints in a new interpreter on this tree: imports start from nothing."""
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(TREE)},
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


def test_the_cached_export_is_keyed_by_the_models_files(tmp_path: Path) -> None:
    """A changed model file (an upgraded package) means a new export, never a stale one."""
    source = model_directory(PACKAGED_MINILM)
    copy = tmp_path / "minilm"
    copy.mkdir()
    for item in source.iterdir():
        (copy / item.name).symlink_to(item)
    (copy / "config.json").unlink()
    shutil.copy(source / "config.json", copy / "config.json")
    before = _cache_path(read_sentence_model(str(copy)), tmp_path / "cache")
    assert before == _cache_path(read_sentence_model(str(copy)), tmp_path / "cache")
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, "layer_norm_eps": 1e-6}))
    after = _cache_path(read_sentence_model(str(copy)), tmp_path / "cache")
    assert after != before
    assert after.parent.parent == before.parent.parent == tmp_path / "cache" / "onnx"


def test_a_model_the_onnx_runtime_cannot_reproduce_is_refused_naming_the_torch_runtime(
    tmp_path: Path,
) -> None:
    source = model_directory(PACKAGED_MINILM)
    copy = tmp_path / "with-dense"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("*.safetensors"))
    modules = json.loads((copy / "modules.json").read_text())
    modules.insert(
        2, {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"}
    )
    (copy / "modules.json").write_text(json.dumps(modules))
    with pytest.raises(EmbeddingModelError, match="AWAI_EMBEDDING__RUNTIME=torch"):
        Embedder(EmbeddingSettings(model=str(copy), cache_dir=tmp_path / "cache"))


def test_texts_of_every_length_come_back_in_the_order_given(embedder: Embedder) -> None:
    """Batched by length in tokens, returned as given: each row is the text's vector alone."""
    words = " ".join(f"word{i}" for i in range(400))
    texts = [words[: 7 * n + 3] for n in range(0, 420, 13)] + ["ok", "yes, ship it", words]
    order = np.random.default_rng(5).permutation(len(texts))
    shuffled = [texts[i] for i in order]

    together = embedder.encode_uncached(shuffled)

    alone = np.vstack([embedder.encode_uncached([text]) for text in shuffled])
    assert np.array_equal(together, alone)


def test_a_batch_holds_fewer_rows_the_longer_its_texts() -> None:
    lengths = np.array([5] * 100 + [256] * 40 + [40] * 30)
    batches = list(length_batches(lengths, 32))

    rows = np.concatenate(batches)
    assert sorted(rows.tolist()) == list(range(len(lengths)))  # each row once
    assert list(lengths[rows]) == sorted(lengths, reverse=True)  # longest first
    for batch in batches:
        assert 1 <= len(batch) <= 32
        assert len(batch) * lengths[batch].max() <= max(32 * TOKENS_PER_ROW, lengths[batch[0]])
    short = [batch for batch in batches if lengths[batch[0]] == 5]
    assert short and all(len(batch) == 32 for batch in short[:-1])  # short lines fill batches
    assert [batch.tolist() for batch in length_batches(np.array([9999]), 32)] == [[0]]


def test_the_memory_of_a_batch_of_long_texts_is_given_back() -> None:
    """ONNX Runtime's arena would keep the peak of the longest batch for the process's life."""
    code = (
        "from awai_engine.embedding import Embedder\n"
        "from awai_engine.settings import EmbeddingSettings\n"
        "def rss():\n"
        "    return int(open('/proc/self/statm').read().split()[1]) * 4096 >> 20\n"
        "e = Embedder(EmbeddingSettings(), cache_size=0)\n"
        "e.encode_uncached(['warm up'])\n"
        "before = rss()\n"
        "long = [' '.join(f'w{i}x{k}' for i in range(300)) for k in range(64)]\n"
        "e.encode_uncached(long)\n"
        "print(rss() - before)\n"
    )
    assert int(_printed_by_a_fresh_process(code)) < 150


def test_the_text_cache_keeps_each_vector_alone_not_the_array_of_the_call_it_came_from() -> None:
    """A cached row that viewed its call's array kept all of it alive: an ingest of 30,000
    lines held 38 calls' arrays (30 MiB) for a cache of 4,096 vectors (6 MiB)."""
    encoder = Embedder(EmbeddingSettings(), cache_size=4)
    texts = [f"line {number} of a long ingest" for number in range(40)]
    encoded = encoder.encode(texts)
    cached = list(encoder._cache.values())
    assert len(cached) == 4
    assert all(vector.base is None and vector.nbytes == 4 * encoder.dimension for vector in cached)
    assert np.array_equal(np.stack(cached), encoded[-4:])
