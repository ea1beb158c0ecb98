"""Schema summaries are written when first shown, from the version's own members only.

The re-clustering job stores runs unworded (a long speaker's catch-up makes thousands of
versions); a reading, a digest or ``awai schemas`` words what it shows. Written late, after the
channel went on and was re-clustered, a summary must be the one written when the history stopped
at the message read: the same thoughts handed to the model, none from later.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence

import pytest
from sqlalchemy import text as sql

from awai_engine.backends.offline import OfflineBackend
from awai_engine.embedding import Embedder
from awai_engine.engine import Engine
from awai_engine.schemas import naming
from awai_engine.visibility import EVERYTHING
from bots.runtime import Runtime
from tests.schema_topics import CHATTER, said, topic_sentences
from tests.test_ingest import sql_dump

CHANNEL = "terminal:local:summaries"


class WordingModel(OfflineBackend):
    """A model backend whose summary of a schema is a fingerprint of exactly the thoughts it was
    handed (so equal summaries mean equal requests), and which records every request."""

    offline = False

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[tuple[str, ...]] = []

    def summarise_schema(self, speaker_name: str, thoughts: Sequence[str]) -> str:
        self.asked.append(tuple(thoughts))
        digest = hashlib.sha256("\x1f".join([speaker_name, *thoughts]).encode()).hexdigest()
        return f"{speaker_name} keeps coming back to this ({digest[:12]})."


def battery(count: int, seed: int = 0) -> list[str]:
    return [text for text, _ in topic_sentences(["battery"], count, seed)]


def conversation() -> list:
    """Ann on one worry, a message to read (m0030), then more of the same worry and chatter."""
    return (
        said(CHANNEL, "ann", battery(12), 1)
        + said(CHANNEL, "ann", ["The battery drained overnight again on my phone."], 30)
        + said(CHANNEL, "ann", battery(12, seed=5) + CHATTER[:4], 31)
    )


def modelled(runtime: Runtime, embedder: Embedder) -> tuple[Runtime, WordingModel]:
    model = WordingModel()
    return Runtime(runtime.settings, runtime.store, embedder, model), model


@pytest.mark.slow
def test_the_catch_up_asks_the_model_nothing_and_a_reading_words_what_it_recalls(
    make_runtime: Callable[..., Runtime], embedder: Embedder
) -> None:
    runtime, model = modelled(make_runtime(schemas={"recall_threshold": -1.0}), embedder)
    runtime.engine.ingest(conversation())
    report = runtime.schemas.recluster(CHANNEL, force=True)
    assert report.runs_stored >= 5 and report.new_versions >= 1
    assert model.asked == []

    reading = runtime.engine.read(CHANNEL, "m0030", EVERYTHING)
    assert reading.context.schemas
    assert 1 <= len(model.asked) <= len(reading.context.schemas)
    assert all("keeps coming back" in schema.summary for schema in reading.context.schemas)
    asked = len(model.asked)
    assert runtime.engine.read(CHANNEL, "m0030", EVERYTHING) == reading
    assert len(model.asked) == asked  # memoised: written once


@pytest.mark.slow
def test_a_summary_written_late_is_the_one_written_when_the_history_stopped_at_the_message(
    make_runtime: Callable[..., Runtime], embedder: Embedder
) -> None:
    messages = conversation()
    read = next(n for n, u in enumerate(messages) if u.message_id == "m0030")
    earlier = {thought for u in messages[:read] for thought in _thoughts(u.text)}

    stopped, _ = modelled(make_runtime("stopped", schemas={"recall_threshold": -1.0}), embedder)
    stopped.engine.ingest(messages[: read + 1])
    stopped.schemas.recluster(CHANNEL, force=True)
    at_once = stopped.engine.read(CHANNEL, "m0030", EVERYTHING)

    went_on, model = modelled(make_runtime("went-on", schemas={"recall_threshold": -1.0}), embedder)
    went_on.engine.ingest(messages)
    went_on.schemas.recluster(CHANNEL, force=True)
    later = went_on.engine.read(CHANNEL, "m0030", EVERYTHING)

    assert at_once.context.schemas
    assert [s.summary for s in later.context.schemas] == [
        s.summary for s in at_once.context.schemas
    ]
    assert model.asked and all(set(thoughts) <= earlier for thoughts in model.asked)
    # The digest words the schemas of the whole history, from all of it: the model hears later
    # thoughts there, and only there.
    went_on.schemas.digest(CHANNEL, EVERYTHING)
    assert any(not set(thoughts) <= earlier for thoughts in model.asked)


def _thoughts(text: str) -> list[str]:
    """The thoughts the offline extractor makes of a message (one per sentence)."""
    return [thought.text for thought in OfflineBackend().extract_one(text).thoughts]


# -- words written without the model ------------------------------------------------------------
#
# A process with no model (an operator's `awai read` or `awai schemas` without an API key) shares
# the store with the bot, which has one. Its keyphrase names are stored marked as not the model's:
# the first process to show a version must not decide its words for ever.


def _memo_rows(runtime: Runtime, columns: str = "summary") -> list[dict[str, object]]:
    """The memoised summaries, as stored (``columns``: what SQL selects)."""
    query = sql(f"SELECT {columns} FROM schema_summaries ORDER BY id")
    with runtime.store.db.engine.connect() as connection:
        return [dict(row._mapping) for row in connection.execute(query)]


@pytest.mark.slow
def test_a_version_an_offline_process_showed_first_is_worded_by_the_model_once_it_is_asked(
    make_runtime: Callable[..., Runtime], embedder: Embedder
) -> None:
    offline = make_runtime(schemas={"recall_threshold": -1.0})
    offline.engine.ingest(conversation())
    online, model = modelled(offline, embedder)  # the bot, on the same store
    online.schemas.recluster(CHANNEL, force=True)
    unworded = offline.engine.read(CHANNEL, "m0030", EVERYTHING)
    assert unworded.context.schemas
    assert not any("keeps coming back" in s.summary for s in unworded.context.schemas)
    offline_rows = _memo_rows(offline, "*")
    assert offline_rows

    reading = online.engine.read(CHANNEL, "m0030", EVERYTHING)
    assert model.asked
    assert all("keeps coming back" in s.summary for s in reading.context.schemas)
    # The offline names were stored marked as not the model's; the model's stand beside them,
    # and are what every process shows from now on.
    assert all(row.get("fallback") for row in offline_rows)
    worded = [row for row in _memo_rows(online, "*") if not row["fallback"]]
    assert worded and all("keeps coming back" in row["summary"] for row in worded)
    again = offline.engine.read(CHANNEL, "m0030", EVERYTHING)
    assert [s.summary for s in again.context.schemas] == [
        s.summary for s in reading.context.schemas
    ]


@pytest.mark.slow
def test_a_change_of_naming_rules_renames_the_stored_offline_names_as_from_scratch(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    def shown(runtime: Runtime) -> list[str]:
        return [
            s.summary for s in runtime.engine.read(CHANNEL, "m0030", EVERYTHING).context.schemas
        ]

    old = make_runtime("old", schemas={"recall_threshold": -1.0})
    old.engine.ingest(conversation())
    old.schemas.recluster(CHANNEL, force=True)
    before = shown(old)
    assert before

    # New rules: every name reads differently. Memoised, the old names would stand for good...
    renamed = naming.offline_name
    monkeypatch.setattr(naming, "offline_name", lambda *args: f"new rules: {renamed(*args)}")
    assert shown(old) == before
    # ...until the rules' version says they changed: then they are named as a new store names them.
    monkeypatch.setattr(naming, "RULES", naming.RULES + 1)
    fresh = make_runtime("fresh", schemas={"recall_threshold": -1.0})
    fresh.engine.ingest(conversation())
    fresh.schemas.recluster(CHANNEL, force=True)
    assert shown(old) == shown(fresh) == [f"new rules: {name}" for name in before]


@pytest.mark.slow
def test_the_models_summary_stays_once_written_whoever_shows_the_version_next(
    make_runtime: Callable[..., Runtime], embedder: Embedder
) -> None:
    offline = make_runtime(schemas={"recall_threshold": -1.0})
    offline.engine.ingest(conversation())
    online, model = modelled(offline, embedder)
    online.schemas.recluster(CHANNEL, force=True)
    offline.engine.read(CHANNEL, "m0030", EVERYTHING)
    worded = online.engine.read(CHANNEL, "m0030", EVERYTHING)
    assert all("keeps coming back" in s.summary for s in worded.context.schemas)
    rows, asked = _memo_rows(online), len(model.asked)

    # An offline process shows the model's words and stores none of its own.
    later = offline.engine.read(CHANNEL, "m0030", EVERYTHING)
    assert [s.summary for s in later.context.schemas] == [s.summary for s in worded.context.schemas]
    assert _memo_rows(offline) == rows
    # The bot reads its memo: the model is not asked again.
    assert online.engine.read(CHANNEL, "m0030", EVERYTHING) == worded
    assert len(model.asked) == asked


class DeletingModel(WordingModel):
    """A model during whose call another thread deletes one of the thoughts' messages (and purges
    the schemas made from it, as every deletion does)."""

    def __init__(self) -> None:
        super().__init__()
        self.engine: Engine | None = None
        self.deleted: dict[str, str] = {}

    def summarise_schema(self, speaker_name: str, thoughts: Sequence[str]) -> str:
        summary = super().summarise_schema(speaker_name, thoughts)
        if not self.deleted:
            assert self.engine is not None
            said = [u.text for u in conversation()]
            texts = {u.message_id: u.text for u in conversation() if said.count(u.text) == 1}
            victim = next(message for message, text in texts.items() if text in thoughts)
            self.deleted[victim] = texts[victim]
            deleting = threading.Thread(target=self.engine.delete, args=(CHANNEL, victim))
            deleting.start()
            deleting.join(timeout=60)
            assert not deleting.is_alive()
        return f"{summary} Such as: {' | '.join(thoughts)}"


@pytest.mark.slow
def test_a_summary_whose_member_is_deleted_during_the_model_call_is_not_stored(
    make_runtime: Callable[..., Runtime], embedder: Embedder
) -> None:
    base = make_runtime(schemas={"recall_threshold": -1.0})
    model = DeletingModel()
    runtime = Runtime(base.settings, base.store, embedder, model)
    model.engine = runtime.engine
    runtime.engine.ingest(conversation())
    runtime.schemas.recluster(CHANNEL, force=True)
    runtime.engine.read(CHANNEL, "m0030", EVERYTHING)
    assert model.deleted

    runtime.schemas.purge_deleted(CHANNEL)  # any later purge
    runtime.store.finish_erasures()
    dump = sql_dump(runtime)
    assert not any(said in dump for said in model.deleted.values())


def test_a_process_met_afresh_reads_a_versions_keyphrases_from_the_memo_not_by_counting(
    make_runtime: Callable[..., Runtime], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding a version's keyphrases counts every term its speaker said up to the point; a
    process that starts again (or `awai read FILE`) finds them memoised with the name, and
    reads the same keyphrases."""
    first = make_runtime(schemas={"recall_threshold": -1.0})
    first.engine.ingest(conversation())
    first.schemas.recluster(CHANNEL, force=True)
    counted: list[int] = []
    count = naming.basis_keyphrases

    def counting(*args: object) -> tuple[str, ...]:
        counted.append(1)
        return count(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(naming, "basis_keyphrases", counting)
    before = first.engine.read(CHANNEL, "m0030", EVERYTHING).context.schemas
    assert before and all(schema.keyphrases for schema in before)
    assert counted  # made once, when first shown

    counted.clear()
    again = make_runtime(schemas={"recall_threshold": -1.0})  # the same folder, a new process
    assert again.engine.read(CHANNEL, "m0030", EVERYTHING).context.schemas == before
    assert counted == []
