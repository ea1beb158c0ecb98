"""The word-embedding table kept out of the ONNX graph (awai_engine/embedding_backends/word_table.py).

What must hold: the session holds no table, the cut graph gives the whole graph's vectors bit for
bit (a channel's stored vectors and its new ones stay comparable to the last bit), a graph whose
lookup is not a plain one keeps its table, and a missing table file is said as a damaged export is.
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from awai_engine.embedding import Embedder, EmbeddingModelError
from awai_engine.embedding_backends.onnx_backend import OnnxSentenceEncoder
from awai_engine.embedding_backends.onnx_export import _cache_path, cut_word_table
from awai_engine.embedding_backends.sentence_model import PACKAGED_MINILM, read_sentence_model
from awai_engine.embedding_backends.word_table import FILE_NAME, WORDS_INPUT, WordTable
from awai_engine.settings import EmbeddingSettings
from tests.test_embedding_onnx import sample_texts


def _minilm_encoder(embedder: Embedder) -> OnnxSentenceEncoder:
    encoder = embedder._model()
    assert isinstance(encoder, OnnxSentenceEncoder)
    return encoder


def _exported() -> Path:
    settings = EmbeddingSettings()
    return _cache_path(read_sentence_model(PACKAGED_MINILM), settings.resolved_cache_dir())


def _joined(model: onnx.ModelProto, table: np.ndarray) -> onnx.ModelProto:
    """The graph as torch exported it: ``table`` and its lookup of the ids put back."""
    whole = copy.deepcopy(model)
    graph = whole.graph
    for node in graph.node:
        for position, name in enumerate(node.input):
            if name == WORDS_INPUT:
                node.input[position] = "looked_up"
    graph.initializer.append(numpy_helper.from_array(table, "word_table"))
    graph.node.insert(0, helper.make_node("Gather", ["word_table", "input_ids"], ["looked_up"]))
    kept = [item for item in graph.input if item.name != WORDS_INPUT]
    del graph.input[:]
    graph.input.extend(kept)
    return whole


def test_the_session_holds_no_word_table_and_the_table_is_beside_the_graph(
    embedder: Embedder,
) -> None:
    encoder = _minilm_encoder(embedder)
    graph = onnx.load(str(_exported()))
    vocabulary = encoder._tokenizer.get_vocab_size()
    assert WORDS_INPUT in encoder._inputs
    assert not [t.name for t in graph.graph.initializer if t.dims and t.dims[0] == vocabulary]
    table = WordTable(_exported().with_name(FILE_NAME))
    assert (table.rows_count, table.width) == (vocabulary, encoder.dimension)


@pytest.mark.slow
def test_the_cut_graph_gives_the_whole_graphs_vectors_bit_for_bit(embedder: Embedder) -> None:
    encoder = _minilm_encoder(embedder)
    table = np.load(_exported().with_name(FILE_NAME))
    whole = copy.copy(encoder)
    whole._session = onnxruntime.InferenceSession(
        _joined(onnx.load(str(_exported())), table).SerializeToString(),
        providers=["CPUExecutionProvider"],
    )
    whole._inputs = [item.name for item in whole._session.get_inputs()]
    whole._words = None
    texts = [*sample_texts(), " ".join(f"word{i}" for i in range(400)), "ok", "日本語の文です"]

    cut_vectors = encoder.encode(texts, 32)

    assert WORDS_INPUT not in whole._inputs
    assert np.array_equal(cut_vectors.view(np.uint32), whole.encode(texts, 32).view(np.uint32))


def _tiny(lookup_input: str, tied: bool = False) -> tuple[onnx.ModelProto, np.ndarray]:
    """A graph of one lookup of ``lookup_input`` in a 5 × 3 table, plus a bias; ``tied``: the
    table is also used by a second node (as tied input and output embeddings are)."""
    table = np.arange(15, dtype=np.float32).reshape(5, 3) / 7
    nodes = [
        helper.make_node("Cast", ["input_ids"], ["ids_again"], to=TensorProto.INT64),
        helper.make_node("Gather", ["table", lookup_input], ["rows"]),
        helper.make_node("Add", ["rows", "bias"], ["out"]),
    ]
    outputs = [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)]
    if tied:
        nodes.append(helper.make_node("Transpose", ["table"], ["tied"]))
        outputs.append(helper.make_tensor_value_info("tied", TensorProto.FLOAT, None))
    graph = helper.make_graph(
        nodes,
        "tiny",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"])],
        outputs,
        [
            numpy_helper.from_array(table, "table"),
            numpy_helper.from_array(np.array([0.5, -1.0, 2.0], dtype=np.float32), "bias"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model, table


def test_a_plain_lookup_is_cut_out_and_its_rows_read_from_the_file_give_the_same_output(
    tmp_path: Path,
) -> None:
    model, table = _tiny("input_ids")
    ids = np.array([[4, 0, 2], [1, 1, 3]], dtype=np.int64)
    (before,) = onnxruntime.InferenceSession(model.SerializeToString()).run(
        None, {"input_ids": ids}
    )

    cut = cut_word_table(model)

    assert cut is not None and np.array_equal(cut, table)
    assert [t.name for t in model.graph.initializer] == ["bias"]
    np.save(tmp_path / FILE_NAME, cut)
    words = WordTable(tmp_path / FILE_NAME)
    session = onnxruntime.InferenceSession(model.SerializeToString())
    (after,) = session.run(None, {"input_ids": ids, WORDS_INPUT: words.rows(ids)})
    assert np.array_equal(before, after)
    assert words.rows(ids).shape == (2, 3, 3)
    with pytest.raises(IndexError):
        words.rows(np.array([5]))


@pytest.mark.parametrize(("lookup_input", "tied"), [("ids_again", False), ("input_ids", True)])
def test_a_lookup_that_is_not_plain_keeps_its_table_in_the_graph(
    lookup_input: str, tied: bool
) -> None:
    """Ids changed on the way, or a table other nodes use too: the graph is left whole."""
    model, _ = _tiny(lookup_input, tied)
    before = model.SerializeToString()

    assert cut_word_table(model) is None
    assert model.SerializeToString() == before


def test_a_missing_word_table_is_said_as_a_damaged_export_is(tmp_path: Path) -> None:
    settings = EmbeddingSettings(cache_dir=tmp_path)
    target = _cache_path(read_sentence_model(PACKAGED_MINILM), tmp_path)
    target.parent.mkdir(parents=True)
    shutil.copy(_exported(), target)  # the graph without the table beside it

    with pytest.raises(EmbeddingModelError, match=f"{FILE_NAME}.*Delete it to export it again"):
        Embedder(settings, cache_size=0).encode(["good morning"])


@pytest.mark.slow
def test_an_export_writes_the_graph_and_its_table_beside_it_and_nothing_else(
    tmp_path: Path, embedder: Embedder
) -> None:
    exported = Embedder(EmbeddingSettings(cache_dir=tmp_path), cache_size=0)

    vector = exported.encode(["good morning, is the build green?"])

    target = _cache_path(read_sentence_model(PACKAGED_MINILM), tmp_path)
    assert sorted(path.name for path in target.parent.iterdir()) == sorted([FILE_NAME, target.name])
    assert np.array_equal(vector, embedder.encode_uncached(["good morning, is the build green?"]))
