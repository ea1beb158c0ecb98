"""Flow (spec §2), association (§3) and activation (§5) on real embeddings and a real store."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from awai_engine.association.activation import base_level_activation
from awai_engine.association.bars import threshold
from awai_engine.association.settings import AssociationSettings, RecallRules
from awai_engine.backends.offline import SUMMARY_WIDTH
from awai_engine.settings import Settings, SettingsError, load_settings
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from tests.factories import utterance

FILLER = [
    "Lunch is at noon today.",
    "The office plants need water.",
    "Who booked the big meeting room?",
    "My train was late again this morning.",
    "The coffee machine is broken.",
    "Happy birthday to Sam!",
    "Parking passes are at reception.",
    "The printer on floor two is jammed.",
]


def top_level_channel(runtime: Runtime, count: int) -> None:
    runtime.engine.ingest(
        utterance(f"m{i:03d}", f"Message number {i} says something. It has two parts.", ts=i)
        for i in range(count)
    )


def test_flow_keeps_previous_utterance_as_thoughts_and_capacity_minus_one_summaries(
    runtime: Runtime,
) -> None:
    top_level_channel(runtime, 10)
    flow = runtime.engine.context("terminal:local:test", "m009", EVERYTHING).flow
    assert flow.line == "top-level"
    assert flow.previous is not None
    assert flow.previous.message.message_id == "m008"
    assert [t.text for t in flow.previous.thoughts] == [
        "Message number 8 says something.",
        "It has two parts.",
    ]
    assert [s.message.message_id for s in flow.earlier] == ["m005", "m006", "m007"]
    # Offline, an earlier message is its start as said, not its first sentence alone (which
    # read as if it were all the speaker said).
    assert all(
        s.summary == f"Message number {s.message.position} says something. It has two parts."
        for s in flow.earlier
    )


def test_an_earlier_long_message_shows_its_start_as_said_and_says_it_goes_on(
    runtime: Runtime,
) -> None:
    long = "Morning all. " + "Kicking off launch planning for the reminders release today. " * 4
    runtime.engine.ingest(
        [
            utterance("m001", long, ts=1),
            utterance("m002", "Sounds good.", ts=2),
            utterance("m003", "Next item.", ts=3),
        ]
    )
    flow = runtime.engine.context("terminal:local:test", "m003", EVERYTHING).flow
    (earlier,) = flow.earlier
    assert earlier.summary.startswith("Morning all. Kicking off launch planning")
    assert earlier.summary.endswith("…") and len(earlier.summary) <= SUMMARY_WIDTH


@pytest.mark.parametrize("capacity", [3, 5])
def test_flow_capacity_is_the_configured_number_of_chunks(
    make_runtime: Callable[..., Runtime], capacity: int
) -> None:
    runtime = make_runtime(flow={"capacity": capacity})
    top_level_channel(runtime, 10)
    flow = runtime.engine.context("terminal:local:test", "m009", EVERYTHING).flow
    assert len(flow.earlier) + 1 == capacity


def test_flow_capacity_outside_three_to_five_is_a_clear_configuration_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWAI_FLOW__CAPACITY", "6")
    with pytest.raises(SettingsError, match="AWAI_FLOW__CAPACITY"):
        load_settings(_env_file=None)


def test_first_message_has_empty_flow_and_no_associations(runtime: Runtime) -> None:
    top_level_channel(runtime, 3)
    context = runtime.engine.context("terminal:local:test", "m000", EVERYTHING)
    assert context.flow.previous is None and context.flow.earlier == ()
    assert context.associations == ()


def test_thread_reply_flow_is_its_thread_and_top_level_flow_skips_thread_replies(
    runtime: Runtime,
) -> None:
    runtime.engine.ingest(
        [
            utterance("m001", "Top level one."),
            utterance("m002", "Thread root about deploys."),
            utterance("m003", "Top level three."),
            utterance("m004", "First reply in the thread.", thread="m002"),
            utterance("m005", "Top level five."),
            utterance("m006", "Second reply in the thread.", thread="m002"),
            utterance("m007", "Third reply in the thread.", thread="m002"),
            utterance("m008", "Top level eight."),
        ]
    )
    reply = runtime.engine.context("terminal:local:test", "m007", EVERYTHING).flow
    assert reply.line == "thread"
    assert reply.previous is not None and reply.previous.message.message_id == "m006"
    assert [s.message.message_id for s in reply.earlier] == ["m002", "m004"]
    top = runtime.engine.context("terminal:local:test", "m008", EVERYTHING).flow
    assert top.line == "top-level"
    assert top.previous is not None and top.previous.message.message_id == "m005"
    assert [s.message.message_id for s in top.earlier] == ["m001", "m002", "m003"]


def test_threshold_rises_with_distance_and_never_passes_its_ceiling() -> None:
    settings = AssociationSettings(theta_0=0.3, slope=0.1, d_0=5, theta_max=0.6)
    values = threshold(np.arange(0, 10_000), settings)
    assert values[0] == pytest.approx(0.3)
    assert np.all(np.diff(values) >= 0)
    assert values.max() == pytest.approx(0.6)


def returning_topic(runtime: Runtime, gap: int) -> None:
    messages = [
        utterance(
            "m000", "The database migration failed last night because the disk filled up.", "bo"
        )
    ]
    messages += [utterance(f"m{i:03d}", FILLER[i % len(FILLER)], "cy") for i in range(1, gap + 1)]
    messages.append(
        utterance(
            f"m{gap + 1:03d}", "Did the database migration fail again because of the disk?", "al"
        )
    )
    runtime.engine.ingest(messages)


def test_association_recalls_a_returning_topic_with_its_reasons(runtime: Runtime) -> None:
    returning_topic(runtime, gap=12)
    context = runtime.engine.context("terminal:local:test", "m013", EVERYTHING)
    recalled = {item.source.message_id: item for item in context.associations}
    assert "m000" in recalled
    item = recalled["m000"]
    assert item.distance == 12
    assert item.source.speaker_name == "Bo"
    assert item.similarity >= item.threshold
    expected = float(threshold(12, runtime.settings.association))
    assert item.threshold == pytest.approx(expected, abs=1e-6)
    assert item.occurrences >= 1 and np.isfinite(item.activation)


@pytest.mark.slow
def test_the_same_similarity_is_recalled_near_but_not_far_when_the_threshold_rises(
    make_runtime: Callable[..., Runtime],
) -> None:
    # θ(d) alone: no slot is kept for the far past, where a closer-than-the-near-past thought
    # may win one (tests/test_lexical_recall.py).
    steep = {"theta_0": 0.3, "slope": 0.4, "d_0": 4.0, "theta_max": 0.95, "far_items": 0}
    near = make_runtime("near", association=steep)
    returning_topic(near, gap=5)
    far = make_runtime("far", association=steep)
    returning_topic(far, gap=60)
    near_ids = {
        a.source.message_id
        for a in near.engine.context("terminal:local:test", "m006", EVERYTHING).associations
    }
    far_context = far.engine.context("terminal:local:test", "m061", EVERYTHING)
    assert "m000" in near_ids
    assert "m000" not in {a.source.message_id for a in far_context.associations}


def test_association_respects_caps_flow_window_and_one_item_per_source(
    make_runtime: Callable[..., Runtime],
) -> None:
    runtime = make_runtime(
        association={"max_items": 2, "theta_0": -1.0, "slope": 0.0, "theta_max": -1.0}
    )
    runtime.engine.ingest(
        utterance(f"m{i:03d}", f"Release note {i}. The release went fine. Deploy finished.", ts=i)
        for i in range(12)
    )
    context = runtime.engine.context("terminal:local:test", "m011", EVERYTHING)
    sources = [a.source.message_id for a in context.associations]
    assert len(sources) == 2 == len(set(sources))
    assert not set(sources) & set(context.flow.message_ids())
    assert all(a.source.position < context.message.position for a in context.associations)
    margins = [a.margin for a in context.associations]
    assert margins == sorted(margins, reverse=True)


def test_activation_grows_with_recurrence_and_decays_with_age(runtime: Runtime) -> None:
    said = "We should move the standup to ten o'clock."
    other = "The quarterly report is due on Friday."
    runtime.engine.ingest(
        [
            utterance("m000", said),
            utterance("m001", said),
            utterance("m002", said),
            utterance("m003", other),
            *(utterance(f"m{i:03d}", FILLER[i % len(FILLER)]) for i in range(4, 30)),
            utterance("m030", "Reading time."),
        ]
    )
    timeline = runtime.store.timeline("terminal:local:test")
    activation = runtime.settings.activation
    row_of = {timeline.messages[p].message_id: timeline.messages[p].first_row for p in range(31)}
    (repeated, single), (count_repeated, count_single) = base_level_activation(
        timeline, 30, [row_of["m002"], row_of["m003"]], activation
    )
    assert count_repeated == 3 and count_single == 1
    assert repeated > single
    (younger,), _ = base_level_activation(timeline, 10, [row_of["m003"]], activation)
    (older,), _ = base_level_activation(timeline, 30, [row_of["m003"]], activation)
    assert younger > older
    assert older == pytest.approx(np.log((30 - 3) ** -activation.decay))


def test_channels_are_isolated(runtime: Runtime) -> None:
    for channel in ("terminal:local:alpha", "terminal:local:beta"):
        prefix = channel.rsplit(":", 1)[1]
        runtime.engine.ingest(
            utterance(f"{prefix}{i}", text, channel=channel, ts=i)
            for i, text in enumerate(
                ["The database migration failed.", *FILLER, "Did the database migration fail?"]
            )
        )
    for channel, prefix, other in (
        ("terminal:local:alpha", "alpha", "beta"),
        ("terminal:local:beta", "beta", "alpha"),
    ):
        context = runtime.engine.context(channel, f"{prefix}{len(FILLER) + 1}", EVERYTHING)
        assert context.associations, "the returning topic is recalled within the channel"
        cited = context.cited_message_ids()
        assert all(message_id.startswith(prefix) for message_id in cited)
        assert not any(message_id.startswith(other) for message_id in cited)


def test_settings_reject_a_threshold_outside_minus_one_to_one() -> None:
    with pytest.raises(SettingsError, match="AWAI_ASSOCIATION__THETA_0"):
        load_settings(association={"theta_0": 1.5}, _env_file=None)
    assert Settings(_env_file=None).flow.capacity == 4  # type: ignore[call-arg]


def test_a_recall_rule_set_in_the_environment_is_refused_with_where_it_went(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Once a setting, now a rule fitted on human links that production keeps: an .env that still
    # sets it must not lose the value silently, and must learn where the rule went.
    monkeypatch.setenv("AWAI_ASSOCIATION__CONVERSATION_Z", "3")
    with pytest.raises(SettingsError) as refused:
        load_settings(_env_file=None)
    message = str(refused.value)
    assert "AWAI_ASSOCIATION__CONVERSATION_Z: no longer a setting" in message
    assert "bench/eval_association.py --variant NAME:rules.FIELD=VALUE" in message
    monkeypatch.delenv("AWAI_ASSOCIATION__CONVERSATION_Z")
    monkeypatch.setenv("AWAI_ASSOCIATION__RULES__FAR_SCORE_BAR", "4")
    with pytest.raises(SettingsError, match="AWAI_ASSOCIATION__RULES__FAR_SCORE_BAR"):
        load_settings(_env_file=None)


def test_an_operators_association_setting_still_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWAI_ASSOCIATION__FAR_ITEMS", "2")
    monkeypatch.setenv("AWAI_ACTIVATION__DECAY", "0.7")
    settings = load_settings(_env_file=None)
    assert (settings.association.far_items, settings.activation.decay) == (2, 0.7)
    assert settings.association.rules == RecallRules()  # the fitted rules, untouched
