"""The reply-target model's part of ``awai doctor``: is the fitted file there and readable, and
was it built with the library versions installed here?

Why the doctor says it: every start reads the file and refuses to run without it, and an operator
who finds AWAI refusing looks here first for which file and what to do. The versions matter only
to rebuilding it (a reading needs numpy alone, and any numpy reads it the same to the last few
digits): a rebuild under other versions may differ in the weights' last bits, and says so.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from awai_engine.reply_target import model
from awai_engine.reply_target.built_with import differences, installed_versions
from bots.terminal.say import styled


def report_reply_model(console: Console) -> bool:
    """Print whether the shipped reply-target model reads; ``False`` when it does not."""
    try:
        fitted = model.reply_model()
    except model.ReplyModelError as error:
        console.print(
            Text.assemble(styled("Reply-target model: ", "bold"), styled(str(error), "red"))
        )
        return False
    console.print(
        Text.assemble(
            styled("Reply-target model: ", "bold"),
            styled("ok", "green"),
            f" ({model.MODEL_FILE}); {built_with_note(dict(fitted.built_with))}",
        )
    )
    return True


def built_with_note(recorded: dict[str, str]) -> str:
    """What the file says it was built with, against the versions installed here."""
    if not recorded:
        return "its build versions are not recorded"
    changed = differences(recorded, installed_versions())
    if not changed:
        return "built with the versions installed here"
    return (
        "built with other versions ("
        + ", ".join(changed)
        + "): it still reads, but a rebuild here may differ in its last digits"
    )
