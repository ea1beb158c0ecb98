"""Test data for the schema tests: topic sentences, unrelated chatter, and the sample's topics.

Topic sentences are a subject and a predicate of one topic, so each topic's sentences share
meaning but few exact words with the others; the chatter lines share no topic at all.
"""

from __future__ import annotations

import itertools
import random

from awai_engine.values import Utterance

TOPICS: dict[str, tuple[list[str], list[str]]] = {
    "battery": (
        ["The background sync", "Our Android app", "The sync worker", "The overnight job"],
        [
            "drains the battery far too fast",
            "kills the phone battery overnight",
            "keeps the radio awake and wastes power",
            "tops the battery usage list on Samsung phones",
        ],
    ),
    "pricing": (
        ["The Pro plan", "The seven day trial", "Our pricing page", "The free tier"],
        [
            "should cost less per month",
            "needs a cheaper annual subscription",
            "is too expensive for students",
            "must show the price in local currency",
        ],
    ),
    "accessibility": (
        ["Swipe to snooze", "The reminder card", "The comparison table", "The snooze sheet"],
        [
            "is unusable with a screen reader",
            "needs an accessibility label for VoiceOver",
            "has no TalkBack alternative for blind users",
            "breaks keyboard focus order for assistive technology",
        ],
    ),
    "food": (
        ["The ramen place", "The pizza at lunch", "Friday's team dinner", "The new sushi bar"],
        [
            "was delicious and cheap",
            "tastes amazing with extra spice",
            "is my favourite meal this week",
            "needs a bigger portion of noodles",
        ],
    ),
}

CHATTER = [
    "What time is it in Berlin?",
    "My cat knocked the plant over again.",
    "Can you share the link?",
    "The printer on floor two is jammed.",
    "Happy birthday, Sam!",
    "I parked in the wrong spot this morning.",
    "Is the heating broken again?",
    "Who left their umbrella by the door?",
]

# The shipped sample (awai_engine/samples/team_launch.jsonl): thoughts that are plainly about
# accessibility (Carla) and about battery drain (Dev), by thought key.
SAMPLE_ACCESSIBILITY = {
    "m009#1", "m009#2", "m015#0", "m015#1", "m034#1", "m034#2", "m038#0", "m038#2",
    "m041#0", "m041#1", "m046#0", "m046#1", "m053#0",
}  # fmt: skip
SAMPLE_BATTERY = {
    "m003#0", "m003#1", "m005#1", "m005#2", "m007#2", "m049#1", "m051#0", "m051#1",
}  # fmt: skip


def topic_sentences(topics: list[str], per_topic: int, seed: int = 0) -> list[tuple[str, str]]:
    """``per_topic`` (sentence, topic) pairs per topic, in a seeded shuffled order."""
    rng = random.Random(seed)
    found = []
    for topic in topics:
        subjects, predicates = TOPICS[topic]
        pairs = list(itertools.product(subjects, predicates))
        rng.shuffle(pairs)
        found += [(f"{subject} {predicate}.", topic) for subject, predicate in pairs[:per_topic]]
    rng.shuffle(found)
    return found


def said(
    channel: str, speaker: str, texts: list[str], start: int, thread: str | None = None
) -> list[Utterance]:
    """One message per text by ``speaker``, ids ``m<number>`` from ``start``, one second apart."""
    return [
        Utterance(
            channel=channel,
            message_id=f"m{start + offset:04d}",
            speaker_id=speaker,
            speaker_name=speaker.title(),
            text=text,
            ts=float(start + offset),
            thread_root=thread,
        )
        for offset, text in enumerate(texts)
    ]
