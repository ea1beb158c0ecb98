"""Offline names of schemas: keyphrases that set a schema apart from the speaker's other thoughts."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from awai_engine.schemas.basis import Basis, RowVectors
from awai_engine.schemas.naming import (
    KEYPHRASES,
    _overlaps,
    _said_in_phrases,
    as_written,
    keyphrases,
    known_names,
    known_speakers_key,
    offline_name,
    terms,
    version_keyphrases,
)
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


def test_a_japanese_name_lists_its_phrases_with_the_japanese_comma() -> None:
    assert offline_name(("復元", "テスト", "DC", "手順"), "x") == "復元、テスト、DC"


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


# -- naming a version costs its members, and names exactly what counting its prefix would name --

ENGLISH = (
    "battery",
    "drain",
    "sync",
    "worker",
    "app",
    "Apple",
    "Pay",
    "PR",
    "retries",
    "checkout",
    "refund",
    "launch",
    "weekend",
    "rota",
    "idempotency",
    "key",
    "Postgres",
    "migration",
    "deadline",
    "standup",
    "budget",
    "we",
    "the",
    "is",
    "again",
)
JAPANESE = (
    "決済",
    "テスト",
    "同期",
    "端末",
    "予算",
    "移行",
    "回帰",
    "画面",
    "障害",
    "設計",
    "DC",
    "API",
)
PARTICLES = ("の", "を", "が", "と", "は")


def _straightforward(
    members: list[str], others: list[str], count: int = KEYPHRASES
) -> tuple[str, ...]:
    """c-TF-IDF as first written: both classes counted whole by ``CountVectorizer`` (the oracle)."""
    from sklearn.feature_extraction.text import CountVectorizer

    if not members:
        return ()
    vectorizer = CountVectorizer(analyzer=terms)
    try:
        counts = (
            vectorizer.fit_transform(["\x1e".join(members), "\x1e".join(others)])
            .toarray()
            .astype(np.float64)
        )
    except ValueError:
        return ()
    vocabulary = vectorizer.get_feature_names_out()
    frequency = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
    average = counts.sum() / len(counts)
    score = frequency[0] * np.log(1.0 + average / np.maximum(counts.sum(axis=0), 1.0))
    counter = CountVectorizer(analyzer=terms, vocabulary=vocabulary, binary=True)
    recurring = np.asarray(counter.transform(members).sum(axis=0)).ravel() >= 2
    chosen: list[tuple[str, set[str], float]] = []
    order = np.lexsort((vocabulary, -score, ~recurring))
    if recurring[counts[0] > 0].any():  # only what recurs, when anything does
        order = order[recurring[order]]
    for index in order:
        term, tokens, said = (
            str(vocabulary[index]),
            set(str(vocabulary[index]).split()),
            counts[0, index],
        )
        if said == 0:
            continue
        held = [n for n, kept in enumerate(chosen) if _overlaps(term, tokens, kept[0], kept[1])]
        if not held:
            if len(chosen) < count:
                chosen.append((term, tokens, said))
        elif all(tokens > chosen[n][1] and said >= chosen[n][2] for n in held):
            chosen[held[0]] = (term, tokens, said)
            for n in reversed(held[1:]):
                del chosen[n]
    counted = Counter(term for member in members for term in terms(member))
    thoughts_with = Counter(term for member in members for term in set(terms(member)))
    chosen = _said_in_phrases(chosen, counted, thoughts_with)
    return tuple(as_written(term, members) for term, _, _ in chosen)


def _by_prefix(texts: list[str], keys: list[str], members: list[str], version: int):
    """A version's keyphrases the straightforward way: its first ``version`` thoughts, split."""
    formed = range(min(version, len(keys)))
    inside = [texts[row] for row in formed if keys[row] in set(members)]
    outside = [texts[row] for row in formed if keys[row] not in set(members)]
    return _straightforward(inside, outside)


@st.composite
def _thought(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        said = draw(st.lists(st.sampled_from(ENGLISH), min_size=1, max_size=9))
        if draw(st.booleans()):
            said[0] = said[0].capitalize()
        return " ".join(said) + draw(st.sampled_from([".", "?", "!", ""]))
    said = draw(st.lists(st.sampled_from(JAPANESE), min_size=1, max_size=6))
    glue = draw(st.lists(st.sampled_from(PARTICLES), min_size=len(said), max_size=len(said)))
    return "".join(w + p for w, p in zip(said, glue, strict=True)) + "。"


@st.composite
def _speaker(draw: st.DrawFn):
    """A speaker's thoughts, the versions a re-clustering would name on them (members drawn from
    and beyond each version's prefix), and an edit of one earlier thought."""
    texts = draw(st.lists(_thought(), min_size=1, max_size=40))
    keys = [f"m{row:03d}#0" for row in range(len(texts))]
    versions = draw(
        st.lists(
            st.tuples(
                st.integers(1, len(texts) + 2),
                st.lists(st.sampled_from([*keys, "gone#0"]), max_size=12),
            ),
            min_size=1,
            max_size=8,
        )
    )
    edited = draw(st.integers(0, len(texts) - 1))
    return texts, keys, versions, edited, draw(_thought())


@given(_speaker())
@settings(max_examples=100, deadline=None)
@pytest.mark.slow
def test_a_version_is_named_as_counting_its_first_thoughts_from_scratch_names_it(
    speaker: tuple,
) -> None:
    texts, keys, versions, edited, replacement = speaker
    for version, members in versions:  # in any order: a later call may extend an earlier count
        expected = _by_prefix(texts, keys, members, version)
        assert version_keyphrases(tuple(texts), tuple(keys), members, version) == expected
        inside = [t for t, k in zip(texts[:version], keys, strict=False) if k in set(members)]
        outside = [t for t, k in zip(texts[:version], keys, strict=False) if k not in set(members)]
        assert keyphrases(inside, outside) == _straightforward(inside, outside)
    # An edit is another sequence: it never reads the counts of the one it differs from.
    changed = [*texts[:edited], replacement, *texts[edited + 1 :]]
    for version, members in versions:
        expected = _by_prefix(changed, keys, members, version)
        assert version_keyphrases(tuple(changed), tuple(keys), members, version) == expected
        assert version_keyphrases(texts, keys, members, version) == _by_prefix(
            texts, keys, members, version
        )


def test_a_label_leaves_out_names_addressed_and_amounts_on_their_own() -> None:
    members = [
        "Maya, the checkout cache evicts session keys at 4.2s p99.",
        "thanks Omar. checkout cache eviction again, payments-api 2.13 and v2.14 too.",
        "@sam checkout cache is at 900ms now, 02d since the fix.",
    ]
    found = keyphrases(members, ["Lunch at noon?", "Standup moved."])
    said = {word for phrase in found for word in phrase.lower().split()}
    assert {"checkout", "cache"} <= said
    assert not said & {"maya", "omar", "sam", "4.2s", "2.13", "v2.14", "900ms", "02d"}


def test_a_label_leaves_out_the_channel_speakers_names_even_unaddressed() -> None:
    members = ["ask lena about the gateway retries", "lena says the gateway retries too often"]
    found = version_keyphrases(members, ("a", "b"), ("a", "b"), 2, frozenset({"lena"}))
    assert found and all("lena" not in phrase.lower() for phrase in found)
    assert "gateway" in {word for phrase in found for word in phrase.split()}


def test_fixed_phrases_plain_verbs_and_urls_name_nothing() -> None:
    members = [
        "So far the gateway holds. Can you open a small PR to add jitter? https://x.example/pr/4",
        "So far so good on the gateway; open a small PR to add jitter tomorrow.",
    ]
    said = {word for phrase in keyphrases(members, []) for word in phrase.lower().split()}
    assert {"gateway", "jitter"} <= said
    assert not said & {"far", "open", "small", "add", "tomorrow", "https", "x.example"}


def test_only_words_said_in_more_than_one_thought_name_a_preconception_that_has_them() -> None:
    members = [
        "Eviction of session keys pushes checkout up.",
        "Session keys have no priority, so eviction picks them.",
    ]
    # the phrase replaces both its words; "pushes", "checkout", "picks" are said once
    assert set(keyphrases(members, [])) == {"session keys", "eviction"}


def test_japanese_words_are_a_phrase_only_when_said_together_and_are_written_together() -> None:
    members = ["接続プールの変更を明日入れます。", "接続プールの設定を固定します。"]
    found = keyphrases(members, [])
    assert found[0] == "接続プール"
    assert not any("プール 変更" in phrase or "明日" in phrase for phrase in found)


def test_a_plural_and_its_singular_are_one_word_of_a_label() -> None:
    members = ["The retry storm hit the gateway.", "Retries hit the gateway again; retry less."]
    found = keyphrases(members, [])
    assert not {"retry", "retries"} <= {p.lower() for p in found}


def _omar_asks(speakers: tuple[tuple[str, int], ...], positions: tuple[int, ...] = (1, 5)) -> Basis:
    """Omar's basis of one thought at each of ``positions``, in a channel of ``speakers``
    (each a name and the position of their first message)."""
    return Basis(
        channel="c",
        speaker_id="u1",
        speaker_name="Omar",
        keys=tuple(f"m{p}#0" for p in positions),
        texts=tuple(f"ask #{p}" for p in positions),
        message_ids=tuple(f"m{p}" for p in positions),
        positions=np.array(positions),
        rows=RowVectors(np.zeros((len(positions), 3), dtype=np.float32)),
        digest="d",
        speakers=speakers,
    )


def test_the_names_left_out_are_those_of_speakers_who_had_spoken_when_the_version_formed() -> None:
    basis = _omar_asks((("Lena Park", 0), ("Omar", 1), ("Sam", 3)))
    assert known_names(basis, 1) == {"lena", "park", "omar"}  # Sam came later: causal
    assert known_names(basis, 2) == {"lena", "park", "omar", "sam"}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 1200), min_size=1, max_size=150))
def test_the_names_known_by_a_position_are_found_alike_however_many_positions_were_asked(
    asked: list[int],
) -> None:
    """Naming keeps the name words of each prefix of speakers it was asked about (and keeps
    only some): in whichever order, and however many, positions are asked, each answer is a
    pass over every speaker's name."""
    speakers = tuple((f"user{n} Name{n % 7}", 10 * n) for n in range(100))
    for position in asked:
        assert known_names(_omar_asks(speakers, (position,)), 1) == {
            word for name, first in speakers if first <= position for word in words(name)
        }


def test_the_known_speakers_key_changes_with_a_known_name_and_never_with_a_later_one() -> None:
    """The keyphrases' memo is keyed by the speakers known when the version formed, not by
    their name words: equal for the same speakers however many were asked about since, other
    when a speaker known then had another name, the same when a later speaker comes."""
    known = (("Lena Park", 0), ("Omar", 1))
    first = known_speakers_key(_omar_asks((*known, ("Sam", 3))), 1)
    assert first == known_speakers_key(_omar_asks((*known, ("Sam", 3))), 1)
    assert first == known_speakers_key(_omar_asks((*known, ("Sam", 3), ("Kai", 4))), 1)  # later
    assert first != known_speakers_key(_omar_asks((("Lena", 0), ("Omar", 1), ("Sam", 3))), 1)
    assert first != known_speakers_key(_omar_asks((*known, ("Sam", 3))), 2)  # Sam known by then
    assert known_speakers_key(_omar_asks(()), 1) == ""
    # names that join alike across a separator a display name may hold are still two lists
    joined = known_speakers_key(_omar_asks((("Lena\x1fPark", 0), ("Omar", 1))), 1)
    split = known_speakers_key(_omar_asks((("Lena", 0), ("Park\x1fOmar", 1))), 1)
    assert joined != split


def test_a_word_said_only_inside_phrases_gives_way_to_the_phrase_said_most() -> None:
    members = [
        "The Fast Checkout flow times out on mobile.",
        "Fast Checkout drops the basket after a timeout.",
        "Users want fast shipping and Fast Checkout both.",
        "Checkout timeout again on mobile.",
    ]
    found = keyphrases(members, ["Lunch at noon?", "The standup moved to ten."])
    assert "Fast Checkout" in found  # spelled as the phrase is said, "fast" alone names nothing
    assert "fast" not in found and "Fast" not in found


def test_a_phrase_takes_the_place_of_an_earlier_word_it_holds() -> None:
    members = [
        "復元テストを金曜に実施します。",
        "復元テストの結果、復元は成功。",
        "復元テストで手順を確認。",
        "復元は夜間に。",
    ]
    found = keyphrases(members, ["ランチ行きましょう", "会議は十時からです"])
    assert "復元テスト" in found
    assert "テスト" not in found
    assert [phrase for phrase in found if "復元" in phrase] == ["復元テスト"]
