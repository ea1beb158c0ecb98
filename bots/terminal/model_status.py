"""The language model's part of ``awai doctor``: on or off, and if on, does it answer?

Without a key nothing is called: the doctor says the model is off and what readings are then.
With one, :func:`awai_engine.backends.anthropic.check.check_model` asks the Models API once, with a
short timeout, and this prints what it found for the operator (settings and HTTP codes included:
the doctor is an operator's tool, unlike the notes Slack and Discord users see).
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from awai_engine.settings import LanguageModelSettings
from bots.terminal.say import styled

OFF = (
    "off — no AWAI_LLM__API_KEY or ANTHROPIC_API_KEY is set. Readings are offline: the context"
    " AWAI assembles (flow, recalled earlier thoughts, preconceptions) with connections from word"
    " cues, and no written interpretation; thoughts are the message's sentences."
)


def report_model(settings: LanguageModelSettings, console: Console) -> bool:
    """Print the model's state; ``False`` when a key is set but the model cannot serve AWAI."""
    if settings.api_key is None:
        # Prose, folded at words (a soft-wrapped line breaks wherever the terminal ends).
        console.print(Text.assemble(styled("Language model: ", "bold"), OFF), soft_wrap=False)
        return True
    from awai_engine.backends.anthropic.check import check_model  # the SDK only when needed

    found = check_model(settings)
    if found.ok:
        console.print(
            Text.assemble(
                styled("Language model: ", "bold"),
                styled("ok", "green"),
                styled(f" — {found.display_name} ({found.model}) at {found.endpoint}", ""),
            )
        )
    else:
        named = f"{found.display_name} ({found.model})" if found.display_name else found.model
        console.print(
            Text.assemble(
                styled("Language model: ", "bold"),
                styled("not usable", "red"),
                styled(f" — {named} at {found.endpoint}", ""),
            )
        )
        for problem in found.problems:
            console.print(Text.assemble("  ", styled("✗ ", "red"), styled(problem, "")))
    for hint in found.hints:
        console.print(Text.assemble("  → ", styled(hint, "")))
    return found.ok
