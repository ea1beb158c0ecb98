"""What each tool call must return: pydantic models, and the JSON schemas the model is given.

The schemas sent to the model are generated from the same models that validate its answers, so
the two cannot drift apart. A request carries only the one tool it forces: with the system prompt
it forms a prefix that is the same for every call of that kind (so prompt caching reuses it), and
no call pays for the schemas of the other three.
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

    model_config = ConfigDict(extra="forbid")


class ExtractedUtterance(Answer):
    n: int = Field(description="The n of the utterance.")
    thoughts: list[Text] = Field(
        min_length=1,
        description=(
            "Its units of meaning (claim, proposal, question, feeling, decision), in order, each a"
            " short self-contained sentence in the utterance's language."
        ),
    )
    summary: Text = Field(description="One short line in the utterance's language.")


class ExtractionAnswer(Answer):
    utterances: list[ExtractedUtterance] = Field(description="One entry per utterance given.")


class SchemaSummaryAnswer(Answer):
    summary: Text = Field(
        description="The preconception in one line, in the language of the thoughts.",
    )


class StanceAnswer(Answer):
    schema_id: Text
    stance: Judgement
    reason: Text = Field(description="One line, in the message's language.")


class StancesAnswer(Answer):
    stances: list[StanceAnswer] = Field(description="One entry per preconception given.")


class LinkAnswer(Answer):
    thought: int = Field(description="Index of the thought of the message being read.")
    relation: Relation
    message_id: str = Field(description="An id from the list of messages you may cite.")
    explanation: Text = Field(description="One line.")


class BearingAnswer(Answer):
    schema_id: Text
    stance: Judgement
    explanation: Text = Field(description="One line.")


class ReadingAnswer(Answer):
    meaning: Text = Field(
        description="What the message meant at that moment, in at most three sentences.",
    )
    links: list[LinkAnswer] = Field(
        default_factory=list,
        description="For each thought, the earlier messages it connects to (may be empty).",
    )
    schema_bearings: list[BearingAnswer] = Field(
        default_factory=list,
        description="How each of the speaker's preconceptions bears on the message.",
    )


EXTRACT_TOOL = "extract_thoughts"
SCHEMA_SUMMARY_TOOL = "summarise_schema"
STANCE_TOOL = "judge_stances"
READING_TOOL = "write_reading"

ANSWER_MODELS: dict[str, type[Answer]] = {
    EXTRACT_TOOL: ExtractionAnswer,
    SCHEMA_SUMMARY_TOOL: SchemaSummaryAnswer,
    STANCE_TOOL: StancesAnswer,
    READING_TOOL: ReadingAnswer,
}

DESCRIPTIONS = {
    EXTRACT_TOOL: (
        "Split each chat utterance into thoughts (units of meaning: a claim, proposal, question,"
        " feeling or decision; one or more, in order, each short and self-contained) and write a"
        " one-line summary. Keep each utterance's own language."
    ),
    SCHEMA_SUMMARY_TOOL: (
        "A preconception is a cluster of a speaker's own earlier thoughts: say in one line what"
        " the speaker tends to hold, from those thoughts only."
    ),
    STANCE_TOOL: (
        "For each preconception of the speaker, judge whether it supports or opposes what the"
        " message says now, or is unrelated, with a one-line reason."
    ),
    READING_TOOL: (
        "Say what the message meant at that moment; for each of its thoughts, which earlier"
        " messages it answers, agrees with, disagrees with, returns to, shifts away from or builds"
        " on (a thought with no real connection gets no link); and how each preconception of the"
        " speaker bears on it, with its stance."
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
