"""The schemas' clustering rules and the recall index's shape are fitted in code, not settings.

An operator keeps what they turn (processes, caches, BLAS threads, how many preconceptions a
reading recalls); a rule an old ``.env`` still sets is refused with where it went, rather than
silently ignored; tests and bench variants still set the rules, with their bounds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from awai_engine.recall_index import RecallIndexRules, RecallIndexSettings
from awai_engine.schemas.settings import SchemaRules, SchemaSettings
from awai_engine.settings import Settings, SettingsError, load_settings
from bench.variants import varied
from bots.settings import load_settings as load_bot_settings


@pytest.mark.parametrize(
    ("variable", "section_file"),
    [
        ("AWAI_SCHEMAS__MIN_SAMPLES", "awai_engine/schemas/settings.py"),
        ("AWAI_SCHEMAS__FIXED_POINT_BITS", "awai_engine/schemas/settings.py"),
        ("AWAI_SCHEMAS__RULES__ALGORITHM", "awai_engine/schemas/settings.py"),
        ("AWAI_RECALL_INDEX__PROBES", "awai_engine/recall_index.py"),
        ("AWAI_RECALL_INDEX__EXACT_ROWS", "awai_engine/recall_index.py"),
    ],
)
def test_a_rule_an_old_env_still_sets_is_refused_saying_it_was_removed_and_where_it_went(
    monkeypatch: pytest.MonkeyPatch, variable: str, section_file: str
) -> None:
    monkeypatch.setenv(variable, "3")
    with pytest.raises(SettingsError) as refused:
        load_settings(_env_file=None)
    message = str(refused.value)
    assert f"{variable}: no longer a setting (removed)" in message
    assert section_file in message and "bench/variants.py" in message
    assert "Remove the variable" in message


def test_a_name_no_section_has_is_refused_rather_than_run_on_the_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AWAI_SCHEMAS__RECALL_TRESHOLD", "0.6")  # a typo
    (tmp_path / ".env").write_text("AWAI_SLACK__BOT_TOKN=xoxb-1\n", encoding="utf-8")
    with pytest.raises(SettingsError) as refused:
        load_bot_settings(_env_file=tmp_path / ".env")
    lines = sorted(str(refused.value).splitlines()[1:])
    assert lines == [
        f"  {name}: no such setting (a typo, or one AWAI no longer has: see README.md)"
        for name in ("AWAI_SCHEMAS__RECALL_TRESHOLD", "AWAI_SLACK__BOT_TOKN")
    ]


def test_what_an_operator_turns_still_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWAI_SCHEMAS__RECLUSTER_PROCESSES", "2")
    monkeypatch.setenv("AWAI_SCHEMAS__MAX_RECALLED", "1")
    monkeypatch.setenv("AWAI_RECALL_INDEX__BLAS_THREADS", "2")
    settings = load_settings(_env_file=None)
    assert (settings.schemas.recluster_processes, settings.schemas.max_recalled) == (2, 1)
    assert settings.recall_index.blas_threads == 2
    assert settings.schemas.rules == SchemaRules()  # the fitted rules, untouched
    assert settings.recall_index.rules == RecallIndexRules()


def test_an_operators_bad_value_is_still_named_with_its_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWAI_SCHEMAS__RECLUSTER_PROCESSES", "-1")
    with pytest.raises(SettingsError, match="AWAI_SCHEMAS__RECLUSTER_PROCESSES: Input should be"):
        load_settings(_env_file=None)


def test_code_sets_the_rules_within_their_bounds() -> None:
    settings = SchemaSettings(rules=SchemaRules(min_samples=3))
    assert settings.rules.min_samples == 3
    with pytest.raises(ValueError, match="cells must not exceed exact_rows"):
        RecallIndexRules(exact_rows=16, cells=32)
    with pytest.raises(ValueError, match="no longer a setting"):
        SchemaSettings.model_validate({"min_samples": 3})  # a dict is what the environment gives


def test_a_bench_variant_sets_each_sections_rules_and_keeps_the_rest() -> None:
    base = Settings(_env_file=None)  # type: ignore[call-arg]
    row = varied(
        base,
        [
            ("schemas.rules.min_samples", 3),
            ("schemas.max_recalled", 1),
            ("recall_index.rules.probes", 8),
            ("rules.conversation_z", 3.0),
            ("association.max_items", 4),
        ],
    )
    assert row.schemas.rules == SchemaRules(min_samples=3)
    assert row.schemas.max_recalled == 1
    assert row.recall_index == RecallIndexSettings(rules=RecallIndexRules(probes=8))
    assert row.association.rules.conversation_z == 3.0 and row.association.max_items == 4
    assert base.schemas.rules == SchemaRules()  # the base is not changed


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("schemas.rules.min_sample", 3, "schemas.rules has no min_sample"),
        ("schemas.rules.min_samples", 0, "schemas.rules: 1 validation error"),
        ("recall_index.rules.cells", 10**5, "recall_index.rules: 1 validation error"),
        ("flow.rules.capacity", 4, "flow has no fitted rules"),
        ("nowhere.rules.x", 1, "the settings have no section 'nowhere'"),
        ("schemas", 1, "a bench variant sets section.field=value"),
        ("schemas.rules.a.b", 1, "a bench variant sets section.field=value"),
    ],
)
def test_a_bench_variant_that_names_nothing_or_breaks_a_bound_stops_with_its_name(
    key: str, value: object, said: str
) -> None:
    with pytest.raises(SystemExit, match=said):
        varied(Settings(_env_file=None), [(key, value)])  # type: ignore[call-arg]
