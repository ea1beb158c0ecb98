"""The reply-target model's part of ``awai doctor``: is the fitted file there and readable?

Why the doctor says it: every start reads the file and refuses to run without it, and an operator
who finds AWAI refusing looks here first for which file and what to do.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from awai_engine.reply_target import model
from bots.terminal.say import styled


def report_reply_model(console: Console) -> bool:
    """Print whether the shipped reply-target model reads; ``False`` when it does not."""
    try:
        model.reply_model()
    except model.ReplyModelError as error:
        console.print(
            Text.assemble(styled("Reply-target model: ", "bold"), styled(str(error), "red"))
        )
        return False
    console.print(
        Text.assemble(
            styled("Reply-target model: ", "bold"), styled("ok", "green"), f" ({model.MODEL_FILE})"
        )
    )
    return True
