"""Does the configured key reach the configured model? One cheap call says, before a user waits.

``awai doctor`` asks the Models API (``client.models.retrieve``) with a short timeout and no
retries: it costs nothing, needs no tokens, and fails the same way a reading would (401 for a bad
key, 403 for a key without access, 404 for a misspelled or retired model, no connection for a bad
endpoint). What it finds is worded for the operator, with the setting to change; the model's own
capabilities, when the API reports them, are checked against what AWAI's requests use
(structured outputs, and ``output_config.effort`` where a setting asks for it).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import anthropic

from awai_engine.settings import LanguageModelSettings

CHECK_TIMEOUT_SECONDS = 10.0
SUGGESTIONS = 3


@dataclass(frozen=True)
class ModelCheck:
    """What the check found: the model's name when it answered, else what is wrong and what to
    do. ``problems`` may be non-empty with a name too (the model exists but cannot serve AWAI)."""

    model: str
    endpoint: str
    display_name: str | None = None
    problems: tuple[str, ...] = ()
    hints: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.display_name is not None and not self.problems


def check_model(settings: LanguageModelSettings) -> ModelCheck:
    """Retrieve ``settings.model`` with ``settings.api_key`` at ``settings.base_url`` (or the
    SDK's default, ``ANTHROPIC_BASE_URL`` included)."""
    if settings.api_key is None:
        raise ValueError("check_model needs an API key")
    sdk = anthropic.Anthropic(
        api_key=settings.api_key.get_secret_value(),
        base_url=settings.base_url,
        timeout=min(settings.timeout_seconds, CHECK_TIMEOUT_SECONDS),
        max_retries=0,
    )
    found = ModelCheck(model=settings.model, endpoint=str(sdk.base_url))
    try:
        info = sdk.models.retrieve(settings.model)
    except anthropic.AuthenticationError as error:
        return _failed(
            found,
            f"the API key was refused ({_status(error)})",
            "check AWAI_LLM__API_KEY (or ANTHROPIC_API_KEY, used when it is unset)",
        )
    except anthropic.PermissionDeniedError as error:
        return _failed(
            found,
            f"the API key may not use {settings.model} ({_status(error)})",
            "use a key of a workspace with access to it, or another AWAI_LLM__MODEL",
        )
    except anthropic.NotFoundError as error:
        return _failed(
            found,
            f"the model {settings.model!r} was not found ({_status(error)})",
            _model_hint(sdk, settings.model),
        )
    except anthropic.APITimeoutError:
        return _failed(
            found,
            f"{found.endpoint} did not answer within {sdk.timeout} s",
            "check AWAI_LLM__BASE_URL / ANTHROPIC_BASE_URL and the network",
        )
    except anthropic.APIConnectionError as error:
        return _failed(
            found,
            f"{found.endpoint} could not be reached ({error.__cause__ or error})",
            "check AWAI_LLM__BASE_URL / ANTHROPIC_BASE_URL and the network",
        )
    except anthropic.APIStatusError as error:
        return _failed(found, f"the API answered {_status(error)}", "try again later")
    problems, hints = _capability_problems(info, settings)
    if info.lifecycle != "active":
        hints.append(f"{info.display_name} is {info.lifecycle}: plan a move to a current model")
    return ModelCheck(
        model=settings.model,
        endpoint=found.endpoint,
        display_name=info.display_name,
        problems=tuple(problems),
        hints=tuple(hints),
    )


def _capability_problems(
    info: anthropic.types.ModelInfo, settings: LanguageModelSettings
) -> tuple[list[str], list[str]]:
    problems: list[str] = []
    hints: list[str] = []
    capabilities = info.capabilities
    if capabilities is None:
        return problems, hints
    structured = getattr(capabilities, "structured_outputs", None)
    if structured is not None and not structured.supported:
        problems.append(
            f"{info.display_name} has no structured outputs, which every AWAI request uses"
        )
        hints.append("set AWAI_LLM__MODEL to Claude Sonnet 4.5 or later")
    effort = getattr(capabilities, "effort", None)
    asked = {
        "AWAI_LLM__EFFORT": settings.effort,
        "AWAI_LLM__EXTRACTION_EFFORT": settings.extraction_effort,
    }
    for name, level in asked.items():
        if level == "default" or effort is None:
            continue
        supported = effort.supported and getattr(getattr(effort, level, None), "supported", False)
        if not supported:
            problems.append(f"{info.display_name} does not take {name}={level}")
            hints.append(f"set {name}=default (the model's own effort) or a level it takes")
    return problems, hints


def _model_hint(sdk: anthropic.Anthropic, model: str) -> str:
    """Set AWAI_LLM__MODEL to a model the key can use: the closest names the API lists."""
    try:
        available = [item.id for item in sdk.models.list(limit=100)]
    except anthropic.AnthropicError:
        available = []
    close = difflib.get_close_matches(model, available, n=SUGGESTIONS, cutoff=0.5)
    if close:
        return f"set AWAI_LLM__MODEL to one your key can use, e.g. {', '.join(close)}"
    if available:
        return f"set AWAI_LLM__MODEL to one your key can use: {', '.join(available[:5])}"
    return "set AWAI_LLM__MODEL to a model id from Anthropic's models page"


def _failed(found: ModelCheck, problem: str, hint: str) -> ModelCheck:
    return ModelCheck(
        model=found.model, endpoint=found.endpoint, problems=(problem,), hints=(hint,)
    )


def _status(error: anthropic.APIStatusError) -> str:
    body = error.body if isinstance(error.body, dict) else {}
    found = body.get("error")
    detail = found if isinstance(found, dict) else {}
    kind = detail.get("type") or type(error).__name__
    message = detail.get("message") or error.message
    return f"HTTP {error.status_code} {kind}: {message}"
