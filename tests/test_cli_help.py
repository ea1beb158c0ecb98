"""Every command's --help says what the command does, in the words `awai --help` lists for it."""

from __future__ import annotations

import argparse

from bots.terminal.cli import build_parser


def test_each_commands_help_opens_with_what_it_does_and_names_its_transcript_format() -> None:
    parser = build_parser()
    subparsers = next(
        action for action in parser._actions if isinstance(action, argparse._SubParsersAction)
    )
    listed = {action.dest: action.help for action in subparsers._choices_actions}

    assert listed and all(listed.values())
    for name, words in listed.items():
        helped = " ".join(subparsers.choices[name].format_help().split())
        assert " ".join(str(words).split()) in helped, name
    for name in ("ingest", "import"):
        helped = " ".join(subparsers.choices[name].format_help().split())
        assert "JSON Lines, one message per line with id, speaker, text and ts" in helped
