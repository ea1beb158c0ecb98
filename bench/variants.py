"""The settings one bench row runs with: production's, with some values changed.

Why here: association's recall rules are not settings (``awai_engine/association/settings.py``):
production runs the fitted ones, and only a bench varies them. A row names what it changes as
``section.field=value`` (``association.max_items=4``, ``flow.capacity=5``) or, for a rule,
``rules.field=value`` (``rules.conversation_z=3``); each section, and the rules, validate the
values with their own bounds, so a typo or an out-of-range value stops the bench with its name.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ValidationError

from awai_engine.settings import Settings


def varied(settings: Settings, changes: Iterable[tuple[str, object]]) -> Settings:
    """``settings`` with each ``(section.field, value)`` of ``changes`` set and validated.

    Raises ``SystemExit`` naming the key for an unknown section or field, or a refused value.
    """
    sections: dict[str, dict[str, object]] = {}
    for key, value in changes:
        section, dot, field = key.partition(".")
        if not dot or not field or (section != "rules" and not hasattr(settings, section)):
            raise SystemExit(
                f"a bench variant sets section.field=value or rules.field=value: {key!r}"
            )
        sections.setdefault(section, {})[field] = value
    association = settings.association
    rules = sections.pop("rules", None)
    if rules is not None:
        association_changes = sections.setdefault("association", {})
        association_changes["rules"] = _validated(association.rules, "rules", rules)
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
    try:  # the values themselves, not a dump: association's rules are refused as a dict
        return type(current).model_validate({**dict(current), **values})
    except ValidationError as error:
        raise SystemExit(f"{name}: {error}") from None
