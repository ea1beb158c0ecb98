"""The Anthropic backend: the language-model side of :class:`awai_engine.ports.LanguageBackend`.

Every call forces one tool and validates its input with the pydantic model the tool's schema was
made from. A malformed answer (not the tool, not an object, not the schema, empty, cut off) gets
one repair attempt that tells the model what was wrong; after that the item falls back to the
offline backend and a note says so. An answer that cites a message outside the context it was
given loses that citation (logged, never shown). A model that cannot be reached never raises out
of this class: the reading becomes the offline one, labelled.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from awai_engine.backends.anthropic.answers import (
    ANSWER_MODELS,
    EXTRACT_TOOL,
    READING_TOOL,
    SCHEMA_SUMMARY_TOOL,
    STANCE_TOOL,
    Answer,
    ExtractedUtterance,
    ReadingAnswer,
    SchemaSummaryAnswer,
    StancesAnswer,
    tool_definition,
)
from awai_engine.backends.anthropic.budget import fit_to_budget
from awai_engine.backends.anthropic.client import LanguageModelError, ModelAnswer, ModelClient
from awai_engine.backends.anthropic.prompts import (
    SYSTEM_PROMPT,
    render_extraction_request,
    render_reading_request,
    render_schema_summary_request,
    render_stance_request,
)
from awai_engine.backends.anthropic.tokens import estimate_tokens
from awai_engine.backends.offline import OfflineBackend
from awai_engine.settings import LanguageModelSettings, LimitsSettings, SettingsError
from awai_engine.text import detect_language, shorten
from awai_engine.values import (
    Extraction,
    Interpretation,
    ReadingContext,
    RecalledSchema,
    SchemaBearing,
    Thought,
    ThoughtLink,
    TokenUsage,
    Utterance,
)

log = logging.getLogger(__name__)

AnswerT = TypeVar("AnswerT", bound=Answer)

SUMMARY_COLUMNS = 160
MIN_CONTEXT_TOKENS = 300
MAX_PROBLEMS_SHOWN = 4


@dataclass(frozen=True)
class Asked(Generic[AnswerT]):
    """A validated answer (``None`` if still malformed after the repair), and what it cost."""

    value: AnswerT | None
    usage: TokenUsage
    problem: str | None


class AnthropicBackend:
    """Writes thoughts, summaries, schema summaries, stances and readings with Claude."""

    offline = False

    def __init__(self, settings: LanguageModelSettings, limits: LimitsSettings) -> None:
        self.name = f"anthropic:{settings.model}"
        self.settings = settings
        self.limits = limits
        self._offline = OfflineBackend(limits)
        self._client = ModelClient(settings, SYSTEM_PROMPT)
        self._tools = {name: tool_definition(name) for name in ANSWER_MODELS}
        self.prefix_tokens = {
            name: self._client.prefix_tokens(tool) for name, tool in self._tools.items()
        }
        largest = max(self.prefix_tokens.values())
        if settings.reading_token_budget - largest < MIN_CONTEXT_TOKENS:
            raise SettingsError(
                f"AWAI_LLM__READING_TOKEN_BUDGET={settings.reading_token_budget} leaves too little"
                f" for a reading's context after the stable prompt (~{largest} tokens); set it to"
                f" at least {largest + MIN_CONTEXT_TOKENS}."
            )

    def allowance(self, tool: str) -> int:
        """Estimated tokens a request to ``tool`` may spend on its own text (the budget less the
        stable prefix)."""
        return self.settings.reading_token_budget - self.prefix_tokens[tool]

    # -- thoughts and summaries at ingest --------------------------------------------------------

    def extract(self, utterances: Sequence[Utterance]) -> list[Extraction]:
        """One call per batch of utterances; a batch without an answer is extracted offline.

        Once a batch gets no answer at all (the API is down or refusing), the rest of this call's
        utterances are extracted offline too, so a backfill does not wait out every batch's retries.
        """
        results: list[Extraction] = []
        unreachable: str | None = None
        for batch in self._batches(utterances):
            if len(batch) == 1 and self._too_long_to_extract(batch[0]):
                results.append(
                    self._offline_extraction(
                        batch[0],
                        "the message is too long for one extraction answer"
                        " (AWAI_LLM__EXTRACTION_MAX_TOKENS)",
                    )
                )
                continue
            if unreachable is None:
                extracted, unreachable = self._extract_batch(batch)
                results.extend(extracted)
            else:
                results.extend(self._offline_extraction(u, unreachable) for u in batch)
        return results

    def _batches(self, utterances: Sequence[Utterance]) -> Iterator[list[Utterance]]:
        """Up to ``extraction_batch_size`` utterances whose text fits half the output cap.

        Thoughts restate the text, so an answer is about as long as its input: half the cap
        leaves room for the summaries and the JSON around them.
        """
        batch: list[Utterance] = []
        tokens = 0
        room = self.settings.extraction_max_tokens // 2
        for utterance in utterances:
            cost = estimate_tokens(utterance.text)
            if batch and (
                len(batch) == self.settings.extraction_batch_size or tokens + cost > room
            ):
                yield batch
                batch, tokens = [], 0
            batch.append(utterance)
            tokens += cost
        if batch:
            yield batch

    def _too_long_to_extract(self, utterance: Utterance) -> bool:
        return estimate_tokens(utterance.text) > self.settings.extraction_max_tokens // 2

    def _extract_batch(self, batch: list[Utterance]) -> tuple[list[Extraction], str | None]:
        """Extractions in order, and why the model could not be reached (``None`` if it was)."""
        languages = [detect_language(utterance.text) for utterance in batch]
        messages = [_user(render_extraction_request(batch, languages))]
        wanted = set(range(1, len(batch) + 1))
        found: dict[int, ExtractedUtterance] = {}
        unreachable: str | None = None
        problem: str | None = None
        for attempt in (1, 2):
            try:
                answer = self._client.send(
                    self._tools[EXTRACT_TOOL], messages, self.settings.extraction_max_tokens
                )
            except LanguageModelError as error:
                log.warning("language model: extraction failed: %s", error)
                unreachable = f"the language model gave no answer ({error})"
                break
            log.info("language model: extraction of %d: %s", len(batch), answer.usage)
            items, problem = _extracted_items(answer, wanted - found.keys())
            found.update(items)
            if problem is None:
                break
            log.warning("language model: malformed extraction (attempt %d): %s", attempt, problem)
            messages = _repair(messages, answer, EXTRACT_TOOL, problem)
        why = unreachable or f"the language model's answer was malformed ({problem})"
        extracted = [
            self._bounded(found[n]) if n in found else self._offline_extraction(utterance, why)
            for n, utterance in enumerate(batch, start=1)
        ]
        return extracted, unreachable

    def _offline_extraction(self, utterance: Utterance, why: str) -> Extraction:
        extraction = self._offline.extract_one(utterance.text)
        note = f"Thoughts and summary were made offline: {why}."
        return extraction.model_copy(update={"notes": (note, *extraction.notes)})

    def _bounded(self, item: ExtractedUtterance) -> Extraction:
        """The model's thoughts held to the same limits as offline ones (length, then number)."""
        width = self.limits.max_thought_chars
        pieces = [
            text[start : start + width]
            for text in (" ".join(thought.split()) for thought in item.thoughts)
            for start in range(0, len(text), width)
        ]
        limit = self.limits.max_thoughts_per_message
        notes: tuple[str, ...] = ()
        if len(pieces) > limit:
            notes = (
                f"The model found {len(pieces)} thoughts; the first {limit - 1} are kept and the"
                " rest are read as one last thought.",
            )
            pieces = [*pieces[: limit - 1], " ".join(pieces[limit - 1 :])]
        return Extraction(
            thoughts=tuple(Thought(index=i, text=text) for i, text in enumerate(pieces)),
            summary=shorten(item.summary, SUMMARY_COLUMNS),
            notes=notes,
        )

    # -- preconceptions --------------------------------------------------------------------------

    def summarise_schema(self, speaker_name: str, thoughts: Sequence[str]) -> str:
        """A one-line summary of a preconception, from its most central thoughts that fit."""
        if not thoughts:
            return ""
        kept, tokens = [], 0
        for thought in thoughts:
            tokens += estimate_tokens(thought)
            if kept and tokens > self.allowance(SCHEMA_SUMMARY_TOOL):
                break
            kept.append(thought)
        language = detect_language(" ".join(kept))
        request = render_schema_summary_request(speaker_name, kept, language)
        asked = self._ask_or_none(SCHEMA_SUMMARY_TOOL, request, SchemaSummaryAnswer)
        if asked is None or asked.value is None:
            return self._offline.summarise_schema(speaker_name, thoughts)
        return shorten(asked.value.summary, SUMMARY_COLUMNS)

    def judge_stances(
        self, context: ReadingContext, schemas: Sequence[RecalledSchema]
    ) -> tuple[tuple[RecalledSchema, ...], TokenUsage | None]:
        """Each schema with the model's stance and reason; one it did not judge stays undetermined."""
        if not schemas:
            return (), None
        language = detect_language(context.text)
        fitted = fit_to_budget(
            context.model_copy(update={"schemas": tuple(schemas)}),
            self.allowance(STANCE_TOOL),
            lambda c: render_stance_request(c, language),
        )
        if fitted is None:
            log.warning("language model: stance request over budget for %s", context.message)
            return tuple(schemas), None
        request = render_stance_request(fitted.context, language)
        asked = self._ask_or_none(STANCE_TOOL, request, StancesAnswer)
        if asked is None:
            return tuple(schemas), None
        if asked.value is None:
            return tuple(schemas), asked.usage
        sent = {schema.schema_id for schema in fitted.context.schemas}
        judged = {}
        for stance in asked.value.stances:
            if stance.schema_id in sent:
                judged.setdefault(stance.schema_id, stance)
            else:
                log.warning(
                    "language model: dropped a stance for unknown schema %r", stance.schema_id
                )
        judged_schemas = tuple(
            schema.model_copy(
                update={"stance": judgement.stance, "stance_reason": judgement.reason}
            )
            if (judgement := judged.get(schema.schema_id))
            else schema
            for schema in schemas
        )
        return judged_schemas, asked.usage

    # -- the reading -----------------------------------------------------------------------------

    def interpret(
        self, context: ReadingContext
    ) -> tuple[Interpretation | None, TokenUsage | None, tuple[str, ...]]:
        """The written reading from the context alone, in the message's language."""
        language = detect_language(context.text)
        fitted = fit_to_budget(
            context, self.allowance(READING_TOOL), lambda c: render_reading_request(c, language)
        )
        if fitted is None:
            return (
                None,
                None,
                (
                    "This reading's context does not fit its token budget even when trimmed, so it"
                    " was not sent to the language model; this is the offline reading. Raise"
                    " AWAI_LLM__READING_TOKEN_BUDGET to have it written.",
                ),
            )
        notes = [fitted.note] if fitted.note else []
        request = render_reading_request(fitted.context, language)
        try:
            asked = self._ask(READING_TOOL, request, ReadingAnswer, self.settings.max_tokens)
        except LanguageModelError as error:
            log.warning(
                "language model: reading of %s failed: %s", context.message.message_id, error
            )
            notes.append(
                f"The language model could not write this reading ({error}), so this is the"
                " offline reading: the context AWAI assembled, without an interpretation."
            )
            return None, None, tuple(notes)
        if asked.value is None:
            notes.append(
                f"The language model's answer was malformed twice ({asked.problem}), so this is"
                " the offline reading: the context AWAI assembled, without an interpretation."
            )
            return None, asked.usage, tuple(notes)
        interpretation, dropped = _interpretation(asked.value, fitted.context, language)
        if dropped:
            notes.append(
                f"{dropped} connection{'s' if dropped > 1 else ''} the model wrote"
                f" {'were' if dropped > 1 else 'was'} left out: {'they' if dropped > 1 else 'it'}"
                " pointed outside the context it was given."
            )
        return interpretation, asked.usage, tuple(notes)

    # -- asking ----------------------------------------------------------------------------------

    def _ask(
        self, tool: str, request: str, model: type[AnswerT], max_tokens: int
    ) -> Asked[AnswerT]:
        """Ask once, and once more with the problem named if the answer is malformed."""
        messages = [_user(request)]
        usage = TokenUsage()
        problem: str | None = None
        for attempt in (1, 2):
            answer = self._client.send(self._tools[tool], messages, max_tokens)
            usage = usage + answer.usage
            raw, problem = _tool_input(answer, tool)
            if raw is not None:
                value, problem = _validated(model, raw)
                if value is not None:
                    return Asked(value, usage, None)
            log.warning("language model: malformed %s (attempt %d): %s", tool, attempt, problem)
            messages = _repair(messages, answer, tool, problem or "")
        return Asked(None, usage, problem)

    def _ask_or_none(self, tool: str, request: str, model: type[AnswerT]) -> Asked[AnswerT] | None:
        """:meth:`_ask` for calls whose failure only loses an enrichment (logged, not raised)."""
        try:
            asked = self._ask(tool, request, model, self.settings.max_tokens)
        except LanguageModelError as error:
            log.warning("language model: %s failed: %s", tool, error)
            return None
        log.info("language model: %s: %s", tool, asked.usage)
        return asked


def _interpretation(
    answer: ReadingAnswer, sent: ReadingContext, language: str
) -> tuple[Interpretation, int]:
    """The validated answer as a value, keeping only citations of what the model was shown."""
    citable = sent.cited_message_ids() - {sent.message.message_id}
    thoughts = {thought.index for thought in sent.thoughts}
    schemas = {schema.schema_id for schema in sent.schemas}
    links, bearings, dropped = [], [], 0
    for link in answer.links:
        if link.message_id in citable and link.thought in thoughts:
            links.append(
                ThoughtLink(
                    thought_index=link.thought,
                    relation=link.relation,
                    message_id=link.message_id,
                    explanation=link.explanation,
                )
            )
        else:
            dropped += 1
            log.warning(
                "language model: dropped a link of %s from thought %d to %r: not in its context",
                sent.message.message_id,
                link.thought,
                link.message_id,
            )
    for bearing in answer.schema_bearings:
        if bearing.schema_id in schemas:
            bearings.append(
                SchemaBearing(
                    schema_id=bearing.schema_id,
                    stance=bearing.stance,
                    explanation=bearing.explanation,
                )
            )
        else:
            dropped += 1
            log.warning("language model: dropped a bearing of unknown schema %r", bearing.schema_id)
    interpretation = Interpretation(
        meaning=answer.meaning,
        links=tuple(links),
        schema_bearings=tuple(bearings),
        language=language,
    )
    return interpretation, dropped


def _extracted_items(
    answer: ModelAnswer, wanted: set[int]
) -> tuple[dict[int, ExtractedUtterance], str | None]:
    """Valid entries for the wanted utterances, each validated on its own so one bad entry
    costs only its utterance; and the problems, if any entry is missing or invalid."""
    raw, problem = _tool_input(answer, EXTRACT_TOOL)
    if raw is None:
        return {}, problem
    entries = raw.get("utterances")
    if not isinstance(entries, list):
        return {}, "'utterances' must be a list"
    found: dict[int, ExtractedUtterance] = {}
    problems: list[str] = []
    for entry in entries:
        item, entry_problem = _validated(ExtractedUtterance, entry)
        if item is None:
            problems.append(f"an entry is invalid ({entry_problem})")
        elif item.n in wanted and item.n not in found:
            found[item.n] = item
    missing = sorted(wanted - found.keys())
    if missing:
        problems.append(f"no valid entry for n = {', '.join(map(str, missing))}")
    return found, "; ".join(problems[:MAX_PROBLEMS_SHOWN]) or None


def _tool_input(answer: ModelAnswer, tool: str) -> tuple[dict[str, Any] | None, str | None]:
    """The input of the forced tool call, or what is wrong with the answer."""
    if answer.stop_reason == "max_tokens":
        return None, "the answer was cut off at the output limit"
    for block in answer.content:
        if block["type"] == "tool_use" and block["name"] == tool:
            if isinstance(block["input"], dict):
                return block["input"], None
            return None, f"the input of {tool} was not a JSON object"
    if not answer.content:
        return None, "the answer was empty"
    return None, f"the answer did not call {tool}"


def _validated(model: type[AnswerT], raw: object) -> tuple[AnswerT | None, str | None]:
    try:
        return model.model_validate(raw), None
    except ValidationError as error:
        problems = [
            f"{'.'.join(map(str, item['loc'])) or 'input'}: {item['msg']}"
            for item in error.errors()[:MAX_PROBLEMS_SHOWN]
        ]
        return None, "; ".join(problems)


def _repair(
    messages: list[dict[str, Any]], answer: ModelAnswer, tool: str, problem: str
) -> list[dict[str, Any]]:
    """The conversation that asks for a corrected answer.

    A tool call with an object input is answered with an error ``tool_result``, the API's own way
    to say "try again"; anything else (text, an empty answer, an input that is not an object)
    cannot be sent back, so the request is repeated with the problem appended.
    """
    retry = f"Call {tool} again with input that matches its schema. Problem: {problem}"
    for block in answer.content:
        if block["type"] == "tool_use" and isinstance(block["input"], dict):
            result = {
                "type": "tool_result",
                "tool_use_id": block["id"],
                "is_error": True,
                "content": retry,
            }
            return [*messages, {"role": "assistant", "content": [block]}, _user([result])]
    first = messages[0]["content"]
    return [_user(f"{first}\n\nYour previous answer could not be used. {retry}")]


def _user(content: str | list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": "user", "content": content}
