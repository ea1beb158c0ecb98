"""The language model's settings as an operator meets them: the README lists every one with its
real default, and the SDK's own variables work as the README says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from awai_engine.backends.anthropic import AnthropicBackend
from awai_engine.settings import LanguageModelSettings, load_settings
from tests.fake_anthropic import API_KEY, FakeAnthropic

README = Path(__file__).resolve().parents[1] / "README.md"
ROW = re.compile(r"^\| `(?P<name>[A-Z_]+)` \| (?P<default>[^|]+) \|", re.MULTILINE)
SDK_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")


def readme_rows() -> dict[str, str]:
    """The rows of the README's language-model table: variable → default cell."""
    text = README.read_text(encoding="utf-8")
    table = text.split("<!-- llm-settings -->", 1)[1].split("<!-- /llm-settings -->", 1)[0]
    return {row["name"]: row["default"].strip() for row in ROW.finditer(table)}


def written(default: object) -> str:
    """How the README writes a default: ``none``, a number as Python's ``g`` format, a name in
    backticks."""
    if default is None:
        return "none"
    if isinstance(default, bool):
        return "on" if default else "off"
    if isinstance(default, int | float):
        return f"{default:g}"
    return f"`{default}`"


def test_readme_lists_every_llm_setting_with_its_real_default():
    rows = readme_rows()
    expected = {
        f"AWAI_LLM__{name.upper()}": written(field.default)
        for name, field in LanguageModelSettings.model_fields.items()
    }
    listed = {name: cell for name, cell in rows.items() if name.startswith("AWAI_LLM__")}
    table = "\n".join(f"| `{name}` | {default} | … |" for name, default in expected.items())
    assert set(listed) == set(expected), f"the README should list exactly:\n{table}"
    wrong = {
        name: (cell, expected[name])
        for name, cell in listed.items()
        if not (cell == expected[name] or cell.startswith(expected[name] + " "))
    }
    assert not wrong, f"README default cell vs the settings' default: {wrong}"
    assert all(name in rows for name in SDK_VARIABLES)


@pytest.fixture()
def fake():
    with FakeAnthropic() as server:
        yield server


def test_the_sdks_own_variables_reach_the_model(fake, monkeypatch, tmp_path):
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    settings = load_settings(data_dir=tmp_path, _env_file=None)
    backend = AnthropicBackend(settings.llm, settings.limits)

    summary = backend.summarise_schema("Mia", ["Mia wants the fix shipped before launch."])

    assert summary  # the fake refuses any other key with 401, so the SDK's variables were used
    assert len(fake.requests) == 1


def test_awai_key_wins_over_the_sdks(fake, monkeypatch, tmp_path):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-someone-elses")
    monkeypatch.setenv("AWAI_LLM__API_KEY", API_KEY)
    monkeypatch.setenv("AWAI_LLM__BASE_URL", fake.base_url)
    settings = load_settings(data_dir=tmp_path, _env_file=None)

    assert settings.llm.api_key is not None
    assert settings.llm.api_key.get_secret_value() == API_KEY
    assert AnthropicBackend(settings.llm, settings.limits).summarise_schema("Mia", ["A thought."])
