"""A channel's fingerprint: what changes when a synced row changes other than by being appended.

Why: a read model (cached, or persisted in a file) holds the synced rows up to a last id; before
it takes the rows added since, it must know that none of those it holds changed. The fingerprint
says so in one aggregate query: per scope, how many rows and the sum of their ids (a row deleted,
synced late or moved to another scope changes it), how many were ever edited and the latest edit
time, how many hold offline fallback thoughts (a re-extraction rewrites them in place), which
message holds the last id (SQLite reuses the id of a deleted last row), and the channel's
collection (a re-embed). A delete, an edit, a row of an earlier id synced late or a new row
earlier in channel order all change it.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from sqlalchemy import Integer, cast, func, select
from sqlalchemy.orm import Session

from storage.read_model_keys import HeldRows
from storage.sql import ChannelRow, UtteranceRow


def fingerprint(session: Session, channel_row: ChannelRow, last_id: int) -> str:
    """What changes when any synced row up to ``last_id`` changes other than by being appended."""
    scopes, edited, latest_edit, fallbacks = _parts(
        session,
        (UtteranceRow.channel_id == channel_row.id)
        & UtteranceRow.synced.is_(True)
        & (UtteranceRow.id <= last_id),
    )
    return _fingerprint_of(
        scopes,
        edited,
        latest_edit,
        fallbacks,
        channel_row.source,
        _holder(session, channel_row, last_id),
    )


def fingerprint_extended(
    session: Session, channel_row: ChannelRow, known: str, after: int, last_id: int
) -> str:
    """:func:`fingerprint` of the synced rows up to ``last_id``, from ``known`` (the fingerprint
    of the rows up to ``after``, known unchanged) and the rows after it alone: each part is a count,
    a sum or a maximum, so the rows the channel held need not be read again."""
    scopes, edited, latest_edit, fallbacks, source, _ = json.loads(known)
    new_scopes, new_edited, new_latest, new_fallbacks = _parts(
        session,
        (UtteranceRow.channel_id == channel_row.id)
        & UtteranceRow.synced.is_(True)
        & (UtteranceRow.id > after)
        & (UtteranceRow.id <= last_id),
    )
    totals = {scope: (count, id_sum) for scope, count, id_sum in scopes}
    for scope, count, id_sum in new_scopes:
        held = totals.get(scope, (0, 0))
        totals[scope] = (held[0] + count, held[1] + id_sum)
    return _fingerprint_of(
        sorted((scope, count, id_sum) for scope, (count, id_sum) in totals.items()),
        edited + new_edited,
        max(float(latest_edit), new_latest),
        fallbacks + new_fallbacks,
        source,
        _holder(session, channel_row, last_id),
    )


def held_fingerprint(held: HeldRows, messages: int, source: str) -> tuple[int, str]:
    """The last id of ``held``'s first ``messages`` rows, and the fingerprint SQL gives its rows
    up to that id when they are exactly those rows: what a file cut to them says it holds.

    Why not SQL's own: a cut file holds the rows before the first changed one; its rows up to
    its last id are all SQL holds up to that id unless a row after the cut has a lower id (a
    late or out-of-order one), and then SQL's fingerprint differs from this one and the file is
    caught up by position (:meth:`storage.read_model.ReadModel._catch_up`), as it must be."""
    ids, edited = held.keys.ids[:messages], held.keys.edited[:messages]
    sums: dict[str, tuple[int, int]] = {}
    for scope, row_id in zip(held.scopes[:messages], ids.tolist(), strict=True):
        count, id_sum = sums.get(scope, (0, 0))
        sums[scope] = (count + 1, id_sum + row_id)
    was_edited = ~np.isnan(edited)
    last = int(ids.argmax())
    return int(ids[last]), _fingerprint_of(
        sorted((scope, count, id_sum) for scope, (count, id_sum) in sums.items()),
        int(was_edited.sum()),
        float(edited[was_edited].max()) if was_edited.any() else 0.0,
        int(held.keys.fallbacks[:messages].sum()),
        source,
        held.message_ids[last],
    )


def _fingerprint_of(
    scopes: list[tuple[str, int, int]],
    edited: int,
    latest_edit: float,
    fallbacks: int,
    source: str,
    holder: str | None,
) -> str:
    # Per scope, how many rows and the sum of their ids: a row deleted, synced late or moved to
    # another scope (a thread made private) changes it, in whichever process did it.
    return json.dumps([scopes, edited, latest_edit, fallbacks, source, holder])


def _holder(session: Session, channel_row: ChannelRow, last_id: int) -> str | None:
    """The message at ``last_id``: SQLite hands the id of a deleted last row to the next insert,
    and this tells a reused id from the row a cache holds."""
    return session.scalar(
        select(UtteranceRow.message_id).where(
            UtteranceRow.channel_id == channel_row.id, UtteranceRow.id == last_id
        )
    )


def _parts(session: Session, mine: Any) -> tuple[list[tuple[str, int, int]], int, float, int]:
    """Per scope (how many rows, the sum of their ids), how many were edited and the latest
    edit, how many hold offline fallback thoughts: of the rows ``mine`` selects."""
    edited, latest_edit, fallbacks = session.execute(
        select(
            func.count(UtteranceRow.edited_at),
            func.coalesce(func.max(UtteranceRow.edited_at), 0.0),
            # Thoughts re-extracted in place (an offline fallback replaced) keep text and edits.
            func.coalesce(func.sum(cast(UtteranceRow.extraction_fallback, Integer)), 0),
        ).where(mine)
    ).one()
    scopes = sorted(
        (scope, int(count), int(id_sum))
        for scope, count, id_sum in session.execute(
            select(
                UtteranceRow.scope,
                func.count(UtteranceRow.id),
                func.coalesce(func.sum(UtteranceRow.id), 0),
            )
            .where(mine)
            .group_by(UtteranceRow.scope)
        )
    )
    return scopes, int(edited), float(latest_edit), int(fallbacks)  # type: ignore[arg-type]  # COALESCE: never NULL
