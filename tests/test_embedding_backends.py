"""The embedding backends and the per-model thresholds (awai_engine.calibration)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from pydantic import BaseModel

from awai_engine.calibration import (
    KNOWN_SCALES,
    REFERENCE_QUANTILES,
    RULE_SIMILARITY_FIELDS,
    SIMILARITY_FIELDS,
    calibrated,
    measure_scale,
    quantiles,
    reference_texts,
)
from awai_engine.embedding import Embedder
from awai_engine.schemas.settings import SchemaRules, SchemaSettings
from awai_engine.settings import (
    ActivationSettings,
    AssociationSettings,
    EmbeddingSettings,
    Settings,
    SettingsError,
    load_settings,
)

MULTILINGUAL = ("multilingual-use", "multilingual-e5")


@pytest.fixture(scope="module")
def multilingual() -> dict[str, Embedder]:
    return {name: Embedder(EmbeddingSettings(backend=name)) for name in MULTILINGUAL}


def plain_settings(tmp_path: Path, **overrides: object) -> Settings:
    return Settings(data_dir=tmp_path, _env_file=None, **overrides)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("backend", "dimension"), [("multilingual-use", 512), ("multilingual-e5", 384)]
)
@pytest.mark.slow
def test_each_multilingual_backend_gives_unit_float32_vectors_of_its_dimension(
    multilingual: dict[str, Embedder], backend: str, dimension: int
) -> None:
    embedder = multilingual[backend]
    vectors = embedder.encode(
        ["移行中にデータが消えるのが一番怖いです。", "ok", "The restore test."]
    )
    assert embedder.dimension == dimension
    assert vectors.shape == (3, dimension) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.model_name != EmbeddingSettings().model  # a channel can tell them apart


def test_the_stored_minilm_quantiles_are_what_minilm_measures_on_the_reference(
    embedder: Embedder,
) -> None:
    measured = quantiles(embedder.encode(reference_texts()))
    assert np.allclose(measured, REFERENCE_QUANTILES, atol=0.005)


@pytest.mark.parametrize("backend", MULTILINGUAL)
@pytest.mark.slow
def test_each_stored_scale_is_what_the_model_measures_on_the_reference(
    multilingual: dict[str, Embedder], backend: str
) -> None:
    embedder = multilingual[backend]
    stored, measured = KNOWN_SCALES[embedder.model_name], measure_scale(embedder)
    for minilm_similarity in (0.1, 0.3, 0.45, 0.6):
        assert stored.similarity(minilm_similarity) == pytest.approx(
            measured.similarity(minilm_similarity), abs=0.01
        )


@pytest.mark.parametrize("backend", MULTILINGUAL)
def test_a_mapped_threshold_keeps_about_the_same_share_of_pairs_as_minilms(
    embedder: Embedder, multilingual: dict[str, Embedder], backend: str
) -> None:
    texts = reference_texts()
    scale = KNOWN_SCALES[multilingual[backend].model_name]

    def share_above(vectors: np.ndarray, threshold: float) -> float:
        similarity = vectors @ vectors.T
        return float((similarity[np.triu_indices(len(vectors), 1)] >= threshold).mean())

    for minilm_threshold in (0.1, 0.25, 0.4, 0.55):
        minilm_share = share_above(embedder.encode(texts), minilm_threshold)
        model_share = share_above(
            multilingual[backend].encode(texts), scale.similarity(minilm_threshold)
        )
        assert model_share == pytest.approx(minilm_share, rel=0.35, abs=0.004)


def test_minilm_keeps_the_settings_defaults_as_they_are(embedder: Embedder, tmp_path: Path) -> None:
    settings = plain_settings(tmp_path)
    assert calibrated(settings, embedder) == settings


def test_unset_thresholds_move_to_the_models_scale_and_set_ones_stay(
    multilingual: dict[str, Embedder], tmp_path: Path
) -> None:
    e5 = multilingual["multilingual-e5"]
    settings = plain_settings(
        tmp_path,
        association=AssociationSettings(theta_max=0.95),
        activation=ActivationSettings(decay=0.6),
        schemas=SchemaSettings(rules=SchemaRules(join_similarity=0.9)),
    )
    result = calibrated(settings, e5)
    scale = KNOWN_SCALES[e5.model_name]
    assert result.association.theta_max == 0.95  # set by the user: used as written
    assert result.association.theta_0 == scale.similarity(settings.association.theta_0)
    assert result.association.slope == pytest.approx(scale.factor * settings.association.slope)
    assert result.activation.repeat_similarity == scale.similarity(
        settings.activation.repeat_similarity
    )
    assert result.activation.decay == 0.6
    assert result.schemas.recall_threshold == scale.similarity(settings.schemas.recall_threshold)
    rules = result.schemas.rules  # fitted in code: mapped too, unless a test or bench set them
    assert rules.min_cohesion == scale.similarity(settings.schemas.rules.min_cohesion)
    assert rules.join_similarity == 0.9
    assert result.association.theta_0 > 0.8  # E5's narrow high band
    assert calibrated(result, e5) == result  # applying it twice changes nothing more


def test_calibration_can_be_turned_off(multilingual: dict[str, Embedder], tmp_path: Path) -> None:
    settings = plain_settings(
        tmp_path, embedding=EmbeddingSettings(backend="multilingual-use", calibrate=False)
    )
    assert calibrated(settings, multilingual["multilingual-use"]) == settings


def test_set_thresholds_that_clash_with_calibrated_ones_are_refused_with_advice(
    multilingual: dict[str, Embedder], tmp_path: Path
) -> None:
    # θ_0 set at MiniLM's ceiling; the unset ceiling, moved to USE's lower scale, falls below it.
    ceiling = AssociationSettings().theta_max
    settings = plain_settings(tmp_path, association=AssociationSettings(theta_0=ceiling))
    with pytest.raises(SettingsError, match="AWAI_EMBEDDING__CALIBRATE"):
        calibrated(settings, multilingual["multilingual-use"])


@dataclass
class RenamedModel:
    """MiniLM under a name calibration has never seen: the path every unknown model takes."""

    inner: Embedder
    model_name: str = "someone/their-own-model"

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.inner.encode(texts)


def test_an_unknown_model_is_measured_on_the_reference_when_it_is_loaded(
    embedder: Embedder, tmp_path: Path
) -> None:
    settings = plain_settings(tmp_path)
    result = calibrated(settings, RenamedModel(embedder))
    assert result.association.theta_0 == pytest.approx(settings.association.theta_0, abs=0.01)
    assert result.activation.repeat_similarity == pytest.approx(
        settings.activation.repeat_similarity, abs=0.01
    )


def test_a_model_name_with_a_built_in_backend_is_refused_at_start_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWAI_EMBEDDING__BACKEND", "multilingual-use")
    monkeypatch.setenv("AWAI_EMBEDDING__MODEL", "paraphrase-multilingual-MiniLM-L12-v2")
    with pytest.raises(SettingsError, match="AWAI_EMBEDDING"):
        load_settings(_env_file=None)


def test_an_unknown_backend_is_refused_at_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWAI_EMBEDDING__BACKEND", "word2vec")
    with pytest.raises(SettingsError, match="AWAI_EMBEDDING__BACKEND"):
        load_settings(_env_file=None)


def _similarities(model: type[BaseModel]) -> set[str]:
    # The settings modules type cosine thresholds as ``Similarity`` (kept as a string annotation).
    return {
        field
        for field, annotation in inspect.get_annotations(model).items()
        if annotation == "Similarity"
    }


def test_every_similarity_setting_and_fitted_rule_is_put_on_the_models_scale() -> None:
    sections = {
        name: info.annotation
        for name, info in Settings.model_fields.items()
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel)
    }
    typed = {(name, field) for name, model in sections.items() for field in _similarities(model)}
    mapped = {(name, field) for name, fields in SIMILARITY_FIELDS.items() for field in fields}
    assert typed == mapped
    rules = {
        (name, field)
        for name, model in sections.items()
        if "rules" in model.model_fields
        for field in _similarities(model.model_fields["rules"].annotation)  # type: ignore[arg-type]
    }
    assert rules == {
        (name, field) for name, fields in RULE_SIMILARITY_FIELDS.items() for field in fields
    }
