"""Addressing cues of association: who a message is said to points at what it answers.

Synthetic conversations on the real engine (MiniLM, SQLite, Chroma). Meaning recall is switched
off (θ = 1) unless a test is about how cues and meaning share the budget, so what is recalled can
only have come from the cue under test.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

from awai_engine.association.bars import threshold
from awai_engine.association.settings import RecallRules
from awai_engine.embedding import Embedder
from awai_engine.values import Association, Utterance
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from tests.factories import utterance

CHANNEL = "terminal:local:test"
NO_MEANING = {"theta_0": 1.0, "slope": 0.0, "theta_max": 1.0}
NO_CUES = {"addressed_recent": 0, "addressed_speaker_recent": 0, "own_recent": 0}
FILLER = [
    "Lunch is at noon today.",
    "The office plants need water.",
    "Who booked the big meeting room?",
    "My train was late again this morning.",
    "The coffee machine is broken.",
    "Parking passes are at reception.",
]


def said(message_id: str, text: str, speaker: str, to: Sequence[str] = ()) -> Utterance:
    """An utterance whose adapter resolved ``to`` as the display names it addresses."""
    return utterance(message_id, text, speaker).model_copy(update={"addressees": tuple(to)})


def filler(start: int, count: int, speaker: str = "cy") -> list[Utterance]:
    return [
        said(f"m{i:03d}", FILLER[i % len(FILLER)], speaker) for i in range(start, start + count)
    ]


def recalled(runtime: Runtime, message_id: str) -> dict[str, Association]:
    """What recall found (the reply-target scorer's own additions, reason ``reply``, aside)."""
    context = runtime.engine.context(CHANNEL, message_id, EVERYTHING)
    return by_recall(context.associations)


def by_recall(items: Sequence[Association]) -> dict[str, Association]:
    return {item.source.message_id: item for item in items if item.reason != "reply"}


def cue_runtime(make_runtime: Callable[..., Runtime], name: str = "data", **cues: int) -> Runtime:
    return make_runtime(name, association={**NO_MEANING, **NO_CUES, **cues})


def test_addressing_someone_recalls_their_latest_message_with_honest_numbers(
    make_runtime: Callable[..., Runtime], embedder: Embedder
) -> None:
    runtime = cue_runtime(make_runtime, addressed_recent=1)
    runtime.engine.ingest(
        [
            said("m000", "Try booting with the nomodeset option.", "bo"),
            *filler(1, 8),
            said("m009", "thanks, the screen works now", "al", to=["Bo"]),
        ]
    )
    item = recalled(runtime, "m009")["m000"]
    assert item.reason == "addressed"
    assert item.distance == 8
    source, cue = embedder.encode(
        ["Try booting with the nomodeset option.", "thanks, the screen works now"]
    )
    assert item.similarity == pytest.approx(float(source @ cue), abs=1e-5)
    assert item.threshold == pytest.approx(float(threshold(8, runtime.settings.association)))
    assert item.similarity < item.threshold  # recalled by the cue, not by meaning
    assert item.occurrences >= 1 and np.isfinite(item.activation)


@pytest.mark.slow
def test_a_name_as_the_first_words_addresses_like_a_mention_when_the_setting_is_on(
    make_runtime: Callable[..., Runtime],
) -> None:
    messages = [
        said("m000", "Try booting with the nomodeset option.", "bo"),
        *filler(1, 8),
        said("m009", "bo - thanks, the screen works now", "al"),  # no @ and no colon
    ]
    edge = cue_runtime(make_runtime, "edge", addressed_recent=1)
    plain = make_runtime(
        "plain",
        association={
            **NO_MEANING,
            **NO_CUES,
            "addressed_recent": 1,
            "rules": RecallRules(edge_names_address=False),
        },
    )
    for runtime in (edge, plain):
        runtime.engine.ingest(messages)
    assert {k: v.reason for k, v in recalled(edge, "m009").items()} == {"m000": "addressed"}
    assert recalled(plain, "m009") == {}


def test_the_addressing_cue_off_recalls_nothing_by_addressing(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = cue_runtime(make_runtime)
    runtime.engine.ingest(
        [
            said("m000", "Try booting with the nomodeset option.", "bo"),
            *filler(1, 8),
            said("m009", "thanks, the screen works now", "al", to=["Bo"]),
        ]
    )
    assert recalled(runtime, "m009") == {}


def test_addressee_names_match_whatever_their_case(make_runtime: Callable[..., Runtime]) -> None:
    runtime = cue_runtime(make_runtime, addressed_recent=1)
    runtime.engine.ingest(
        [
            said("m000", "Try booting with the nomodeset option.", "bo"),
            *filler(1, 8),
            said("m009", "thanks, the screen works now", "al", to=["BO"]),
        ]
    )
    assert recalled(runtime, "m009")["m000"].reason == "addressed"


def test_latest_messages_count_the_flow_so_an_addressee_just_heard_adds_nothing_older(
    make_runtime: Callable[..., Runtime],
) -> None:
    messages = [
        said("m000", "Check the kernel log for errors.", "bo"),
        *filler(1, 6),
        said("m007", "Or try the other cable.", "bo"),  # in the flow of m009 (C = 4)
        said("m008", "The coffee machine is broken.", "cy"),
        said("m009", "ok, will do", "al", to=["Bo"]),
    ]
    one = cue_runtime(make_runtime, "one", addressed_recent=1)
    one.engine.ingest(messages)
    assert recalled(one, "m009") == {}
    two = cue_runtime(make_runtime, "two", addressed_recent=2)
    two.engine.ingest(messages)
    assert list(recalled(two, "m009")) == ["m000"]


def test_a_message_recalls_the_latest_message_that_addressed_its_speaker(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = cue_runtime(make_runtime, addressed_speaker_recent=1)
    runtime.engine.ingest(
        [
            said("m000", "Can you restart the build server?", "bo", to=["Al"]),
            said("m001", "Could you look at the failing test?", "dee", to=["Al"]),
            *filler(2, 8),
            said("m010", "done, it is back up", "al"),
        ]
    )
    items = recalled(runtime, "m010")
    assert list(items) == ["m001"]
    assert items["m001"].reason == "addressed-speaker"


def test_a_speaker_continuing_recalls_their_own_previous_message(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = cue_runtime(make_runtime, own_recent=1)
    runtime.engine.ingest(
        [
            said("m000", "My laptop will not wake from suspend.", "al"),
            *filler(1, 8),
            said("m009", "also the fan keeps spinning", "al"),
        ]
    )
    items = recalled(runtime, "m009")
    assert list(items) == ["m000"]
    assert items["m000"].reason == "own"


def test_cues_look_back_no_further_than_their_window(
    make_runtime: Callable[..., Runtime],
) -> None:
    messages = [
        said("m000", "Try booting with the nomodeset option.", "bo"),
        *filler(1, 12),
        said("m013", "thanks, the screen works now", "al", to=["Bo"]),
    ]
    near = cue_runtime(make_runtime, "near", addressed_recent=1, cue_window=13)
    near.engine.ingest(messages)
    assert "m000" in recalled(near, "m013")
    far = cue_runtime(make_runtime, "far", addressed_recent=1, cue_window=12)
    far.engine.ingest(messages)
    assert recalled(far, "m013") == {}


@pytest.mark.slow
def test_cues_come_first_and_share_the_budget_with_meaning_one_item_per_source(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(
        association={
            "max_items": 3,
            "theta_0": -1.0,
            "slope": 0.0,
            "theta_max": -1.0,
            "addressed_recent": 2,
            "addressed_speaker_recent": 0,
            "own_recent": 0,
            "rules": RecallRules(
                exchange_window=0,  # the filler's speaker is a stranger to Al's exchange
                conversation_window=0,  # …and outside Al's conversation: no bar for either
            ),
        }
    )
    runtime.engine.ingest(
        [
            said("m000", "Try booting with the nomodeset option.", "bo"),
            said("m001", "Or reinstall the graphics driver.", "bo"),
            *filler(2, 8),
            said("m010", "thanks, the screen works now", "al", to=["Bo"]),
        ]
    )
    context = runtime.engine.context(CHANNEL, "m010", EVERYTHING)
    reasons = [
        (message_id, item.reason) for message_id, item in by_recall(context.associations).items()
    ]
    assert reasons[:2] == [("m001", "addressed"), ("m000", "addressed")]
    assert len(reasons) == 3 and reasons[2][1] == "meaning"
    assert len({source for source, _ in reasons}) == 3
    assert not {source for source, _ in reasons} & set(context.flow.message_ids())


def test_a_later_message_of_the_addressee_never_changes_an_earlier_reading(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = cue_runtime(make_runtime, addressed_recent=1, addressed_speaker_recent=1)
    conversation = [
        said("m000", "Try booting with the nomodeset option.", "bo"),
        *filler(1, 8),
        said("m009", "thanks, the screen works now", "al", to=["Bo"]),
    ]
    runtime.engine.ingest(conversation)
    before = runtime.engine.context(CHANNEL, "m009", EVERYTHING)
    runtime.engine.ingest(
        [
            said("m010", "Glad it works. Also update the BIOS.", "bo", to=["Al"]),
            said("m011", "The coffee machine is broken.", "cy"),
        ]
    )
    assert runtime.engine.context(CHANNEL, "m009", EVERYTHING) == before
    assert list(by_recall(before.associations)) == ["m000"]
