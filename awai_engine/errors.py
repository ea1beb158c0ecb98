"""The one base of AWAI's expected errors: failures a person can act on from the message alone.

A bad setting, an unreadable transcript, an unknown message or a database that is busy are not
bugs: the adapter shows ``str(error)`` (the CLI as one line and exit status 2, the bots as a
reply) instead of a traceback. Every such error derives from :class:`AwaiError`, so an adapter
catches the base once rather than listing each kind; an error that does not derive from it is a
bug and keeps its traceback. The subclasses also keep their natural built-in base
(``LookupError``, ``ValueError``, ``RuntimeError``) for code that catches those.
"""

from __future__ import annotations


class AwaiError(Exception):
    """An expected failure; the message says what is wrong and what to change."""
