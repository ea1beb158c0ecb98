"""Association's settings: what an operator may turn, and the recall rules fitted on human links.

Two values, because they answer to different people. :class:`AssociationSettings` is the
``association`` section of the one AWAI settings object (``AWAI_ASSOCIATION__THETA_0``, …): how
many items a reading recalls, how close in meaning they must be at each distance, how many
addressing cues and far slots there are. :class:`RecallRules` are the rules that decide which
candidates recall admits (the speaker's exchange, the inferred conversation, the far bar, word
search…); each was chosen on the IRC dev links and LoCoMo (docs/evaluation.md), several
alternatives were measured and not kept, and a deployment has no reason to turn them: production
runs the fitted :data:`FITTED_RULES`, and only the association bench varies them
(``bench/eval_association.py --variant NAME:rules.FIELD=VALUE``), or a test that constructs a
``RecallRules`` value. A rule set in the environment is refused with that explanation, so an old
``.env`` does not silently lose a value it meant to set.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from awai_engine.fitted_rules import refuse_rules

Similarity = float  # a cosine of normalised vectors: always in [-1, 1]
Cue = Literal["addressed", "addressed-speaker", "own"]


class RecallRules(BaseModel):
    """Which candidates recall admits, beyond θ(d) and the budget: fitted, not configured.

    Defaults are the fitted values; ``docs/evaluation.md`` ("Association at every distance" and
    the "Precision" sections) records each choice and what was measured against it.
    """

    model_config = ConfigDict(frozen=True)

    edge_names_address: bool = Field(
        True,
        description=(
            "A message whose first or last words are an earlier speaker's name ('tim - …',"
            " '!ask | jered') addresses them for the addressed cue, as @name and name: do."
        ),
    )
    edge_name_set_off: Literal["ordinary-words", "always"] = Field(
        "ordinary-words",
        description=(
            "Which names at a message's edge must be set off by punctuation to address ('will:"
            " …', 'thanks, will'): 'ordinary-words' (names that are also English words, such as"
            " Will, May or Hope, which open sentences by themselves: 'Will do') or 'always'."
        ),
    )
    near_z: float | None = Field(
        None,
        ge=-5,
        le=20,
        description=(
            "Near bar besides θ(d): a thought must be this many standard deviations above the"
            " message's mean similarity to the thoughts just before it (None: θ(d) only)."
        ),
    )
    exchange_window: int = Field(
        50,
        ge=0,
        le=100_000,
        description=(
            "Who talks with whom: the utterances looked back at to find the speaker's exchange"
            " (the people they addressed or were addressed by). 0 turns it off: no speaker is"
            " then in an exchange, so the rules for speakers in one (stranger_z, conversation_z,"
            " far_exchange, far_in_talk) never apply and those for speakers in none always do."
        ),
    )
    stranger_z: float | None = Field(
        None,
        ge=-5,
        le=50,
        description=(
            "A thought by meaning from outside the speaker's exchange must also be this many"
            " standard deviations above the message's mean similarity to the thoughts just"
            " before it (None: it is not recalled by meaning at all)."
        ),
    )
    strangers_when_alone: bool = Field(
        False,
        description=(
            "Apply stranger_z also when the speaker has no exchange yet (a newcomer, or someone"
            " answering without naming anyone)."
        ),
    )
    cues_on_topic: tuple[Cue, ...] = Field(
        (),
        description=(
            "Addressing cues kept only when their thought clears the near bar (on topic); the"
            " others are kept whatever they say."
        ),
    )
    conversation_window: int = Field(
        100,
        ge=0,
        le=100_000,
        description=(
            "Which conversation a line belongs to: the utterances looked back at to chain the"
            " replies inferred from addressing (awai_engine.conversation). 0 turns it off, and"
            " with it the rules that need a conversation (cues_in_conversation, conversation_z,"
            " far_conversation)."
        ),
    )
    cues_in_conversation: tuple[Cue, ...] = Field(
        ("own", "addressed-speaker"),
        description=(
            "Addressing cues kept only when their line is in the message's inferred conversation"
            " or clears the near bar (on topic); needs conversation_window."
        ),
    )
    conversation_pairs: bool = Field(
        True,
        description=(
            "In the inferred conversation, a line addressing someone also answers that person's"
            " latest line to its speaker and continues its speaker's latest line to them, not"
            " only that person's latest line; needs conversation_window."
        ),
    )
    conversation_z: float | None = Field(
        4.0,
        ge=-5,
        le=50,
        description=(
            "A thought by meaning from outside the message's inferred conversation (when the"
            " speaker has an exchange) must also be this many standard deviations above the"
            " message's mean similarity to the thoughts just before it (None: no such bar)."
        ),
    )
    far_conversation: bool = Field(
        True,
        description=(
            "A far message must be in the message's inferred conversation when the speaker has"
            " an exchange; needs conversation_window."
        ),
    )
    conversation_when_alone: Literal["never", "unless-naming", "unless-reaching"] = Field(
        "unless-reaching",
        description=(
            "Apply conversation_z also when the speaker has no exchange: never, unless the"
            " message names someone it does not address, or unless it reaches for the past in"
            " any way (names someone or asks the room: awai_engine.reaching)."
        ),
    )
    conversation_addressed_share: float = Field(
        0.2,
        ge=0,
        le=1,
        description=(
            "conversation_when_alone judges with conversation_z where at least this share of"
            " the conversation_window lines address someone, and with conversation_quiet_z"
            " elsewhere (a channel where people rarely address each other, where lines outside"
            " a speaker's conversation are simply other people's)."
        ),
    )
    conversation_quiet_z: float | None = Field(
        2.0,
        ge=-5,
        le=50,
        description=(
            "Where fewer than conversation_addressed_share of the lines address someone, the"
            " conversation bar for a speaker in no exchange, in standard deviations: lower than"
            " conversation_z, since there a line outside the speaker's conversation is simply"
            " someone else's (None: no bar there)."
        ),
    )
    far_score_bar: float = Field(
        5.0,
        ge=0,
        le=50,
        description=(
            "Far bar, in standard deviations: a far message's similarity (against a sample of"
            " the far past) and BM25 (against every earlier message) above what the past"
            " usually shares with the message, summed, plus named_weight, must reach this."
        ),
    )
    far_answers: bool = Field(
        True,
        description=(
            "For a message that asks, a far line recalled because it asks the same takes the"
            " line that answered it along (the next line of its line, by someone else), within"
            " the far slots."
        ),
    )
    words_include_names: bool = Field(
        False,
        description=(
            "The far past's word search (BM25) counts the names of the earlier speakers the"
            " message names; off, a name counts only through named_weight (who said the line),"
            " not as a word the line shares ('Thanks, Melanie!' shares nothing with 'What did"
            " Melanie recommend?')."
        ),
    )
    named_weight: float = Field(
        2.0,
        ge=0,
        le=20,
        description=(
            "Added to a message's evidence (standard deviations) when its speaker is named in"
            " the message read ('what did Caroline…', 'bob: …'); 0 turns it off."
        ),
    )
    far_exchange: bool = Field(
        True,
        description=(
            "A far message must be part of the speaker's exchange (said by or to the speaker, a"
            " partner or someone the message names), when the speaker has one; needs"
            " exchange_window."
        ),
    )
    far_rivals: Literal["everyone", "others", "others-when-alone", "others-when-named"] = Field(
        "others-when-named",
        description=(
            "With far_above_near, whose near messages the far past must beat: everyone's, only"
            " those of people other than the speaker, others' only when the speaker is in no"
            " exchange (needs exchange_window), or only when, besides, the message names someone"
            " it does not address (a speaker repeating their own question has their own earlier"
            " line to beat)."
        ),
    )
    questions_reach_back: bool = Field(
        True,
        description=(
            "A question put to no one in particular (a '?' and no addressee) by a speaker in no"
            " exchange reaches for the past, as naming someone not addressed does"
            " (awai_engine.reaching)."
        ),
    )
    far_in_talk: bool = Field(
        False,
        description=(
            "Far slots for a speaker in an exchange whose message does not reach for the past"
            " (names no one it does not address): such a message continues the room's talk."
        ),
    )
    far_unasked_similarity: Similarity | None = Field(
        0.5,
        ge=-1,
        le=1,
        description=(
            "A far line recalled for a message that does not reach for the past must be the"
            " speaker's own or at least this similar (None: no such bar)."
        ),
    )
    far_above_near: bool = Field(
        True,
        description=(
            "A far message's evidence (meaning and words) must be higher than every near"
            " message's outside the flow and the cues."
        ),
    )
    lexical: bool = Field(
        True,
        description=(
            "Recall far messages that share the message's rare words (BM25 with the statistics of"
            " the earlier messages only), fused with recall by meaning."
        ),
    )
    lexical_pool: int = Field(
        50,
        ge=1,
        le=1000,
        description="Best BM25 matches over the whole prefix considered for the far slots.",
    )
    admission_bar: float | None = Field(
        0.45,
        ge=0,
        le=1,
        description=(
            "Recalled items whose estimated chance of being in the message's conversation (the"
            " gate fitted on the training logs: awai_engine/association/admission.py) is under"
            " this are left out (None: every item recall picks is kept). Chosen on the dev files"
            " (docs/evaluation.md, 'Precision: a gate learned from annotation')."
        ),
    )
    admission_spares: tuple[Cue, ...] = Field(
        ("addressed",),
        description=(
            "Addressing cues the gate never leaves out: a line of someone the message addresses"
            " by name is what it most often answers."
        ),
    )
    admission_alone: bool = Field(
        False,
        description=(
            "The gate judges the items of a speaker in no exchange too; off, it judges only"
            " those of a speaker who addresses or is addressed (its conversation and exchange"
            " features say little about a newcomer or a question to the room, whose recall"
            " reaches back: on LoCoMo it left out the evidence)."
        ),
    )


FITTED_RULES = RecallRules()
"""The rules every reading in production uses."""


class AssociationSettings(BaseModel):
    """Recall of earlier thoughts outside the flow: by addressing first, then far, then near.

    Meaning: θ(d) = min(θ_max, θ_0 + λ·ln(1 + d/d_0)), non-decreasing in distance d; thoughts
    with s ≥ θ(d) are ranked by margin s − θ(d). With the fitted defaults a thought a few lines
    back needs only to be loosely related, one a hundred lines back must be close (MiniLM scale;
    other models are mapped by ``awai_engine.calibration``). Addressing cues (``*_recent``) take
    their slots first; all share the budget A. The far past (``far_*``, at least
    ``far_distance`` back) may take up to ``far_items`` slots when its meaning and rare words
    together stand out from the past and from the near past: docs/evaluation.md, "Association at
    every distance". ``rules`` are the fitted :class:`RecallRules`, set in code only.
    """

    theta_0: Similarity = Field(
        0.1, ge=-1, le=1, description="Threshold for the nearest utterance."
    )
    slope: float = Field(
        0.2, ge=0, le=1, description="λ: how fast the threshold rises with distance."
    )
    d_0: float = Field(10.0, gt=0, description="Distance scale, in utterances.")
    theta_max: Similarity = Field(
        0.5, ge=-1, le=1, description="The threshold never rises above this."
    )
    max_items: int = Field(5, ge=0, le=50, description="A: recalled thoughts kept per reading.")
    addressed_recent: int = Field(
        2,
        ge=0,
        le=20,
        description=(
            "Addressing cue: the latest N messages of each person a message addresses (@name,"
            " or `name:` at the start of a line) are recalled before meaning; 0 turns it off."
        ),
    )
    addressed_speaker_recent: int = Field(
        1,
        ge=0,
        le=20,
        description=(
            "Addressing cue: the latest N messages that addressed the speaker are recalled (the"
            " message most likely answers them); 0 turns it off."
        ),
    )
    own_recent: int = Field(
        1,
        ge=0,
        le=20,
        description=(
            "Addressing cue: the speaker's own latest N messages are recalled (the message most"
            " likely continues them); 0 turns it off."
        ),
    )
    cue_window: int = Field(
        200,
        ge=1,
        le=1_000_000,
        description="Addressing cues look back at most this many utterances (the same exchange).",
    )
    far_items: int = Field(
        5,
        ge=0,
        le=50,
        description=(
            "Slots of A kept for the far past (at least far_distance back), filled only by"
            " thoughts that clear the far bar or share the message's rare words; unused slots go"
            " to nearer meaning."
        ),
    )
    far_distance: int = Field(
        50, ge=1, le=1_000_000, description="Utterances back from which a thought is far."
    )
    far_floor: Similarity = Field(
        0.0, ge=-1, le=1, description="A far thought's similarity never falls below this."
    )

    rules: RecallRules = Field(
        FITTED_RULES,
        description="The fitted recall rules; not read from the environment (see the module).",
    )

    @model_validator(mode="before")
    @classmethod
    def _rules_are_not_settings(cls, values: object) -> object:
        """A rule named in the environment (or in a dict) is refused with where it went, rather
        than ignored: it used to be a setting, and an ``.env`` may still set it."""
        return refuse_rules(
            values,
            RecallRules,
            "association",
            "a test sets AssociationSettings(rules=RecallRules(...)), the association bench"
            " bench/eval_association.py --variant NAME:rules.FIELD=VALUE"
            " (awai_engine/association/settings.py, bench/variants.py)",
        )

    @model_validator(mode="after")
    def _ceiling_above_floor(self) -> AssociationSettings:
        if self.theta_max < self.theta_0:
            raise ValueError("association.theta_max must be ≥ association.theta_0")
        return self


class ActivationSettings(BaseModel):
    """ACT-R base-level activation B = ln Σ Δ^(−d) over the occurrences of a recalled thought."""

    repeat_similarity: Similarity = Field(
        0.9,
        ge=-1,
        le=1,
        description=(
            "τ_rep: similarity at which two thoughts say the same thing. Lower values count loosely"
            " related lines as repetitions, and activation then points less well at the line a"
            " message answers (docs/evaluation.md)."
        ),
    )
    decay: float = Field(0.5, gt=0, le=5, description="d: ACT-R decay (0.5 is ACT-R's own).")
    age_unit: Literal["utterances", "seconds"] = "utterances"
    important_threshold: float = Field(
        0.0,
        ge=-20,
        le=20,
        description="β: activation at which a schema member is especially important.",
    )
