"""The engine's entry points: ingest, edit, delete, and read a message in its context.

Adapters (terminal, Slack, Discord) never build it: the composition root (``bots/runtime.py``)
does and hands it to them as ``Runtime.engine``, their way to store, edit, delete and read
messages (forgetting a whole speaker is the schema service's, also on the runtime); no adapter
reaches storage any other way (``tests/test_layering.py``). It validates input, asks the
language backend for thoughts and summaries, embeds the thoughts, hands the result to storage in
one step, and assembles readings from the stored prefix of a channel.
"""

from __future__ import annotations

import errno
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from itertools import islice
from typing import Protocol

from threadpoolctl import threadpool_limits

from awai_engine import heap_trim
from awai_engine.admission import text_problem, ts_problem
from awai_engine.association.admission import admission_model
from awai_engine.association.recall import recall
from awai_engine.association.reply_targets import with_reply_targets
from awai_engine.connections import connect
from awai_engine.context import build_flow
from awai_engine.embedding import Embedder
from awai_engine.errors import AwaiError
from awai_engine.extraction_window import extraction_targets
from awai_engine.limits import cut_notes
from awai_engine.ports import (
    ContextTooLargeError,
    ExtractionTarget,
    LanguageBackend,
    PreparedUtterance,
    Store,
)
from awai_engine.reconcile import DamagedVectorsError, rebuilt_notice
from awai_engine.reply_target.model import reply_model
from awai_engine.reply_target.scorer import reply_scores, shown_replies
from awai_engine.settings import Settings
from awai_engine.text import clean, detect_language
from awai_engine.text_caches import forget_cached_texts
from awai_engine.values import (
    Association,
    Interpretation,
    OfflineReason,
    Reading,
    ReadingContext,
    ReadingNote,
    RecalledSchema,
    Utterance,
    Value,
)
from awai_engine.visibility import Scopes, TimelineViews, View

log = logging.getLogger(__name__)


def limit_blas_threads(threads: int | None) -> None:
    """Cap numpy's BLAS thread pool for the whole process (see ``RecallIndexSettings``)."""
    if threads is not None:
        threadpool_limits(limits=threads, user_api="blas")


# Messages split and embedded per call. sentence-transformers sorts each call's texts by length
# before batching, so bigger calls pad less: 1,024 instead of 256 took offline ingest from
# 0.71–0.80 to 0.82–0.89 of raw batched encode (bench/ingest_throughput.py).
INGEST_CHUNK = 1024


class UnknownMessageError(AwaiError, LookupError):
    """The message is not stored in that channel (never ingested, deleted, or another channel),
    or the asker may not see it: the two are one answer, so a refusal reveals nothing."""


class StillStoringError(UnknownMessageError):
    """A writer began storing the message and has not finished within
    ``read_model.writer_wait_seconds``: it is stuck, or died between its steps (its restart
    finishes the write). Readers do not see the message yet; asking again later will."""


WRITER_POLL_SECONDS = (0.05, 0.5)
"""The first and the longest pause between two looks at a message a writer is storing."""


class OutOfSpaceError(AwaiError, RuntimeError):
    """The disk filled up while storing: ingest stopped; what was stored before stays stored.

    ``report`` counts what this ingest stored before the disk was full.
    """

    def __init__(self, message: str, report: IngestReport) -> None:
        super().__init__(message)
        self.report = report


class SchemaRecall(Protocol):
    """Recalls the speaker's preconceptions as of before a message (see the schemas issue)."""

    def recall(
        self, channel: str, view: View, position: int, associations: tuple[Association, ...]
    ) -> tuple[tuple[RecalledSchema, ...], tuple[Association, ...]]:
        """Recalled schemas from the asker's view, and the associations with ``important`` set
        where it applies."""
        ...

    def purge_deleted(self, channel: str) -> None:
        """Forget every schema version and summary made from a deleted message."""
        ...

    def forget_held(self, channel: str) -> None:
        """Drop what memory holds for the channel (when its read model goes)."""
        ...

    def held_channels(self) -> list[str]:
        """The channels anything is held in memory for."""
        ...


class IngestProblem(Value):
    """A message that was not stored, and why, so the user can fix it."""

    message_id: str
    reason: str


class IngestReport(Value):
    added: int = 0
    edited: int = 0
    unchanged: int = 0
    refused_deleted: int = 0
    stale: int = 0  # versions older than the stored one (an earlier edit time), left alone
    problems: tuple[IngestProblem, ...] = ()
    notes: tuple[str, ...] = ()


class ReextractReport(Value):
    """One channel's re-extraction: messages whose thoughts were an offline fallback, and how
    many the model rewrote (the rest stay marked for the next run)."""

    channel: str
    pending: int = 0
    rewritten: int = 0


class Engine:
    def __init__(
        self,
        settings: Settings,
        store: Store,
        embedder: Embedder,
        backend: LanguageBackend,
        schemas: SchemaRecall | None = None,
        views: TimelineViews | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        limit_blas_threads(settings.recall_index.blas_threads)
        self.embedder = embedder
        self.backend = backend
        self.schemas = schemas
        # Read here, not at the first reading: a missing or damaged file is said at start-up.
        self.reply_model = reply_model()
        if settings.association.rules.admission_bar is not None:
            admission_model()  # recall's gate, read once per process
        self.views = views or TimelineViews()  # shared with ``schemas`` when it recalls by view
        self._removals_seen: str | None = None  # see drop_removed_elsewhere
        # What is derived from a read model goes with it (evicted, rebuilt, dropped).
        store.on_timeline_released(self._released)

    # -- writing -------------------------------------------------------------------------------

    def ingest(
        self,
        utterances: Iterable[Utterance],
        progress: Callable[[int], None] | None = None,
    ) -> IngestReport:
        """Store messages idempotently: new ones are added, changed text is an edit, same is a no-op.

        Invalid messages are reported and skipped; the rest are stored. ``progress`` is called with
        the number of messages handled after each chunk.
        """
        try:
            return self._ingest_chunks(utterances, progress)
        finally:
            # What was embedded ahead and never asked for (a message refused as deleted, a
            # chunk not reached) is not kept past the ingest: nothing else would drop its words.
            self.embedder.drop_ahead()

    def _ingest_chunks(
        self, utterances: Iterable[Utterance], progress: Callable[[int], None] | None
    ) -> IngestReport:
        totals = {"added": 0, "edited": 0, "unchanged": 0, "refused_deleted": 0, "stale": 0}
        problems: list[IngestProblem] = []
        notes: list[str] = []
        iterator = iter(utterances)
        following = list(islice(iterator, INGEST_CHUNK))
        while chunk := following:
            following = list(islice(iterator, INGEST_CHUNK))
            by_channel = self._valid_by_channel(chunk, problems)
            last = list(by_channel)[-1:]
            for channel, items in by_channel.items():
                # The next chunk's thoughts are embedded while the last channel's are stored.
                ahead = partial(self._encode_ahead, following) if [channel] == last else None
                try:
                    counts, chunk_notes, failed = self._ingest_rebuilding(channel, items, ahead)
                except Exception as error:
                    full = _out_of_space(error)
                    if full is None:
                        raise
                    stored = IngestReport(**totals, problems=tuple(problems), notes=tuple(notes))
                    raise OutOfSpaceError(
                        f"The disk is full ({full.strerror or full}"
                        f"{f': {full.filename}' if full.filename else ''}): storing stopped after"
                        f" {totals['added'] + totals['edited']} new or edited message(s), which"
                        " are kept. Free some space and run the same command again: what is"
                        " stored is not done twice.",
                        stored,
                    ) from error
                for key, value in counts.items():
                    totals[key] += value
                notes.extend(chunk_notes)
                problems.extend(failed)
            # A chunk's encoding and writes allocate and free tens of MiB (token batches, the
            # encoder's outputs, Chroma's write batches); glibc keeps what is freed, so without
            # this an ingest's peak grew chunk by chunk (`awai ingest` of 10k messages, peak RSS:
            # 492–541 MiB without, 473–495 with, seven runs in turns, the same wall time).
            heap_trim.give_back()
            if progress:
                progress(len(chunk))
        return IngestReport(**totals, problems=tuple(problems), notes=tuple(notes))

    def _valid_by_channel(
        self, chunk: Sequence[Utterance], problems: list[IngestProblem] | None = None
    ) -> dict[str, list[Utterance]]:
        """The valid messages of ``chunk`` by channel, their texts cleaned; each invalid one's
        problem is added to ``problems``."""
        by_channel: dict[str, list[Utterance]] = {}
        for utterance in chunk:
            problem = self._problem_with(utterance)
            if problem is None:
                cleaned = utterance.model_copy(update={"text": clean(utterance.text)})
                by_channel.setdefault(utterance.channel, []).append(cleaned)
            elif problems is not None:
                problems.append(IngestProblem(message_id=utterance.message_id, reason=problem))
        return by_channel

    def _encode_ahead(self, utterances: Sequence[Utterance]) -> None:
        """Start embedding the thoughts ``utterances`` (the next chunk of an ingest) will have,
        for their :meth:`prepare` to find made (:meth:`Embedder.encode_ahead`).

        Only with an offline backend: its thoughts are each message's own sentences, so they are
        known before the messages said before them are stored; a model writes thoughts from a
        message's context, which is not stored yet. Messages stored with the same text are left
        out (a file stored again embeds nothing). A guess that turns out wrong (a message
        edited by another process meanwhile) is only embedded again."""
        if not utterances or not self.backend.offline:
            return
        try:
            new: list[Utterance] = []
            for channel, items in self._valid_by_channel(utterances).items():
                stored = self.store.stored_texts(channel, [u.message_id for u in items])
                new.extend(u for u in items if stored.get(u.message_id) != u.text)
            extractions = self.backend.extract([ExtractionTarget(utterance=u) for u in new])
            self.embedder.encode_ahead([t.text for e in extractions for t in e.thoughts])
        except Exception as error:  # the next chunk's to meet, and isolate, when it is stored
            log.debug("the next chunk's thoughts are not embedded ahead: %r", error)

    def _problem_with(self, utterance: Utterance) -> str | None:
        fields = (
            ("channel", utterance.channel),
            ("id", utterance.message_id),
            ("speaker_id", utterance.speaker_id),
            ("speaker", utterance.speaker_name),
            ("text", utterance.text),
            ("thread", utterance.thread_root or ""),
        )
        for name, value in fields:
            problem = text_problem(name, value)
            if problem:
                return problem
        problem = ts_problem(utterance.ts)
        if problem:
            return problem
        text = clean(utterance.text)
        limit = self.settings.limits.max_message_chars
        if not text:
            return "the message has no text to read (empty, whitespace or control characters only)"
        if len(text) > limit:
            return (
                f"the message has {len(text):,} characters; the limit is {limit:,}"
                " (AWAI_LIMITS__MAX_MESSAGE_CHARS)"
            )
        return None

    def _ingest_rebuilding(
        self, channel: str, utterances: list[Utterance], ahead: Callable[[], None] | None = None
    ) -> tuple[dict[str, int], list[str], list[IngestProblem]]:
        """:meth:`_ingest_isolating`, once more after rebuilding the channel's vector index if
        it turned out damaged on the way (the rebuild's notice comes first in the notes)."""
        try:
            return self._ingest_isolating(channel, utterances, ahead)
        except DamagedVectorsError as error:
            notice = rebuilt_notice(channel, self._rebuild_vectors(channel, error))
        counts, notes, problems = self._ingest_isolating(channel, utterances)
        return counts, [notice, *notes], problems

    def _rebuild_vectors(self, channel: str, error: DamagedVectorsError) -> int:
        """Rebuild a damaged vector index from what SQL keeps; returns the thoughts embedded
        (the caller tells a person)."""
        thoughts = self.store.rebuild_vectors(channel, self.embedder.encode)
        log.info("%s It had failed with: %s", rebuilt_notice(channel, thoughts), error)
        return thoughts

    def _ingest_isolating(
        self, channel: str, utterances: list[Utterance], ahead: Callable[[], None] | None = None
    ) -> tuple[dict[str, int], list[str], list[IngestProblem]]:
        """Ingest the messages together; if that fails, one at a time, so that a message whose
        extraction, embedding or storage fails costs only itself.

        A full disk is no message's fault: it stops the ingest (``OSError`` with ``ENOSPC``, which
        storage raises for its backends' own disk-full errors), and so does a damaged vector
        index. So does an error every message of the batch fails with: that is the store or the
        model failing, not the input.

        ``ahead`` is called once the messages are prepared, before they are stored.
        """
        self.store.ensure_channel(channel, self.embedder.model_name, self.embedder.dimension)
        try:
            counts, notes = self._ingest_channel(channel, utterances, ahead)
            return counts, notes, []
        except Exception as error:
            if len(utterances) == 1 or _not_the_messages(error):
                raise
            log.warning("storing %d messages together failed (%s)", len(utterances), error)
        totals = {"added": 0, "edited": 0, "unchanged": 0, "refused_deleted": 0, "stale": 0}
        notes, problems, first_error = [], [], None
        for utterance in utterances:
            try:
                counts, message_notes = self._ingest_channel(channel, [utterance])
            except Exception as error:
                if _not_the_messages(error):
                    raise
                first_error = first_error or error
                log.warning("message %s of %s not stored: %r", utterance.message_id, channel, error)
                problems.append(
                    IngestProblem(
                        message_id=utterance.message_id,
                        reason=f"could not be stored ({type(error).__name__}: {error})",
                    )
                )
                continue
            for key, value in counts.items():
                totals[key] += value
            notes.extend(message_notes)
        if first_error is not None and len(problems) == len(utterances):
            raise first_error  # no message could be stored: the store failed, not the input
        return totals, notes, problems

    def _ingest_channel(
        self, channel: str, utterances: list[Utterance], ahead: Callable[[], None] | None = None
    ) -> tuple[dict[str, int], list[str]]:
        ids = [utterance.message_id for utterance in utterances]
        stored = self.store.stored_texts(channel, ids)
        edit_times = self.store.stored_edit_times(channel, ids)
        tombstones = self.store.tombstones(channel, ids)
        counts = {"added": 0, "edited": 0, "unchanged": 0, "refused_deleted": 0, "stale": 0}
        latest: dict[str, Utterance] = {}
        for utterance in utterances:  # a repeated id in one batch: the newest version wins
            kept = latest.get(utterance.message_id)
            if kept is None or not utterance.is_older_than(kept.edited_ts):
                latest[utterance.message_id] = utterance
        todo = []
        for utterance in latest.values():
            if utterance.message_id in tombstones and not utterance.brings_back(
                tombstones[utterance.message_id]
            ):
                counts["refused_deleted"] += 1
            elif utterance.message_id not in stored:
                counts["added"] += 1
                todo.append(utterance)
            elif utterance.is_older_than(edit_times.get(utterance.message_id)):
                counts["stale"] += 1  # the store refuses it too, inside its write transaction
            elif stored[utterance.message_id] != utterance.text:
                counts["edited"] += 1
                todo.append(utterance)
            else:
                counts["unchanged"] += 1
        counts["unchanged"] += len(utterances) - len(latest)
        if not todo:
            return counts, []
        prepared = self.prepare(todo)
        if ahead is not None:
            ahead()
        self.store.save(channel, prepared)
        notes = [
            f"{item.utterance.message_id}: {note}"
            for item in prepared
            for note in item.extraction.notes
        ]
        return counts, notes

    def prepare(self, utterances: Sequence[Utterance]) -> list[PreparedUtterance]:
        """Thoughts, summary and vectors of each utterance: everything storage needs to write it.

        Each utterance is extracted with the few utterances of its line said just before it
        (stored, or earlier in ``utterances``) and nothing later, the same live and in a backfill.
        """
        size = self.settings.llm.extraction_context
        by_channel: dict[str, list[Utterance]] = {}
        for utterance in utterances:
            by_channel.setdefault(utterance.channel, []).append(utterance)
        targets = [
            target
            for channel, mine in by_channel.items()
            for target in extraction_targets(self.store.timeline(channel), mine, size)
        ]
        extractions = self.backend.extract(targets)
        utterances = [target.utterance for target in targets]
        texts = [thought.text for extraction in extractions for thought in extraction.thoughts]
        vectors = self.embedder.encode(texts)
        prepared, row = [], 0
        for utterance, extraction in zip(utterances, extractions, strict=True):
            count = len(extraction.thoughts)
            prepared.append(PreparedUtterance(utterance, extraction, vectors[row : row + count]))
            row += count
        return prepared

    def reextract(self, channel: str) -> ReextractReport:
        """Thoughts made offline while the model did not answer, written again by the model.

        Each is an edit at the same position: the message keeps its text and place, and is
        extracted from itself and the utterances before it, as at ingest, so every reading of an
        earlier message stays as it was. One the model still does not answer for stays marked.
        """
        if self.backend.offline:
            return ReextractReport(channel=channel)
        pending = self.store.fallback_utterances(channel)
        if not pending:
            return ReextractReport(channel=channel)
        rewritten = [item for item in self.prepare(pending) if not item.extraction.fallback]
        if rewritten:
            self.store.save(channel, rewritten)
        log.info("re-extraction of %s: %d of %d rewritten", channel, len(rewritten), len(pending))
        return ReextractReport(channel=channel, pending=len(pending), rewritten=len(rewritten))

    def reextract_all(self) -> list[ReextractReport]:
        """:meth:`reextract` for every channel (what the scheduled job runs)."""
        return [self.reextract(channel) for channel in self.store.channels()]

    def edit(self, utterance: Utterance) -> bool:
        """Replace a stored message's text (thoughts and vectors with it).

        ``False`` if the message is unknown or deleted, or if the new text is refused (over a
        limit): the stored text then stays as it was, and the reason is logged. A message whose
        words an earlier edit took off the platform (:meth:`withdraw`) is stored again.
        """
        channel, message_id = utterance.channel, utterance.message_id
        if message_id not in self.store.stored_texts(channel, [message_id]):
            withdrawn = self.store.tombstones(channel, [message_id])
            if message_id not in withdrawn or not utterance.brings_back(withdrawn[message_id]):
                return False
        report = self.ingest([utterance])
        for problem in report.problems:
            log.warning("edit of message %s refused: %s", problem.message_id, problem.reason)
        return not report.problems

    def delete(self, channel: str, message_id: str) -> bool:
        """Remove a message everywhere, schema summaries made from it included; it will not be
        ingested again (privacy beats fidelity)."""
        return self._forget(channel, message_id, None)

    def withdraw(self, channel: str, message_id: str, edited_ts: float | None) -> bool:
        """Its words were edited off the platform at ``edited_ts`` (into a command to AWAI, or
        into a file alone): forgotten as a deletion is, but an edit made after that which puts
        words back stores the message again at its place, as the platform shows it. Without an
        edit time nothing can tell a later edit from a redelivered earlier one: out for good."""
        return self._forget(channel, message_id, edited_ts)

    def _forget(self, channel: str, message_id: str, withdrawn_ts: float | None) -> bool:
        deleted = self.store.delete(channel, message_id, withdrawn_ts)
        self.views.forget(channel)
        if deleted and self.schemas is not None:
            self.schemas.purge_deleted(channel)
        return deleted

    def drop_removed_elsewhere(self) -> list[str]:
        """What another process removed leaves this one too: its read models holding a row
        changed since are dropped from memory and disk, with this engine's views of them, the
        schemas held for them and every cache of message words (a process clears its own at once
        when it removes one).

        Every channel this process holds anything for is looked at, not only its read models:
        a view, a schema index or a clustering is kept only while the read model it was made
        from is (:meth:`_released` drops them with it), so one held for a channel whose read
        model this process does not hold cannot be checked against the database, and goes.

        A reading in flight during the check may hold a timeline the check drops, and would
        keep its views and indexes after the check dropped them: every timeline the read model
        lets go of is marked retired first, and the views and the schema service never keep a
        retired one (:class:`~awai_engine.visibility.TimelineViews`), so that reading ends with
        nothing of it kept. Run by the scheduler in every process; returns the channels dropped.
        """
        removals = self.store.removal_mark()
        channels = self.store.drop_outdated_timelines()  # their views and schemas go with them
        held = [*self.views.channels(), *(self.schemas.held_channels() if self.schemas else ())]
        channels += [
            channel
            for channel in dict.fromkeys(held)
            if channel not in channels and not self.store.holds_timeline(channel)
        ]
        for channel in channels:
            self.views.forget(channel)
            if self.schemas is not None:  # its clusterings and indexes hold thoughts' texts
                self.schemas.purge_deleted(channel)
        if channels or removals != self._removals_seen:
            forget_cached_texts()  # a text embedded or indexed here, in a channel not held too
        self._removals_seen = removals
        return channels

    def _released(self, channel: str) -> None:
        """The channel's read model was let go of: so is all this engine made from it."""
        self.views.forget(channel)  # before the schemas: it retires the views they index
        if self.schemas is not None:
            self.schemas.forget_held(channel)

    # -- reading -------------------------------------------------------------------------------

    def is_stored(self, channel: str, message_id: str, scopes: Scopes) -> bool:
        """Whether the message is stored where an asker with ``scopes`` may read it, so an
        adapter knows to fetch it from the platform first. Asked within the asker's view: a
        message stored in a place they cannot see must look like any unknown one. A forgotten
        message is not stored, and storing it again is refused."""
        return message_id in self.view(channel, scopes).timeline.position_of

    def await_write(self, channel: str, message_id: str, scopes: Scopes) -> bool:
        """Wait for a write of the message that is under way, so that a reading asked the moment
        it was posted finds it; ``False`` when none was, or when the asker may not see the
        message (to them it must look like any unknown one, without a wait).

        Why: readers see only synced rows, and another process (or thread) storing the message
        has its row in SQL before its vectors, so storing it again is rightly a no-op; without
        the wait, the person would be told the message does not exist. Raises
        :class:`StillStoringError` when the write is still under way after
        ``read_model.writer_wait_seconds``. It does not finish the write itself: the writer may
        still be running, and an edit or a delete landing meanwhile must not be overwritten.
        """
        scope = self.store.write_under_way(channel, message_id)
        if scope is None or not scopes.allows(scope):
            return False
        log.info("waiting for the writer of %s in %s", message_id, channel)
        patience = self.settings.read_model.writer_wait_seconds
        deadline = time.monotonic() + patience
        pause, longest = WRITER_POLL_SECONDS
        while (left := deadline - time.monotonic()) > 0:
            time.sleep(min(pause, left))
            pause = min(pause * 2, longest)
            if self.store.write_under_way(channel, message_id) is None:
                return True
        raise StillStoringError(
            f"Message {message_id!r} of {channel!r} is still being stored after {patience:g} s."
        )

    def scopes_of(self, channel: str) -> frozenset[str]:
        """The visibility scopes the channel's stored messages carry, for an adapter to check
        which of them an asker may read (empty for an unknown channel)."""
        return self.views.scopes_of(channel, self.store.timeline(channel))

    def thread_scopes(self, channel: str) -> dict[str, frozenset[str]]:
        """Each thread with stored messages in the channel, and the scopes its messages carry."""
        return self.store.thread_scopes(channel)

    def rescope_thread(self, channel: str, thread_root: str, scope: str) -> int:
        """Narrow (or correct) the audience of one thread's stored messages, when an adapter learns
        it after storing them; every view of the channel is rebuilt. Returns how many changed."""
        changed = self.store.rescope_thread(channel, thread_root, scope)
        if changed:
            self.views.forget(channel)
        return changed

    def view(self, channel: str, scopes: Scopes) -> View:
        """The channel as an asker with ``scopes`` may see it (see :mod:`awai_engine.visibility`)."""
        return self.views.view(channel, self.store.timeline(channel), scopes)

    def context(self, channel: str, message_id: str, scopes: Scopes) -> ReadingContext:
        """The reading context of one message for an asker who may read ``scopes``: a pure
        function of the messages up to it that they may see."""
        view = self.view(channel, scopes)
        timeline = view.timeline
        position = timeline.position_of.get(message_id)
        if position is None:
            raise UnknownMessageError(
                f"No message {message_id!r} is stored in channel {channel!r} for this asker."
            )
        message = timeline.messages[position]
        flow = build_flow(timeline, position, self.settings.flow)
        association, activation = self.settings.association, self.settings.activation
        associations = recall(timeline, position, flow, association, activation)
        replies = reply_scores(
            timeline,
            position,
            self.reply_model,
            [item.source.position for item in associations],
        )
        associations = with_reply_targets(
            timeline, position, flow, associations, replies, association, activation
        )
        schemas: tuple[RecalledSchema, ...] = ()
        if self.schemas is not None:
            schemas, associations = self.schemas.recall(channel, view, position, associations)
        return ReadingContext(
            channel=channel,
            message=message.ref,
            text=message.text,
            thoughts=message.thoughts,
            flow=flow,
            associations=associations,
            schemas=schemas,
            replies=shown_replies(replies, flow, associations),
            notes=cut_notes(message.thoughts, self.settings),
        )

    def read(self, channel: str, message_id: str, scopes: Scopes) -> Reading:
        """The reading of one message for an asker who may read ``scopes``: its context, and an
        interpretation when a model is set. A vector index found damaged is rebuilt from SQL
        first, and the reading's notes say so."""
        try:
            context = self.context(channel, message_id, scopes)
            rebuilt: tuple[ReadingNote, ...] = ()
        except DamagedVectorsError as error:
            thoughts = self._rebuild_vectors(channel, error)
            rebuilt = (ReadingNote(kind="vectors-rebuilt", count=thoughts),)
            context = self.context(channel, message_id, scopes)
        # A language-model failure must never take an adapter down: it costs the interpretation,
        # and a note says so.
        over_budget = False
        try:
            interpretation, usage, notes = self.backend.interpret(context)
        except ContextTooLargeError:
            interpretation, usage, notes, over_budget = None, None, (), True
        except Exception:  # offline_reason "failed" says so to the reader; the log says why
            log.exception("the %s backend failed to read %s", self.backend.name, message_id)
            interpretation, usage, notes = None, None, ()
        if interpretation is not None and context.schemas:
            context, unjudged = _with_stances(context, interpretation)
            if unjudged:
                notes = (*notes, ReadingNote(kind="stances-unjudged", count=unjudged))
        if not self.backend.offline and _fallback_thoughts(context):
            notes = (*notes, ReadingNote(kind="fallback-thoughts"))
        notes = (*rebuilt, *notes)
        headline, connections = connect(context, interpretation)
        return Reading(
            context=context,
            backend=self.backend.name,
            offline=interpretation is None,
            interpretation=interpretation,
            language=detect_language(context.text),
            usage=usage,
            notes=notes,
            offline_reason=_offline_reason(self.backend.offline, interpretation, over_budget),
            headline=headline,
            connections=connections,
        )


def _offline_reason(
    backend_offline: bool, interpretation: Interpretation | None, over_budget: bool
) -> OfflineReason | None:
    """Why a reading has no interpretation, for renderers to say in the reader's language: no
    model is configured, the context was too large to send, or the configured model gave no
    usable reading (its note says how)."""
    if interpretation is not None:
        return None
    if backend_offline:
        return "not-configured"
    return "over-budget" if over_budget else "failed"


def _not_the_messages(error: BaseException) -> bool:
    """Whether a failed write is the store's own state (a full disk, a damaged vector index),
    which no message of the batch is to blame for."""
    return isinstance(error, DamagedVectorsError) or _out_of_space(error) is not None


def _out_of_space(error: BaseException) -> OSError | None:
    """The disk-full ``OSError`` that caused ``error`` at any depth, if one did."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in (errno.ENOSPC, errno.EDQUOT):
            return current
        current = current.__cause__ or current.__context__
    return None


def _fallback_thoughts(context: ReadingContext) -> bool:
    """Whether any thought the reading shows was an offline fallback."""
    previous = context.flow.previous.thoughts if context.flow.previous else ()
    shown = (*context.thoughts, *previous, *(item.thought for item in context.associations))
    return any(thought.fallback for thought in shown)


def _with_stances(
    context: ReadingContext, interpretation: Interpretation
) -> tuple[ReadingContext, int]:
    """The recalled schemas with the stance the reading gave each (one judgement, not two), and
    how many it left unjudged."""
    bearings = {bearing.schema_id: bearing for bearing in interpretation.schema_bearings}
    schemas = tuple(
        schema.model_copy(update={"stance": bearing.stance, "stance_reason": bearing.explanation})
        if (bearing := bearings.get(schema.schema_id))
        else schema
        for schema in context.schemas
    )
    unjudged = sum(1 for schema in schemas if schema.stance == "undetermined")
    return context.model_copy(update={"schemas": schemas}), unjudged
