"""The settings one bench row runs with: production's, with some values changed.

Why here: the fitted rules beside a settings section are not settings (association's
``RecallRules``, the schemas' ``SchemaRules``, the recall index's ``RecallIndexRules``; see
``awai_engine/fitted_rules.py``): production runs the fitted ones, and only a bench or a test
varies them. A row names what it changes as ``section.field=value`` (``association.max_items=4``,
``flow.capacity=5``), for a section's rules ``section.rules.field=value``
(``schemas.rules.min_samples=3``, ``recall_index.rules.probes=8``), and for association's rules
also ``rules.field=value`` (``rules.conversation_z=3``); each section, and the rules, validate
the values with their own bounds, so a typo or an out-of-range value stops the bench with its
name.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ValidationError

from awai_engine.settings import Settings

FORMS = "section.field=value, section.rules.field=value or rules.field=value"


def varied(settings: Settings, changes: Iterable[tuple[str, object]]) -> Settings:
    """``settings`` with each ``(key, value)`` of ``changes`` set and validated.

    Raises ``SystemExit`` naming the key for an unknown section or field, or a refused value.
    """
    sections: dict[str, dict[str, object]] = {}
    rules: dict[str, dict[str, object]] = {}
    for key, value in changes:
        parts = key.split(".")
        if len(parts) == 2 and parts[0] == "rules":  # association's, named before the others
            parts = ["association", *parts]
        if len(parts) == 3 and parts[1] == "rules" and all(parts):
            rules.setdefault(parts[0], {})[parts[2]] = value
        elif len(parts) == 2 and all(parts):
            sections.setdefault(parts[0], {})[parts[1]] = value
        else:
            raise SystemExit(f"a bench variant sets {FORMS}: {key!r}")
    for section in {*sections, *rules}:
        current = getattr(settings, section, None) if section in Settings.model_fields else None
        if not isinstance(current, BaseModel):
            raise SystemExit(f"the settings have no section {section!r}")
        if section in rules:
            fitted = getattr(current, "rules", None)
            if not isinstance(fitted, BaseModel):
                raise SystemExit(f"{section} has no fitted rules")
            changed = _validated(fitted, f"{section}.rules", rules[section])
            sections.setdefault(section, {})["rules"] = changed
    update = {
        section: _validated(getattr(settings, section), section, values)
        for section, values in sections.items()
    }
    return settings.model_copy(update=update)


def _validated(current: BaseModel, name: str, values: dict[str, object]) -> BaseModel:
    """``current`` with ``values``, through its own model's validation (bounds, cross-checks)."""
    unknown = set(values) - set(type(current).model_fields)
    if unknown:  # the models ignore unknown keys: a typo would be a silent no-op
        raise SystemExit(f"{name} has no {', '.join(sorted(unknown))}")
    try:  # the values themselves, not a dump: the rules are refused as a dict
        return type(current).model_validate({**dict(current), **values})
    except ValidationError as error:
        raise SystemExit(f"{name}: {error}") from None
