"""Offline names of schemas: keyphrases that set a schema apart from the speaker's other thoughts."""

from __future__ import annotations

from awai_engine.schemas.naming import as_written, keyphrases, offline_name
from awai_engine.text import words


def test_words_the_speaker_uses_everywhere_rank_below_what_only_this_concern_says() -> None:
    members = [
        "The app drains the battery overnight.",
        "Battery drain on the app is the top complaint.",
        "The sync worker keeps the app awake and drains the battery.",
    ]
    others = [
        "The app needs a new onboarding screen.",
        "Our app store rating dropped.",
        "Can the app show prices in euros?",
    ]
    found = keyphrases(members, others)
    assert found[0] in {"battery", "drains the battery", "drains"}
    assert "app" not in found[:2]  # said in every thought of the speaker
    assert all(len(phrase.split()) <= 2 for phrase in found)


def test_a_phrase_that_always_comes_whole_replaces_its_words() -> None:
    members = [
        "Add an idempotency key to the charge.",
        "Without an idempotency key a retry charges twice.",
        "Every request needs its idempotency key.",
    ]
    found = keyphrases(members, ["Lunch at noon?", "The standup moved to ten."])
    assert "idempotency key" in found
    assert "idempotency" not in found and "key" not in found


def test_japanese_keyphrases_are_content_words_without_particles() -> None:
    members = [
        "決済画面のテストがありません。",
        "決済と同期の回帰テストを自動化したいです。",
        "テスト端末も足りません。",
    ]
    others = ["お昼はそば屋にしましょう。", "予算は八割使っています。"]
    found = keyphrases(members, others)
    assert found[0] == "テスト"
    assert all(not any("\u3040" <= char <= "\u309f" for char in phrase) for phrase in found)
    assert words("個人情報の同意が必要です") == ["個人情報", "同意", "必要"]


def test_a_schema_with_no_shared_term_is_named_by_its_most_central_thought() -> None:
    assert keyphrases(["👍", "it is"], ["thanks"]) == ()
    assert offline_name((), "We keep slipping the date.") == "We keep slipping the date."
    assert offline_name(("retry", "charged twice", "checkout", "refund"), "x") == (
        "retry, charged twice, checkout"
    )


def test_names_spell_words_as_the_speaker_writes_them_inside_a_sentence() -> None:
    members = [
        "Checkout with Apple Pay fails when the PR for retries is not merged.",
        "Apple Pay retries again: the PR still waits for review.",
        "Retries under load break Apple Pay, so the PR matters.",
    ]
    found = keyphrases(members, ["Lunch at noon?", "The standup moved to ten."])
    assert "Apple Pay" in found and "PR" in found
    assert "retries" in found  # capitalised only where a sentence starts: written lower-case


def test_latin_words_inside_japanese_keep_their_spelling_and_fillers_name_nothing() -> None:
    said = ["来週DC移行です。", "DCの切り替えでDBが止まる心配があります。"]
    assert as_written("dc", said) == "DC" and as_written("db", said) == "DB"
    members = [
        "I think the launch weekend rota is like unfair.",
        "The launch weekend rota again, I really think it needs a swap.",
        "Like I said, who covers the launch weekend rota?",
    ]
    found = keyphrases(members, ["Lunch at noon?", "The standup moved to ten."])
    assert "launch weekend" in " ".join(found)
    assert not {"like", "think", "really", "said"} & set(found)
