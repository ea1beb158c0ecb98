"""Fitted rules beside a settings section: set in code, never read from the environment.

Why: several packages split their numbers in two (association's ``RecallRules``, the schemas'
``SchemaRules``, the recall index's ``RecallIndexRules``). The operator's section is read from
``AWAI_…`` variables; the rules were chosen on real data (docs/evaluation.md, docs/performance.md)
and only tests and bench variants change them. Each of those numbers used to be a setting, so an
old ``.env`` may still set one: it is refused with where it went, rather than silently ignored.
"""

from __future__ import annotations

from pydantic import BaseModel


def refuse_rules(values: object, rules: type[BaseModel], section: str, varied_by: str) -> object:
    """``values`` (a section's raw input) unchanged, or ``ValueError`` naming each rule it sets.

    ``section`` is the section's name in the settings (``schemas``); ``varied_by`` says how a
    bench changes the rules instead. A ``rules`` value given as an object (by code) passes; given
    as a dict (from the environment: ``AWAI_SCHEMAS__RULES__…``) it is refused too.
    """
    if not isinstance(values, dict):
        return values
    moved = sorted(set(values) & set(rules.model_fields))
    if isinstance(values.get("rules"), dict):
        moved.extend(f"rules__{name}" for name in values["rules"])
    if moved:
        names = ", ".join(f"AWAI_{section.upper()}__{name.upper()}" for name in moved)
        raise ValueError(
            f"{names}: no longer a setting (removed). It is one of the {rules.__name__} chosen on"
            f" real data, which production keeps; {varied_by}. Remove the variable"
        )
    return values
