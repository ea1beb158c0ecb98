"""What each task must answer: pydantic models, and the JSON schemas the API holds answers to.

Answers come through structured outputs (``output_config.format``, a JSON schema the API
constrains the answer to), not a forced tool: the current Sonnet (Claude Sonnet 5.5) answers a
forced ``tool_choice`` with HTTP 400, while structured outputs work on it and on every model since
Claude Sonnet 4.5. The schemas are generated from the same models that validate the answers, so
the two cannot drift apart; the SDK's own ``transform_schema`` turns them into the subset the API
accepts (every object closed, length bounds moved into descriptions), and pydantic still enforces
those bounds on the answer. Stance is part of the reading (``schema_bearings``), so one call
decides both and they cannot disagree.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import anthropic
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from awai_engine.values import Relation

Judgement = Literal["supports", "opposes", "unrelated"]
# Text the user will read: surrounding whitespace is dropped, and nothing may be left empty.
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class Answer(BaseModel):
    """Base of every answer: unknown fields are an error, so a confused answer is caught."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ExtractionAnswer(Answer):
    thoughts: list[Text] = Field(
        min_length=1,
        description=(
            "The utterance's units of meaning (claim, proposal, question, feeling, decision), in"
            " order, each a short sentence that can be understood alone, in its language."
        ),
    )
    summary: Text = Field(description="One short line in the utterance's language.")


class SchemaSummaryAnswer(Answer):
    summary: Text = Field(
        description="The preconception in one line, in the language of the thoughts.",
    )


class LinkAnswer(Answer):
    thought: int = Field(description="The n of a thought of the message being read.")
    relation: Relation
    message: str = Field(description="The reference of an earlier message, such as M3.")
    explanation: Text = Field(description="One line.")


class BearingAnswer(Answer):
    schema_ref: Text = Field(alias="schema", description="A preconception's reference, such as P1.")
    stance: Judgement
    explanation: Text = Field(description="One line.")


class ReadingAnswer(Answer):
    meaning: Text = Field(
        description="What the message meant at that moment, in at most three sentences.",
    )
    links: list[LinkAnswer] = Field(
        default_factory=list,
        description="For each thought, the earlier messages it relates to (may be empty).",
    )
    schema_bearings: list[BearingAnswer] = Field(
        default_factory=list,
        description="One entry per preconception given: its stance toward the message and why.",
    )


EXTRACT_TASK = "extract_thoughts"
SCHEMA_SUMMARY_TASK = "summarise_schema"
READING_TASK = "write_reading"

ANSWER_MODELS: dict[str, type[Answer]] = {
    EXTRACT_TASK: ExtractionAnswer,
    SCHEMA_SUMMARY_TASK: SchemaSummaryAnswer,
    READING_TASK: ReadingAnswer,
}


def output_format(task: str) -> dict[str, Any]:
    """The ``output_config.format`` of ``task``: its answer's JSON schema as the API accepts it,
    the same on every call (so the API's compiled grammar and the prompt cache are reused)."""
    return {"type": "json_schema", "schema": anthropic.transform_schema(ANSWER_MODELS[task])}
