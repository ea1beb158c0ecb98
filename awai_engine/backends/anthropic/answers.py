"""What each tool call must return: pydantic models, and the JSON schemas the model is given.

The schemas sent to the model are generated from the same models that validate its answers, so
the two cannot drift apart. Every request offers all the tools and forces the one it wants: with
the system prompt they form one prefix, the same for every call, which prompt caching keeps once
(cache reads cost a tenth of input), long enough to clear the model's minimum cacheable length. Stance is part of the reading (``schema_bearings``),
so one call decides both and they cannot disagree.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from awai_engine.values import Relation

Judgement = Literal["supports", "opposes", "unrelated"]
# Text the user will read: surrounding whitespace is dropped, and nothing may be left empty.
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class Answer(BaseModel):
    """Base of every tool answer: unknown fields are an error, so a confused answer is caught."""

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


EXTRACT_TOOL = "extract_thoughts"
SCHEMA_SUMMARY_TOOL = "summarise_schema"
READING_TOOL = "write_reading"

ANSWER_MODELS: dict[str, type[Answer]] = {
    EXTRACT_TOOL: ExtractionAnswer,
    SCHEMA_SUMMARY_TOOL: SchemaSummaryAnswer,
    READING_TOOL: ReadingAnswer,
}

DESCRIPTIONS = {
    EXTRACT_TOOL: (
        "Split the one utterance in <extract> into thoughts (units of meaning: a claim, proposal,"
        " question, feeling or decision; one or more, in order, each short and understandable"
        " alone) and write a one-line summary, in the language the request names."
    ),
    SCHEMA_SUMMARY_TOOL: (
        "A preconception is a cluster of a speaker's own earlier thoughts: say in one line what"
        " the speaker tends to hold, from those thoughts only."
    ),
    READING_TOOL: (
        "Say what the message meant at that moment; for each of its thoughts, which earlier"
        " messages it answers, agrees or disagrees with, concedes to, revises, returns to, shifts"
        " away from or builds on (a thought with no real connection gets no link); and, for each"
        " preconception of the speaker, its stance toward the message and why."
    ),
}


def tool_definition(name: str) -> dict[str, Any]:
    """One tool with a compact schema (no titles, no ``$ref``), the same on every call."""
    return {
        "name": name,
        "description": DESCRIPTIONS[name],
        "input_schema": _compact(ANSWER_MODELS[name].model_json_schema()),
    }


def _compact(schema: dict[str, Any]) -> dict[str, Any]:
    """Inline ``$defs`` and drop titles: fewer tokens in the prefix every request pays for."""
    definitions = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return walk(definitions[node["$ref"].rsplit("/", 1)[-1]])
            return {
                key: walk(value)
                for key, value in node.items()
                if key != "title" and not (key == "default" and value == [])
            }
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    return walk(schema)
