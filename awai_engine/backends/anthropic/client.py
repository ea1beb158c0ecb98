"""One Messages API call whose answer is held to a JSON schema, retried the way the API asks.

Why its own retry loop rather than the SDK's: the SDK honours any ``retry-after`` however long, so
one overloaded minute could hold a bot's reading indefinitely. Here a timeout, 408, 409, 429, 5xx
or 529 (overloaded) is retried up to ``max_retries`` times, waiting what ``retry-after-ms`` /
``retry-after`` asks, or an exponential backoff with jitter; a wait longer than
``max_retry_wait_seconds`` is not waited for. Anything else fails at once with a message that says
what to fix. Callers turn :class:`LanguageModelError` into the offline reading.
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anthropic

from awai_engine.backends.anthropic.answers import EXTRACT_TASK
from awai_engine.backends.anthropic.breaker import shared_breaker
from awai_engine.backends.anthropic.tokens import estimate_tokens
from awai_engine.errors import AwaiError
from awai_engine.settings import LanguageModelSettings
from awai_engine.values import ModelFailure, TokenUsage

log = logging.getLogger(__name__)

RETRYABLE_STATUS = frozenset({408, 409, 429})  # and every 5xx, 529 (overloaded) included
REFUSALS = {
    401: "the API key was refused (check AWAI_LLM__API_KEY)",
    403: "the API key may not use this model (check AWAI_LLM__MODEL)",
    404: "the model or endpoint was not found (check AWAI_LLM__MODEL and AWAI_LLM__BASE_URL)",
}


ErrorKind = ModelFailure

# What a person reading in Slack or Discord is told; the setting names and HTTP codes go to the log.
USER_REASONS: dict[str, str] = {
    "unreachable": "the language model could not be reached",
    "refused": "the language model refused AWAI's request (the operator can see why in the log)",
    "busy": "the language model is overloaded or rate-limited",
    "unreadable": "the language model's answer could not be read",
    "paused": "the language model failed repeatedly, so AWAI is not calling it for a while",
}


class LanguageModelError(AwaiError, RuntimeError):
    """The model gave no answer (unreachable, refused, or still failing after retries).

    ``str()`` is for operators (HTTP codes, setting names); :attr:`user_reason` for everyone.
    """

    def __init__(self, detail: str, kind: ErrorKind) -> None:
        super().__init__(detail)
        self.kind = kind

    @property
    def user_reason(self) -> str:
        return USER_REASONS[self.kind]


@dataclass(frozen=True)
class ModelAnswer:
    """The answer's text blocks as plain dicts (thinking blocks are left out), and what it cost."""

    content: tuple[dict[str, Any], ...]
    stop_reason: str | None
    usage: TokenUsage


class ModelClient:
    """Sends requests whose stable prefix (the system prompt) is marked for caching, each with the
    JSON schema of its task as ``output_config.format``.

    Every call shares the process-wide :mod:`breaker <awai_engine.backends.anthropic.breaker>` of
    its endpoint, and stops retrying once ``call_deadline_seconds`` have passed, so one call costs
    a person waiting for it seconds, not minutes.
    """

    def __init__(
        self,
        settings: LanguageModelSettings,
        system_prompt: str,
        formats: Mapping[str, dict[str, Any]],
    ) -> None:
        if settings.api_key is None:
            raise ValueError("The Anthropic backend needs AWAI_LLM__API_KEY.")
        self.settings = settings
        self.sdk = anthropic.Anthropic(
            api_key=settings.api_key.get_secret_value(),
            base_url=settings.base_url,
            timeout=settings.timeout_seconds,
            max_retries=0,
        )
        self.formats = dict(formats)
        self.system = [
            {"type": "text", "text": system_prompt, "cache_control": {"type": "ephemeral"}}
        ]
        self.cached_prefix_tokens = estimate_tokens(system_prompt)
        # The API turns a format's schema into instructions it adds to the prompt, billed as
        # input; the longest schema is counted so a budget holds for every task.
        self.format_tokens = max(
            estimate_tokens(json.dumps(format_, ensure_ascii=False)) for format_ in formats.values()
        )
        self.breaker = shared_breaker(
            str(self.sdk.base_url),
            settings.api_key.get_secret_value(),
            settings.breaker_failures,
            settings.breaker_cooldown_seconds,
        )

    @property
    def prefix_tokens(self) -> int:
        """Estimated input tokens every call pays before its own request."""
        return self.cached_prefix_tokens + self.format_tokens

    def params(self, task: str, messages: list[dict[str, Any]], max_tokens: int) -> dict[str, Any]:
        """The Messages API parameters of one call of ``task`` (also a batch request's)."""
        output_config: dict[str, Any] = {"format": self.formats[task]}
        effort = self.settings.extraction_effort if task == EXTRACT_TASK else self.settings.effort
        if effort != "default":
            output_config["effort"] = effort
        return {
            "model": self.settings.model,
            "max_tokens": max_tokens,
            "system": self.system,
            "output_config": output_config,
            "messages": messages,
        }

    def send(self, task: str, messages: list[dict[str, Any]], max_tokens: int) -> ModelAnswer:
        """Ask for ``task``'s answer; raises :class:`LanguageModelError` when no answer came."""
        blocked = self.breaker.blocked_for()
        if blocked is not None:
            raise LanguageModelError(
                f"not called: the circuit breaker is open for {blocked:.0f} s more after"
                f" {self.settings.breaker_failures} failed calls",
                "paused",
            )
        try:
            answer = self._send(task, messages, max_tokens)
        except LanguageModelError:
            self.breaker.failed()
            raise
        self.breaker.succeeded()
        return answer

    def _send(self, task: str, messages: list[dict[str, Any]], max_tokens: int) -> ModelAnswer:
        attempts = self.settings.max_retries + 1
        deadline = time.monotonic() + self.settings.call_deadline_seconds
        attempt = 0
        while True:
            attempt += 1
            wait: float | None = None
            kind: ErrorKind = "unreachable"
            cause: Exception
            remaining = deadline - time.monotonic()
            try:
                message = self.sdk.messages.create(
                    **self.params(task, messages, max_tokens),
                    timeout=min(self.settings.timeout_seconds, max(remaining, 0.1)),
                )
                return answer_of(message)
            except anthropic.APIStatusError as error:
                status = error.status_code
                if status in REFUSALS or not (status in RETRYABLE_STATUS or status >= 500):
                    reason = REFUSALS.get(status, f"the request was refused: {_detail(error)}")
                    raise LanguageModelError(f"HTTP {status}: {reason}", "refused") from error
                failure, cause = f"HTTP {status} ({_detail(error)})", error
                kind = "busy" if status in (429, 529) else "unreachable"
                wait = retry_after(error.response.headers)
            except anthropic.APITimeoutError as error:
                timeout = min(self.settings.timeout_seconds, max(remaining, 0.1))
                failure, cause = f"no answer within {timeout:g} s", error
            except anthropic.APIConnectionError as error:
                failure, cause = f"could not connect ({error})", error
            except (anthropic.AnthropicError, ValueError) as error:
                raise LanguageModelError(
                    f"the answer could not be read: {error}", "unreadable"
                ) from error
            if attempt == attempts:
                raise LanguageModelError(f"{failure}, {attempts} attempt(s)", kind) from cause
            wait = self._backoff(attempt) if wait is None else wait
            if wait > self.settings.max_retry_wait_seconds:
                raise LanguageModelError(
                    f"{failure}; the API asked to wait {wait:g} s, longer than"
                    f" AWAI_LLM__MAX_RETRY_WAIT_SECONDS ({self.settings.max_retry_wait_seconds:g})",
                    kind,
                ) from cause
            if time.monotonic() + wait >= deadline:
                raise LanguageModelError(
                    f"{failure}, {attempt} attempt(s) within AWAI_LLM__CALL_DEADLINE_SECONDS"
                    f" ({self.settings.call_deadline_seconds:g})",
                    kind,
                ) from cause
            log.warning("language model: %s; retry %d in %.2f s", failure, attempt, wait)
            time.sleep(wait)

    def _backoff(self, attempt: int) -> float:
        """base · 2^(attempt−1), less up to a quarter of jitter so clients spread out."""
        wait = self.settings.retry_base_seconds * 2 ** (attempt - 1)
        return min(wait, self.settings.max_retry_wait_seconds) * (1 - 0.25 * random.random())


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the API asked to wait: ``retry-after-ms``, else ``retry-after`` (seconds or a date)."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        return max(0.0, email.utils.mktime_tz(parsed) - time.time()) if parsed else None


def answer_of(message: anthropic.types.Message) -> ModelAnswer:
    """The SDK's message as a :class:`ModelAnswer` (also used for a batch's results)."""
    content = [
        {"type": "text", "text": block.text}
        for block in message.content or ()
        if block.type == "text"
    ]
    usage = message.usage
    return ModelAnswer(
        content=tuple(content),
        stop_reason=message.stop_reason,
        usage=TokenUsage(
            input_tokens=getattr(usage, "input_tokens", None) or 0,
            output_tokens=getattr(usage, "output_tokens", None) or 0,
            cache_read_input_tokens=getattr(usage, "cache_read_input_tokens", None) or 0,
            cache_creation_input_tokens=getattr(usage, "cache_creation_input_tokens", None) or 0,
        ),
    )


def _detail(error: anthropic.APIStatusError) -> str:
    body = error.body if isinstance(error.body, dict) else {}
    detail = body.get("error", {}) if isinstance(body.get("error"), dict) else {}
    return str(detail.get("message") or error.message)
