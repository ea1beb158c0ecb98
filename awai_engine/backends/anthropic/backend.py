"""The Anthropic backend: the language-model side of :class:`awai_engine.ports.LanguageBackend`.

Every call asks for one task's answer as JSON held to that task's schema (structured outputs) and
validates it with the pydantic model the schema was made from. A malformed answer (not JSON, not
an object, not the schema, empty, refused) gets one repair attempt that tells the model what was
wrong; an answer cut off at ``max_tokens`` is asked again
with a larger cap. After that the item falls back to the offline backend, marked as a fallback
and with a note. An answer that cites a message outside the context it was given loses that
citation (logged, never shown). A model that cannot be reached never raises out of this class:
the first call that fails for good sends the rest of that work offline at once, and the shared
circuit breaker stops calling for a while.

Thoughts are extracted one message per request, with only the utterances of its line said just
before it (see :mod:`awai_engine.extraction_window`): the stored thoughts of a message never
depend on what was said after it. The stable prefix (the system prompt) is cached.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from awai_engine.backends.anthropic.answers import (
    ANSWER_MODELS,
    EXTRACT_TASK,
    READING_TASK,
    SCHEMA_SUMMARY_TASK,
    Answer,
    ExtractionAnswer,
    ReadingAnswer,
    SchemaSummaryAnswer,
    output_format,
)
from awai_engine.backends.anthropic.batches import BatchLedger, BatchRunner
from awai_engine.backends.anthropic.budget import fit_to_budget
from awai_engine.backends.anthropic.caching import minimum_cacheable_tokens
from awai_engine.backends.anthropic.client import LanguageModelError, ModelAnswer, ModelClient
from awai_engine.backends.anthropic.prompts import (
    SYSTEM_PROMPT,
    render_extraction_request,
    render_schema_summary_request,
)
from awai_engine.backends.anthropic.reading_request import References, render_reading_request
from awai_engine.backends.anthropic.tokens import estimate_tokens
from awai_engine.backends.offline import OfflineBackend
from awai_engine.ports import ContextTooLargeError, ExtractionTarget
from awai_engine.settings import LanguageModelSettings, LimitsSettings, SettingsError
from awai_engine.text import detect_language, shorten
from awai_engine.values import (
    Extraction,
    Interpretation,
    ReadingContext,
    ReadingNote,
    SchemaBearing,
    Thought,
    ThoughtLink,
    TokenUsage,
)

log = logging.getLogger(__name__)

AnswerT = TypeVar("AnswerT", bound=Answer)

SUMMARY_COLUMNS = 160
MIN_CONTEXT_TOKENS = 300
MAX_PROBLEMS_SHOWN = 4
# An answer cut off at max_tokens is asked again with twice the cap, at most this many times.
MAX_TOKENS_GROWTHS = 2
OUTPUT_CAP = 64_000


@dataclass(frozen=True)
class Asked(Generic[AnswerT]):
    """A validated answer (``None`` if still malformed after the repair), and what it cost."""

    value: AnswerT | None
    usage: TokenUsage
    problem: str | None


class AnthropicBackend:
    """Writes thoughts, summaries, schema summaries and readings (stances included) with Claude."""

    offline = False

    def __init__(self, settings: LanguageModelSettings, limits: LimitsSettings) -> None:
        self.name = f"anthropic:{settings.model}"
        self.settings = settings
        self.limits = limits
        self._offline = OfflineBackend(limits)
        self._client = ModelClient(
            settings, SYSTEM_PROMPT, {task: output_format(task) for task in ANSWER_MODELS}
        )
        self._batches = BatchRunner(
            self._client.sdk,
            BatchLedger(settings.batch_dir or Path("awai-data") / "llm-batches"),
            settings.batch_poll_seconds,
            settings.batch_max_wait_seconds,
        )
        self.prefix_tokens = self._client.prefix_tokens
        self.cached_prefix_tokens = self._client.cached_prefix_tokens
        self.cache_minimum = minimum_cacheable_tokens(settings.model)
        if self.cached_prefix_tokens < self.cache_minimum:
            log.warning(
                "language model: the stable prefix (~%d tokens) is below %s's minimum cacheable"
                " length (%d): it will not be cached",
                self.cached_prefix_tokens,
                settings.model,
                self.cache_minimum,
            )
        if settings.reading_token_budget - self.prefix_tokens < MIN_CONTEXT_TOKENS:
            raise SettingsError(
                f"AWAI_LLM__READING_TOKEN_BUDGET={settings.reading_token_budget} leaves too little"
                f" for a reading's context after the stable prompt (~{self.prefix_tokens} tokens);"
                f" set it to at least {self.prefix_tokens + MIN_CONTEXT_TOKENS}."
            )

    def allowance(self) -> int:
        """Estimated tokens a request may spend on its own text (the budget less the stable
        prefix)."""
        return self.settings.reading_token_budget - self.prefix_tokens

    # -- thoughts and summaries at ingest --------------------------------------------------------

    def extract(self, targets: Sequence[ExtractionTarget]) -> list[Extraction]:
        """One request per message: through the Message Batches API for a backfill of at least
        ``batch_min_messages``, else live calls; once a live call gets no answer at all, the
        rest are extracted offline at once (marked as fallbacks), so nobody waits out every
        retry."""
        results: dict[int, Extraction] = {}
        todo: list[int] = []
        for n, target in enumerate(targets):
            if self._too_long_to_extract(target):
                results[n] = self._fallback(
                    target,
                    "the message is too long for one extraction answer",
                    "longer than AWAI_LLM__EXTRACTION_MAX_TOKENS allows",
                )
            else:
                todo.append(n)
        if len(todo) >= self.settings.batch_min_messages:
            results.update(self._extract_batched({n: targets[n] for n in todo}))
        else:
            unreachable: LanguageModelError | None = None
            for n in todo:
                if unreachable is not None:
                    results[n] = self._fallback(
                        targets[n], unreachable.user_reason, str(unreachable)
                    )
                    continue
                try:
                    results[n] = self._extract_one(targets[n])
                except LanguageModelError as error:
                    unreachable = error
                    results[n] = self._fallback(targets[n], error.user_reason, str(error))
        return [results[n] for n in range(len(targets))]

    def _extract_batched(self, targets: dict[int, ExtractionTarget]) -> dict[int, Extraction]:
        """One batch for all of them; an answer that is malformed or cut off is asked again
        live (with its repair), a request the batch could not serve is a fallback."""
        requests = {f"u{n}": self.extraction_params(target) for n, target in targets.items()}
        try:
            outcome = self._batches.run(requests, self._client.breaker)
        except LanguageModelError as error:
            return {
                n: self._fallback(target, error.user_reason, str(error))
                for n, target in targets.items()
            }
        results: dict[int, Extraction] = {}
        for n, target in targets.items():
            answer = outcome.answers.get(f"u{n}")
            if answer is None:
                why = outcome.failures.get(f"u{n}", "no result")
                results[n] = self._fallback(target, "the language model did not answer", why)
                continue
            extraction, problem = self.extraction_of(answer)
            if extraction is not None:
                results[n] = extraction
                continue
            log.info("language model: batch answer for %s redone live: %s", n, problem)
            try:
                results[n] = self._extract_one(target)
            except LanguageModelError as error:
                results[n] = self._fallback(target, error.user_reason, str(error))
        return results

    def extraction_params(self, target: ExtractionTarget) -> dict[str, Any]:
        """The Messages API parameters that extract ``target`` (a live call's, or a batch's)."""
        return self._client.params(
            EXTRACT_TASK,
            [_user(self._extraction_request(target))],
            self.settings.extraction_max_tokens,
        )

    def _extraction_request(self, target: ExtractionTarget) -> str:
        return render_extraction_request(target.utterance, target.before)

    def _extract_one(self, target: ExtractionTarget) -> Extraction:
        asked = self._ask(
            EXTRACT_TASK,
            self._extraction_request(target),
            ExtractionAnswer,
            self.settings.extraction_max_tokens,
        )
        log.info("language model: extraction of %s: %s", target.utterance.message_id, asked.usage)
        if asked.value is None:
            return self._fallback(
                target, "the language model's answer was malformed", asked.problem or ""
            )
        return self.bounded(asked.value)

    def extraction_of(self, answer: ModelAnswer) -> tuple[Extraction | None, str | None]:
        """A finished extraction answer (of a batch) as thoughts, or what is wrong with it."""
        raw, problem = _json_answer(answer)
        if raw is None:
            return None, problem
        value, problem = _validated(ExtractionAnswer, raw)
        return (self.bounded(value), None) if value is not None else (None, problem)

    def _too_long_to_extract(self, target: ExtractionTarget) -> bool:
        """Thoughts restate the text, so the answer is about as long as the message: one that
        needs more than half the output cap would be cut off."""
        return estimate_tokens(target.utterance.text) > self.settings.extraction_max_tokens // 2

    def _fallback(self, target: ExtractionTarget, why: str, detail: str) -> Extraction:
        """The offline extraction, marked as a fallback so the model can redo it later."""
        log.warning("language model: %s extracted offline: %s", target.utterance.message_id, detail)
        extraction = self._offline.extract_one(target.utterance.text)
        note = f"Thoughts and summary were made offline: {why}."
        thoughts = tuple(t.model_copy(update={"fallback": True}) for t in extraction.thoughts)
        return extraction.model_copy(
            update={"thoughts": thoughts, "notes": (note, *extraction.notes), "fallback": True}
        )

    def bounded(self, item: ExtractionAnswer) -> Extraction:
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
        """A one-line summary of a preconception, from its most central thoughts that fit.

        Raises :class:`LanguageModelError` when the model gives no usable summary, rather than
        returning an offline one: the caller then shows a makeshift summary without memoising it
        as final, and the next re-clustering asks the model again.
        """
        if not thoughts:
            return ""
        kept: list[str] = []
        tokens = 0
        for thought in thoughts:
            tokens += estimate_tokens(thought)
            if kept and tokens > self.allowance():
                break
            kept.append(thought)
        request = render_schema_summary_request(speaker_name, kept)
        asked = self._ask(
            SCHEMA_SUMMARY_TASK, request, SchemaSummaryAnswer, self.settings.max_tokens
        )
        if asked.value is None:
            raise LanguageModelError(
                f"the schema summary was malformed twice ({asked.problem})", "unreadable"
            )
        return shorten(asked.value.summary, SUMMARY_COLUMNS)

    # -- the reading -----------------------------------------------------------------------------

    def interpret(
        self, context: ReadingContext
    ) -> tuple[Interpretation | None, TokenUsage | None, tuple[ReadingNote, ...]]:
        """The written reading, stances included, from the context alone, in its language.

        Raises :class:`ContextTooLargeError` when even the trimmed context does not fit the
        budget: the engine then says the reading is offline because it was over budget.
        """
        language = detect_language(context.text)
        fitted = fit_to_budget(context, self.allowance(), render_reading_request)
        if fitted is None:
            log.warning(
                "language model: the context of %s does not fit AWAI_LLM__READING_TOKEN_BUDGET",
                context.message.message_id,
            )
            raise ContextTooLargeError(
                f"the context of {context.message.message_id} does not fit the reading budget"
            )
        notes = [fitted.note] if fitted.note else []
        request = render_reading_request(fitted.context)
        try:
            asked = self._ask(READING_TASK, request, ReadingAnswer, self.settings.max_tokens)
        except LanguageModelError as error:
            log.warning(
                "language model: reading of %s failed: %s", context.message.message_id, error
            )
            notes.append(ReadingNote(kind="model-failed", failure=error.kind))
            return None, None, tuple(notes)
        if asked.value is None:
            log.warning(
                "language model: reading of %s malformed twice: %s",
                context.message.message_id,
                asked.problem,
            )
            notes.append(ReadingNote(kind="model-malformed"))
            return None, asked.usage, tuple(notes)
        interpretation, dropped = _interpretation(asked.value, fitted.context, language)
        if dropped:
            notes.append(ReadingNote(kind="links-dropped", count=dropped))
        return interpretation, asked.usage, tuple(notes)

    # -- asking ----------------------------------------------------------------------------------

    def _ask(
        self, task: str, request: str, model: type[AnswerT], max_tokens: int
    ) -> Asked[AnswerT]:
        """Ask; an answer cut off at the output cap is asked again with a larger cap, and a
        malformed one once more with the problem named."""
        messages = [_user(request)]
        usage = TokenUsage()
        problem: str | None = None
        repaired = grown = 0
        while True:
            answer = self._client.send(task, messages, max_tokens)
            usage = usage + answer.usage
            if answer.stop_reason == "max_tokens" and grown < MAX_TOKENS_GROWTHS:
                grown += 1
                max_tokens = min(2 * max_tokens, OUTPUT_CAP)
                log.warning(
                    "language model: %s cut off; asking with max_tokens=%d", task, max_tokens
                )
                continue
            raw, problem = _json_answer(answer)
            if raw is not None:
                value, problem = _validated(model, raw)
                if value is not None:
                    return Asked(value, usage, None)
            log.warning("language model: malformed %s (repair %d): %s", task, repaired, problem)
            if repaired:
                return Asked(None, usage, problem)
            repaired += 1
            messages = _repair(messages, answer, problem or "")


def _interpretation(
    answer: ReadingAnswer, sent: ReadingContext, language: str
) -> tuple[Interpretation, int]:
    """The validated answer with real ids for its references, keeping only what was shown."""
    refs = References.of(sent)
    thoughts = {thought.index for thought in sent.thoughts}
    links, bearings, dropped = [], [], 0
    for link in answer.links:
        message_id = refs.messages.get(link.message.strip())
        if message_id is not None and link.thought in thoughts:
            links.append(
                ThoughtLink(
                    thought_index=link.thought,
                    relation=link.relation,
                    message_id=message_id,
                    explanation=link.explanation,
                )
            )
        else:
            dropped += 1
            log.warning(
                "language model: dropped a link of %s from thought %d to %r: not in its context",
                sent.message.message_id,
                link.thought,
                link.message,
            )
    judged: set[str] = set()
    for bearing in answer.schema_bearings:
        schema_id = refs.schemas.get(bearing.schema_ref.strip())
        if schema_id is not None and schema_id not in judged:
            judged.add(schema_id)
            bearings.append(
                SchemaBearing(
                    schema_id=schema_id, stance=bearing.stance, explanation=bearing.explanation
                )
            )
        else:
            dropped += 1
            log.warning("language model: dropped a bearing of schema %r", bearing.schema_ref)
    interpretation = Interpretation(
        meaning=answer.meaning,
        links=tuple(links),
        schema_bearings=tuple(bearings),
        language=language,
    )
    return interpretation, dropped


def _json_answer(answer: ModelAnswer) -> tuple[dict[str, Any] | None, str | None]:
    """The JSON object the answer's text holds, or what is wrong with the answer."""
    if answer.stop_reason == "max_tokens":
        return None, "the answer was cut off at the output limit"
    if answer.stop_reason == "refusal":
        return None, "the model declined to answer"
    text = "".join(block["text"] for block in answer.content).strip()
    if not text:
        return None, "the answer was empty"
    try:
        value = json.loads(text)
    except ValueError as error:
        return None, f"the answer was not JSON ({error})"
    if not isinstance(value, dict):
        return None, "the answer was not a JSON object"
    return value, None


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
    messages: list[dict[str, Any]], answer: ModelAnswer, problem: str
) -> list[dict[str, Any]]:
    """The conversation that asks for a corrected answer: the unusable answer as the assistant's
    turn and the problem as the next user turn; an answer with no text cannot be sent back, so
    the request is repeated with the problem appended."""
    retry = f"Answer again with JSON that matches the format. Problem: {problem}"
    text = "".join(block["text"] for block in answer.content).strip()
    if text:
        said = {"role": "assistant", "content": [{"type": "text", "text": text}]}
        return [*messages, said, _user(f"That answer could not be used. {retry}")]
    first = messages[0]["content"]
    return [_user(f"{first}\n\nYour previous answer could not be used. {retry}")]


def _user(content: str | list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": "user", "content": content}
