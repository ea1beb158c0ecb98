"""``awai doctor`` checks the key and the model through the real SDK's ``models.retrieve``, against
the local fake (which answers the Models API as Anthropic's does: the key required, a 404
``not_found_error`` naming an unknown model), and says what is wrong in words an operator can act
on."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from bots.terminal.cli import main
from tests.fake_anthropic import API_KEY, FakeAnthropic


@pytest.fixture()
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def _doctor(tmp_path, capsys) -> tuple[int, str]:
    code = main(["--data-dir", str(tmp_path / "data"), "doctor"])
    out = capsys.readouterr().out
    return code, " ".join(out.split())  # rich may wrap long lines


def _with_key(monkeypatch, base_url: str, key: str = API_KEY, **llm: str) -> None:
    monkeypatch.setenv("AWAI_LLM__API_KEY", key)
    monkeypatch.setenv("AWAI_LLM__BASE_URL", base_url)
    for name, value in llm.items():
        monkeypatch.setenv(f"AWAI_LLM__{name.upper()}", value)


def test_without_a_key_the_doctor_says_the_model_is_off_and_what_that_means(tmp_path, capsys):
    code, out = _doctor(tmp_path, capsys)

    assert code == 0
    assert "Language model: off — no AWAI_LLM__API_KEY or ANTHROPIC_API_KEY is set" in out
    assert "no written interpretation" in out


def test_a_working_key_and_model_give_the_models_display_name(fake, tmp_path, capsys, monkeypatch):
    _with_key(monkeypatch, fake.base_url)

    code, out = _doctor(tmp_path, capsys)

    assert code == 0
    assert f"Language model: ok — Claude Sonnet 5.5 (claude-sonnet-5-5) at {fake.base_url}" in out
    assert fake.requests == []  # a Models API call: no message, nothing billed


@pytest.mark.slow
def test_a_bad_key_is_named_as_a_401_authentication_error(fake, tmp_path, capsys, monkeypatch):
    _with_key(monkeypatch, fake.base_url, key="sk-ant-wrong")

    code, out = _doctor(tmp_path, capsys)

    assert code == 1
    assert "not usable — claude-sonnet-5-5" in out
    assert "the API key was refused (HTTP 401 authentication_error: invalid x-api-key)" in out
    assert "check AWAI_LLM__API_KEY" in out


def test_an_unknown_model_is_a_404_naming_it_with_the_closest_models(
    fake, tmp_path, capsys, monkeypatch
):
    _with_key(monkeypatch, fake.base_url, model="claude-sonnet-5-6")

    code, out = _doctor(tmp_path, capsys)

    assert code == 1
    assert (
        "the model 'claude-sonnet-5-6' was not found"
        " (HTTP 404 not_found_error: model: claude-sonnet-5-6)"
    ) in out
    assert "set AWAI_LLM__MODEL to one your key can use, e.g. claude-sonnet-5-5" in out


def test_an_unreachable_endpoint_is_said_to_be_unreachable(tmp_path, capsys, monkeypatch):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    _with_key(monkeypatch, f"http://127.0.0.1:{port}")

    code, out = _doctor(tmp_path, capsys)

    assert code == 1
    assert f"http://127.0.0.1:{port} could not be reached" in out
    assert "check AWAI_LLM__BASE_URL / ANTHROPIC_BASE_URL and the network" in out


def test_a_model_that_cannot_take_a_configured_effort_is_not_usable(
    fake, tmp_path, capsys, monkeypatch
):
    _with_key(monkeypatch, fake.base_url, model="claude-haiku-4-5")

    code, out = _doctor(tmp_path, capsys)

    assert code == 1
    assert "not usable — Claude Haiku 4.5 (claude-haiku-4-5)" in out
    assert "does not take AWAI_LLM__EXTRACTION_EFFORT=low" in out
    assert "set AWAI_LLM__EXTRACTION_EFFORT=default" in out


def test_a_model_without_structured_outputs_is_not_usable(fake, tmp_path, capsys, monkeypatch):
    _with_key(
        monkeypatch, fake.base_url, model="claude-3-haiku-20240307", extraction_effort="default"
    )

    code, out = _doctor(tmp_path, capsys)

    assert code == 1
    assert "Claude Haiku 3 has no structured outputs, which every AWAI request uses" in out
