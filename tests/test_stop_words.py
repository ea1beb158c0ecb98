"""The stop list a reading names preconceptions with is scikit-learn's, without importing it."""

from __future__ import annotations

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS as SCIKIT_LEARNS

from awai_engine.stop_words import ENGLISH_STOP_WORDS


def test_the_stop_list_is_the_installed_scikit_learns() -> None:
    assert ENGLISH_STOP_WORDS == SCIKIT_LEARNS
