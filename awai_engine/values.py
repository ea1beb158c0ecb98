"""Immutable values passed between adapters, the engine and storage.

Adapters turn platform payloads into :class:`Utterance`; the engine turns a stored utterance and
what came before it into a :class:`ReadingContext` and a :class:`Reading`, which each adapter
renders its own way. Nothing here knows a platform or a database.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

CHANNEL_SCOPE = "channel"
"""The visibility scope of a message everyone who may read its channel may see (most messages).
Other scopes are names an adapter chose for narrower audiences (see :mod:`awai_engine.visibility`)."""


class Value(BaseModel):
    """Base of every value: frozen, so a reading cannot be changed after it is made."""

    model_config = ConfigDict(frozen=True)


class Utterance(Value):
    """One chat message, normalised by an adapter.

    ``channel`` is the key ``platform:workspace:channel``. ``ts`` is seconds since the epoch and
    orders the channel; messages with equal ``ts`` keep their arrival order. ``thread_root`` is the
    id of the thread's first message for a reply, else ``None``. ``addressees`` are the display
    names the message mentions (``@name``), already resolved by the adapter. ``scope`` says who may
    see it: :data:`CHANNEL_SCOPE`, or a narrower audience the adapter named (a private thread).
    ``edited_ts`` is when the platform says this text was last edited (``None``: never edited); a
    version with an older edit time never replaces a newer one, however late it arrives.
    """

    channel: str = Field(min_length=1)
    message_id: str = Field(min_length=1)
    speaker_id: str = Field(min_length=1)
    speaker_name: str = Field(min_length=1)
    text: str
    ts: float
    thread_root: str | None = None
    addressees: tuple[str, ...] = ()
    scope: str = Field(CHANNEL_SCOPE, min_length=1)
    edited_ts: float | None = None

    def is_older_than(self, stored_edited_ts: float | None) -> bool:
        """Whether this version is older than a stored one edited at ``stored_edited_ts``.

        ``None`` is the original text. With no edit time stored nothing is older: a changed text
        is then an edit, as sources without edit times (a transcript re-imported) expect.
        """
        if stored_edited_ts is None:
            return False
        return self.edited_ts is None or self.edited_ts < stored_edited_ts

    def brings_back(self, withdrawn_ts: float | None) -> bool:
        """Whether this version undoes a tombstone: only one whose words were edited off the
        platform at ``withdrawn_ts`` (into a command to AWAI, or into none), and only by a
        version edited after that (a redelivered or paged copy of an earlier one cannot).
        ``None`` is a deletion or a forget, which nothing undoes."""
        return (
            withdrawn_ts is not None
            and self.edited_ts is not None
            and self.edited_ts > withdrawn_ts
        )


class Thought(Value):
    """One unit of meaning (claim, proposal, question, feeling, decision) of an utterance."""

    index: int = Field(ge=0)
    text: str = Field(min_length=1)
    fallback: bool = Field(
        False,
        description=(
            "Split offline because the language model did not answer; rewritten by the model"
            " when it answers again."
        ),
    )


class Extraction(Value):
    """What a backend makes of one utterance: its thoughts and a one-line summary."""

    thoughts: tuple[Thought, ...] = Field(min_length=1)
    summary: str
    notes: tuple[str, ...] = ()
    fallback: bool = Field(
        False,
        description=(
            "Made offline because the language model did not answer: to be written again by the"
            " model when it answers (never kept as final)."
        ),
    )


class MessageRef(Value):
    """Enough to name an earlier message and let an adapter link to it."""

    message_id: str
    speaker_id: str
    speaker_name: str
    ts: float
    position: int = Field(ge=0, description="Index of the message in channel order.")
    thread_root: str | None = None
    scope: str = CHANNEL_SCOPE


class FlowUtterance(Value):
    """The immediately preceding utterance of the line, kept as its thoughts (one chunk)."""

    message: MessageRef
    thoughts: tuple[Thought, ...]


class FlowSummary(Value):
    """An earlier utterance of the line, kept as a one-line summary (one chunk)."""

    message: MessageRef
    summary: str


class Flow(Value):
    """The common ground of the line (thread, or the channel's top level), at most C chunks."""

    line: Literal["thread", "top-level"]
    previous: FlowUtterance | None = None
    earlier: tuple[FlowSummary, ...] = Field((), description="Oldest first.")

    def message_ids(self) -> tuple[str, ...]:
        ids = tuple(item.message.message_id for item in self.earlier)
        return (*ids, self.previous.message.message_id) if self.previous else ids


RecallReason = Literal[
    "meaning", "words", "addressed", "addressed-speaker", "own", "reply", "answer"
]


class Association(Value):
    """An earlier thought recalled by meaning or by addressing, with the numbers behind it.

    ``similarity``, ``threshold`` (θ at its distance) and ``activation`` are filled whatever the
    reason, so an item recalled by addressing may sit below its threshold: ``reason`` says so.
    """

    source: MessageRef
    thought: Thought
    cue_index: int = Field(description="Which thought of the message being read recalled it.")
    distance: int = Field(
        ge=0, description="Utterances strictly between the source and the message."
    )
    similarity: float
    threshold: float = Field(
        description=(
            "The similarity bar at its distance: θ(d) near, the far bar far (for an item recalled"
            " by addressing or by words, the bar it did not have to reach)."
        )
    )
    activation: float = Field(description="ACT-R base-level activation B at the message.")
    occurrences: int = Field(
        ge=1, description="Earlier thoughts saying the same thing, itself included."
    )
    important: bool = Field(False, description="In a recalled schema with activation ≥ β.")
    reason: RecallReason = Field(
        "meaning",
        description=(
            "Why it was recalled: close in meaning, sharing the message's rare words, by"
            " addressing (the message addresses its speaker; it addressed the message's speaker;"
            " it is the speaker's own), or as one of the reply-target scorer's best candidates"
            " for what the message responds to."
        ),
    )
    reach: Literal["near", "far"] = Field(
        "near",
        description=(
            "Which budget it took: near (θ(d) is its bar) or far (a slot kept for the far past,"
            " whose bar is relative to the message's similarities to that past)."
        ),
    )
    words_score: float | None = Field(
        None, description="BM25 of its message for the message's words, at the prefix."
    )
    words_share: float | None = Field(
        None, description="Share of the message's word weight (IDF) its message holds."
    )
    shared_words: tuple[str, ...] = Field(
        (), description="Words it shares (their stems), rarest first."
    )

    @property
    def margin(self) -> float:
        return self.similarity - self.threshold


Stance = Literal["supports", "opposes", "unrelated", "undetermined"]


class RecalledSchema(Value):
    """One of the speaker's preconceptions recalled for this message, as of before it."""

    schema_id: str
    version: int = Field(ge=1)
    summary: str
    size: int = Field(ge=1)
    similarity: float
    as_of: int = Field(ge=0, description="Position of the last member when this version was made.")
    stance: Stance = "undetermined"
    stance_reason: str | None = None
    members: tuple[str, ...] = Field(
        (),
        exclude=True,
        description=(
            "Ids of the messages this version was made from, so a post showing it can be"
            " redacted when one goes; never shown, nor sent to a language model."
        ),
    )
    keyphrases: tuple[str, ...] = Field(
        (), description="What the preconception is about, from the speaker's own words."
    )
    returned_by: tuple[int, ...] = Field(
        (),
        description=(
            "Indices of this message's thoughts that belong to the preconception: each is as"
            " close to its members as a thought must be to join it. Non-empty means the speaker"
            " is coming back to it here."
        ),
    )
    examples: tuple[str, ...] = Field(
        (), description="Two or three of its member thoughts, most central first, as examples."
    )


class CoThoughts(Value):
    """The other thoughts of the same utterance, context for one of its thoughts (spec §1)."""

    thought_index: int
    others: tuple[Thought, ...]


NoteKind = Literal[
    "embedding-cut",
    "thoughts-merged",
    "context-trimmed",
    "model-failed",
    "model-malformed",
    "links-dropped",
    "stances-unjudged",
    "fallback-thoughts",
    "history-missing",
    "vectors-rebuilt",
]
"""What a reading note is about; each surface words it in the reader's language."""

TrimmedPart = Literal[
    "recalled-thought",
    "preconception",
    "preconception-example",
    "earlier-summary",
    "previous-thought",
    "own-thought",
    "text",
]
"""A part of a reading's context that can be left out of a language-model request."""

ModelFailure = Literal["unreachable", "refused", "busy", "unreadable", "paused"]
"""Why the language model gave no answer, in words fit for every reader (no HTTP codes)."""


class Trimmed(Value):
    """How many of one part of the context the language model was not shown."""

    part: TrimmedPart
    count: int = Field(ge=1)


class ReadingNote(Value):
    """Something a reader should know about how the reading was made: a kind and its numbers.

    Why structured, not English: the engine and the backends write notes, but only a surface
    knows the reader's language (:mod:`bots.labels` words every kind in English and Japanese),
    and ``--json`` keeps the numbers for tools. Setting names and HTTP codes never go here;
    operators find those in the log.
    """

    kind: NoteKind
    count: int | None = Field(
        None,
        description=(
            "The number the note is about: characters embedded (embedding-cut), thoughts a"
            " message holds (thoughts-merged), connections dropped, stances not judged, thoughts"
            " embedded again into a rebuilt vector index (vectors-rebuilt)."
        ),
    )
    thoughts: tuple[int, ...] = Field(
        (), description="1-based numbers of the message's thoughts the note is about."
    )
    trimmed: tuple[Trimmed, ...] = Field(
        (), description="What the language model was not shown (context-trimmed)."
    )
    failure: ModelFailure | None = Field(None, description="Why the model failed (model-failed).")


class ReplyScore(Value):
    """How likely an earlier message is the one the message responds to, by the fitted
    reply-target model (:mod:`awai_engine.reply_target`)."""

    message: MessageRef
    probability: float = Field(ge=0.0, le=1.0)
    confident: bool = Field(
        False, description="The best candidate, clearing the model's bar: the headline names it."
    )
    asks: bool = Field(False, description="The earlier message asks a question.")
    similarity: float = Field(0.0, description="Best cosine between their thoughts.")
    quote: str = Field(
        "",
        description=(
            "The earlier message's sentence the message is about (the question it answers,"
            " else the closest in meaning and words): what a headline naming it quotes; empty"
            " for an unlikely candidate, which no headline names."
        ),
    )


class ReadingContext(Value):
    """Everything the reading of one message may use: a pure function of what came before it."""

    channel: str
    message: MessageRef
    text: str
    thoughts: tuple[Thought, ...]
    flow: Flow
    associations: tuple[Association, ...] = ()
    schemas: tuple[RecalledSchema, ...] = ()
    replies: tuple[ReplyScore, ...] = Field(
        (),
        description=(
            "The scorer's best candidates for what the message responds to, and every message of"
            " the context, best first."
        ),
    )
    notes: tuple[ReadingNote, ...] = Field(
        (), description="What was cut or could not be done, for the user."
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def co_thoughts(self) -> tuple[CoThoughts, ...]:
        return tuple(
            CoThoughts(
                thought_index=thought.index,
                others=tuple(other for other in self.thoughts if other.index != thought.index),
            )
            for thought in self.thoughts
        )

    def cited_message_ids(self) -> frozenset[str]:
        """Ids a reading may cite: the flow, the recalled thoughts' sources, and the message."""
        ids = {self.message.message_id, *self.flow.message_ids()}
        ids.update(item.source.message_id for item in self.associations)
        return frozenset(ids)


Relation = Literal[
    "answers",
    "agrees",
    "concedes",
    "disagrees",
    "revises",
    "returns-to",
    "builds-on",
    "shifts-away",
    "relates-to",
    "replies-to",
    "continues",
]
"""What a message does to an earlier one. ``concedes`` grants a point while keeping one's own
("fair, but …"); ``revises`` takes back or corrects an earlier claim ("I was wrong about …");
``relates-to`` is the plain "connects to" by topic; ``replies-to`` the plain "replies to", for
the message the reply-target scorer names when no cue says more; ``continues`` the same for the
speaker's own earlier message (a follow-up, a report going on)."""


class ThoughtLink(Value):
    """How one thought of the message connects to an earlier message."""

    thought_index: int
    relation: Relation
    message_id: str
    explanation: str


class SchemaBearing(Value):
    """How one recalled preconception of the speaker bears on the message."""

    schema_id: str
    stance: Stance
    explanation: str


RelationSource = Literal["model", "cues"]
"""Who decided a relation: the language model, or AWAI's deterministic offline cues."""

ConnectionOrigin = RecallReason | Literal["flow"]
"""How the earlier message came into the context: a recall reason, or the flow of the line."""


class Connection(Value):
    """How the message connects to one earlier message of its context, and who said so.

    One per earlier message the reading recalled (and the message just before, when the message
    answers or agrees with it), so every surface can say "answers Maya's question, 2 messages
    back" without re-deriving it.
    """

    message: MessageRef
    relation: Relation
    decided_by: RelationSource
    origin: ConnectionOrigin
    distance: int = Field(ge=0, description="Utterances strictly between it and the message.")
    earlier_text: str = Field(description="The recalled thought, or what the message said.")
    explanation: str | None = Field(None, description="The model's words; None from cues.")
    condition: str | None = Field(
        None, description='The condition of an agreement ("as long as …"), from cues.'
    )


class Headline(Value):
    """The first thing a reading says: what the message does to what came before it.

    ``connection`` is the earlier message it names (None when nothing earlier connects);
    renderers word it in the reader's language from the relation, the speaker and the distance.
    """

    connection: Connection | None = None
    decided_by: RelationSource = "cues"


OfflineReason = Literal["not-configured", "failed", "over-budget"]
"""Why a reading carries no interpretation."""


class Interpretation(Value):
    """What a language model wrote about the message, from the context alone."""

    meaning: str
    links: tuple[ThoughtLink, ...] = ()
    schema_bearings: tuple[SchemaBearing, ...] = ()
    language: str = "en"


class TokenUsage(Value):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        """Usage of two calls together (a reading may take a stance call and a reading call)."""
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
            cache_creation_input_tokens=(
                self.cache_creation_input_tokens + other.cache_creation_input_tokens
            ),
        )


class Reading(Value):
    """What the bot shows for one message: its context and, when a model wrote one, an interpretation.

    ``offline`` readings carry no interpretation: AWAI never invents one without a language model.
    """

    context: ReadingContext
    backend: str
    offline: bool
    interpretation: Interpretation | None = None
    language: str = "en"
    usage: TokenUsage | None = None
    notes: tuple[ReadingNote, ...] = ()
    offline_reason: OfflineReason | None = Field(
        None, description="Why there is no interpretation; None when a model wrote one."
    )
    headline: Headline = Headline()
    connections: tuple[Connection, ...] = Field(
        (), description="How the message connects to each earlier message of its context."
    )

    def noted(self, note: ReadingNote | None) -> Reading:
        """This reading with one more note (what an adapter knows and the engine does not, such
        as the channel's history not being read yet); itself when there is none."""
        return self if note is None else self.model_copy(update={"notes": (*self.notes, note)})
