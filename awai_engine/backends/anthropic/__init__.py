"""The Anthropic language-model backend: thoughts, summaries, schema summaries, stance, the reading.

Modules, one job each: ``answers`` (what each task must answer, validated with pydantic),
``prompts`` (the stable system prompt and the per-call requests), ``tokens`` and ``budget`` (what
a reading may cost), ``client`` (the SDK call with retries), ``backend`` (the protocol itself).
"""

from awai_engine.backends.anthropic.backend import AnthropicBackend

__all__ = ["AnthropicBackend"]
