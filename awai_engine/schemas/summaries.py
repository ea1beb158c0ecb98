"""Schema summaries: written once per member set and memoised, so every path shows the same words.

Why memoised by member set: the same schema state can be reached twice, clustered on demand for
a reading and later stored by the scheduler. A language model would word it differently each
time, which would let a scheduled job change what an earlier reading shows. Keyed by the members'
ids and texts, the first summary written is the one every later path reads.

Why written when first shown, not when a run is stored: a long speaker's catch-up makes a new
version at nearly every fixed point for most of their clusters (12,105 versions for one speaker
of 24,000 thoughts), while readings recall a few and a digest shows the latest. Summarising
every version was half of a catch-up with the fake model, and one model call each with a real
one. A summary is made from the version's own members, the speaker's thoughts up to its run's
fixed point, whenever it is written, so writing it later sees nothing later.

Why a name made without the model is memoised marked: a process with no model (an operator's
``awai read`` without an API key) shares the store with the bot. Memoised as final, its keyphrase
name would stand for good if it showed a version first; marked, the bot's model still words it.
Such a name is keyed by the naming rules too (:data:`~awai_engine.schemas.naming.RULES`), so
a change of the rules re-names stored versions when next shown instead of leaving a channel with
the old rules' names for good. A memo is never stored for a member set one of whose messages is deleted by then (the store
checks in its write transaction), so a summary written during a deletion cannot outlive its purge.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence

from awai_engine.ports import LanguageBackend
from awai_engine.schemas import naming
from awai_engine.schemas.basis import Basis
from awai_engine.schemas.build import central_rows
from awai_engine.schemas.model import SchemaState
from awai_engine.schemas.ports import SchemaStore
from awai_engine.settings import SchemaSettings

log = logging.getLogger(__name__)


class Summaries:
    def __init__(
        self, backend: LanguageBackend, store: SchemaStore, settings: SchemaSettings
    ) -> None:
        self.backend = backend
        self.store = store
        self.settings = settings

    def fill(self, basis: Basis, states: Sequence[SchemaState]) -> tuple[SchemaState, ...]:
        """Each state with a summary: kept, memoised, or written now by the backend.

        ``basis`` is the one the states were clustered from. Offline, the name is the schema's
        keyphrases (:mod:`awai_engine.schemas.naming`); so it is when the model fails or writes
        nothing. That name is memoised marked as a fallback: an offline backend reuses it, one
        with the model takes it for missing and writes the model's summary over it, which then
        stands for every process. Whichever process shows a version first, offline or not, the
        model words it once it is asked.
        """
        rows_of = {key: row for row, key in enumerate(basis.keys)}
        filled = []
        for state in states:
            if state.summary is not None:
                filled.append(state)
                continue
            rows = central_rows(basis, state, rows_of)
            digest = members_digest(basis, rows)
            memo = self.store.summary(basis.channel, basis.speaker_id, digest, model_only=True)
            if memo is None and self.backend.offline:
                memo = self.store.summary(basis.channel, basis.speaker_id, _named_now(digest))
            if memo is None:
                texts = [basis.texts[row] for row in rows[: self.settings.summary_thoughts]]
                written = ""
                if not self.backend.offline:
                    try:
                        written = self.backend.summarise_schema(basis.speaker_name, texts).strip()
                    except Exception:
                        log.exception(
                            "the %s backend failed to summarise a schema", self.backend.name
                        )
                memo = self.store.save_summary(
                    basis.channel,
                    basis.speaker_id,
                    digest if written else _named_now(digest),
                    state.members,
                    written or naming.offline_name(self.keyphrases(basis, state), texts[0]),
                    fallback=not written,
                )
            filled.append(state.with_summary(memo))
        return tuple(filled)

    def keyphrases(self, basis: Basis, state: SchemaState) -> tuple[str, ...]:
        """The version's keyphrases (:func:`~awai_engine.schemas.naming.basis_keyphrases`),
        memoised in the store like a name made without the model, under everything they are a
        function of: the basis (its thoughts up to the point, by fingerprint), the version, its
        members, the names known when it formed, and the naming rules.

        Why: finding them counts every term the speaker said up to the point, 50–70 ms the first
        time a process meets a long speaker; a command that reads one message (``awai read
        FILE``) meets every speaker for the first time, and a bot that starts again too. A memo
        is dropped with its members (a deletion) or its speaker (a forget), as a name's is."""
        key = _keyphrases_key(basis, state)
        memo = self.store.summary(basis.channel, basis.speaker_id, key)
        if memo is not None:
            found = json.loads(memo)
            if isinstance(found, list) and all(isinstance(phrase, str) for phrase in found):
                return tuple(found)
        made = naming.basis_keyphrases(basis, state.members, state.version)
        self.store.save_summary(
            basis.channel, basis.speaker_id, key, state.members, json.dumps(made), fallback=True
        )
        return made

    def known(self, basis: Basis, state: SchemaState) -> str | None:
        """The summary memoised for a state's member set, written by nobody now: for a schema
        that no longer forms (``None`` if none was written, or its members changed since). A
        fallback counts here: it is the words the schema was shown by."""
        rows_of = {key: row for row, key in enumerate(basis.keys)}
        if state.summary is not None or any(key not in rows_of for key in state.members):
            return state.summary
        rows = [rows_of[key] for key in state.members]
        digest = members_digest(basis, rows)
        channel, speaker = basis.channel, basis.speaker_id
        return (
            self.store.summary(channel, speaker, digest, model_only=True)
            or self.store.summary(channel, speaker, _named_now(digest))
            or self.store.summary(channel, speaker, digest)  # named under earlier rules
        )


def _keyphrases_key(basis: Basis, state: SchemaState) -> str:
    """The memo key of a version's keyphrases (see :meth:`Summaries.keyphrases`): a key no
    member set's digest can be, as every part is named. The names known then go in as the
    speakers known (:func:`~awai_engine.schemas.naming.known_speakers_key`), not as their words:
    the words are a function of them, and finding them cost more than the lookup."""
    known = naming.known_speakers_key(basis, state.version)
    members = "\x1f".join(sorted(state.members))
    return hashlib.sha256(
        f"keyphrases\x1e{basis.digest}\x1e{state.version}\x1e{members}\x1e{known}"
        f"\x1e{naming.RULES}".encode()
    ).hexdigest()


def _named_now(digest: str) -> str:
    """The key of a member set's name made without the model under today's naming rules
    (:data:`~awai_engine.schemas.naming.RULES`): a change of the rules re-names every version the
    next time it is shown, as the version's own prefix names it (so still causal), where a name
    memoised under the member set alone would stand for good. The model's words are keyed by the
    member set alone: no change of these rules makes them stale."""
    return hashlib.sha256(f"{digest}\x1f{naming.RULES}".encode()).hexdigest()


def members_digest(basis: Basis, rows: Sequence[int]) -> str:
    """Fingerprint of a member set: its thought ids and texts, order-free."""
    fingerprint = hashlib.sha256()
    for key, text in sorted((basis.keys[row], basis.texts[row]) for row in rows):
        fingerprint.update(f"{key}\x1f{text}\x1e".encode())
    return fingerprint.hexdigest()
