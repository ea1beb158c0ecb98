"""``bench/reading_quality.py`` runs end to end against the local fake (which grades every reading
the same way), so its code path is exercised without a key or ``../shared``; without a key it only
says what it would do."""

from __future__ import annotations

import re

import pytest

from bench.reading_quality import RUBRIC, main
from tests.fake_anthropic import API_KEY, FakeAnthropic


@pytest.fixture()
def fake():
    with FakeAnthropic() as server:
        yield server


@pytest.mark.slow
def test_with_a_key_each_reading_is_graded_against_the_rubric(fake, monkeypatch, capsys):
    monkeypatch.setenv("AWAI_LLM__API_KEY", API_KEY)
    monkeypatch.setenv("AWAI_LLM__BASE_URL", fake.base_url)

    code = main(["--sources", "samples", "--samples", "en", "--messages", "2"])

    out = " ".join(re.sub("[│┃]", " ", capsys.readouterr().out).split())  # the table's cells
    assert code == 0
    gradings = [r for r in fake.requests if r.body["system"] == RUBRIC]
    assert len(gradings) == 2  # m048, the featured message, and one more
    request = gradings[-1].user_text()
    assert "<message>[m048] Aiko:" in request  # the featured message
    assert "<later>\n[m049]" in request  # what came after, shown only to the grader
    assert "Meaning: A canned reading." in request
    assert "sample en m048 1 1 1 1 4/8 canned" in out  # the fake's grade: 1 on each criterion
    assert "sample en (mean) 2 graded 1.00 1.00 1.00 1.00 4.00/8" in out


def test_without_a_key_it_says_what_it_would_do_and_exits_0(capsys):
    code = main(["--sources", "samples", "--messages", "2"])

    out = capsys.readouterr().out
    assert code == 0
    assert "No key: set ANTHROPIC_API_KEY" in out
    assert "sample en: ingest 55 messages with the model and grade the readings of 2" in out
    assert "nothing_later" in out
