"""The schema service: recall for readings, re-clustering, digests, and forgetting a speaker.

One object per runtime. The engine calls :meth:`SchemaService.recall` while it reads a message;
the scheduler and the ``awai`` commands call the rest. It reaches storage only through the
protocols of :mod:`awai_engine.schemas.ports`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from itertools import islice

from awai_engine.errors import AwaiError
from awai_engine.ports import LanguageBackend
from awai_engine.schemas.basis import Basis, SpeakerRows
from awai_engine.schemas.build import central_rows
from awai_engine.schemas.chains import (
    ChainDone,
    ChainWork,
    Point,
    grouped,
    pool,
    processes,
    walk,
    walk_all,
)
from awai_engine.schemas.clustering import ChainMemo
from awai_engine.schemas.digest import (
    Digest,
    SpeakerDigest,
    SpeakerPanel,
    snapshot,
    speaker_digest,
    speaker_panel,
)
from awai_engine.schemas.fixed_points import fixed_point, is_fixed_point
from awai_engine.schemas.markdown import channel_title, render_markdown
from awai_engine.schemas.model import SchemaRun, SchemaState, message_of
from awai_engine.schemas.naming import basis_keyphrases
from awai_engine.schemas.picture import picture_size, render_png
from awai_engine.schemas.ports import MessageStore, PurgeReport, SchemaStore
from awai_engine.schemas.recall import mark_important, related, returning
from awai_engine.schemas.runs import Runs
from awai_engine.schemas.summaries import Summaries
from awai_engine.schemas.wording import channel_language
from awai_engine.settings import Settings
from awai_engine.timeline import Timeline
from awai_engine.values import Association, RecalledSchema, Value
from awai_engine.visibility import Scopes, TimelineViews, View

log = logging.getLogger(__name__)
EXAMPLES = 2  # central thoughts shown with a schema
LANGUAGE_SAMPLE = 200  # a speaker's latest thoughts that say which language the digest is in
STORE_RUNS = 500  # a re-clustering stores its chains' runs once this many wait (see _Made)
STORE_WAIT = 1.0  # ... or once the oldest has waited this many seconds
IN_FLIGHT = 2  # groups of chains handed to each re-clustering worker at once
Progress = Callable[[int, int], None]  # runs made so far, runs to make in all


class UnknownChannelError(AwaiError, LookupError):
    """No channel with that key is stored."""


class ReclusterWorkerError(AwaiError, RuntimeError):
    """A worker process re-clustering the channel's speakers died before its chain came back."""


class ReclusterReport(Value):
    """What one re-clustering of a channel did (or why it did nothing)."""

    channel: str
    speakers: int = 0
    runs_stored: int = 0
    new_versions: int = 0
    removed_versions: int = 0
    skipped: bool = False
    error: str | None = None


class ForgetReport(Value):
    """What forgetting a speaker removed from a channel."""

    channel: str
    speaker_id: str
    messages: int
    schema_runs: int
    schema_versions: int
    summaries: int
    digest_entries: int


class SchemaMember(Value):
    """One thought of a schema: the message it is in, its index there, and its text."""

    message_id: str
    thought_index: int
    text: str


class SchemaView(Value):
    """One schema as ``awai schemas`` shows it: its name (the summary), keyphrases, the two most
    central thoughts, and every member in channel order."""

    schema_id: str
    version: int
    name: str
    summary: str
    keyphrases: tuple[str, ...]
    size: int
    as_of: int
    as_of_message_id: str
    recent_message_ids: tuple[str, ...]
    examples: tuple[str, ...]
    members: tuple[SchemaMember, ...]


class SpeakerSchemas(Value):
    """A speaker's schemas at one point of the channel: ``thoughts`` they had said there, of
    which the run in force clustered the first ``clustered`` (a fixed point; all of them as of
    now); ``stored`` says whether a stored run holds them (else they were clustered on demand,
    as a reading at that point would)."""

    speaker_id: str
    speaker_name: str
    thoughts: int
    clustered: int
    stored: bool
    schemas: tuple[SchemaView, ...]


class _Tally:
    """Runs stored and versions made by a re-clustering's speakers, told to ``progress``, and
    the speakers whose runs are stored."""

    def __init__(self, total: int, progress: Progress | None) -> None:
        self.total, self.progress = total, progress
        self.stored = self.new_versions = 0
        self.speakers: set[str] = set()
        if progress is not None:
            progress(0, total)

    def add(self, new_versions: int) -> None:
        self.stored += 1
        self.new_versions += new_versions
        if self.progress is not None:
            self.progress(self.stored, self.total)


class _Made:
    """Chains made and not stored yet.

    Why: most speakers of a real channel say a few messages, so their chains are a few small
    runs each, and a transaction per chain (its session, the channel looked up, the versions
    looked up) kept the job's process busy while its workers waited: 8,455 speakers of one
    channel, 39,707 runs. They are stored together once :data:`STORE_RUNS` runs wait, or the
    oldest has waited :data:`STORE_WAIT` seconds (so progress keeps moving on long speakers).
    """

    def __init__(self) -> None:
        self._chains: list[tuple[str, ChainWork, ChainDone]] = []
        self._runs = 0
        self._since = 0.0

    def add(self, speaker: str, work: ChainWork, done: ChainDone) -> None:
        if not self._chains:
            self._since = time.monotonic()
        self._chains.append((speaker, work, done))
        self._runs += len(done.runs)

    def due(self) -> bool:
        return self._runs >= STORE_RUNS or (
            bool(self._chains) and time.monotonic() - self._since >= STORE_WAIT
        )

    def take(self) -> list[tuple[str, ChainWork, ChainDone]]:
        chains, self._chains, self._runs = self._chains, [], 0
        return chains


class SchemaService:
    def __init__(
        self,
        settings: Settings,
        messages: MessageStore,
        store: SchemaStore,
        backend: LanguageBackend,
        views: TimelineViews | None = None,
    ) -> None:
        self.settings = settings
        self.messages = messages
        self.store = store
        self.views = views or TimelineViews()
        self.runs = Runs(store, settings.schemas)
        self.summaries = Summaries(backend, store, settings.schemas)
        self._indexes: dict[tuple[str, frozenset[str] | None], SpeakerRows] = {}
        self._indexes_guard = threading.Lock()
        self._locks: dict[str, threading.RLock] = {}
        self._locks_guard = threading.Lock()
        # Each long speaker's neighbours from the job's last walk up their points, kept for its
        # next run (see _memo; a worker extends them and sends them back); dropped with the
        # channel's indexes.
        self._memos: dict[tuple[str, str], ChainMemo] = {}

    # -- reading -------------------------------------------------------------------------------

    def recall(
        self, channel: str, view: View, position: int, associations: tuple[Association, ...]
    ) -> tuple[tuple[RecalledSchema, ...], tuple[Association, ...]]:
        """The speaker's schemas related to message ``position`` of the asker's view, as of just
        before it. A restricted view clusters its own thoughts (see :meth:`_run`)."""
        if self.settings.schemas.max_recalled == 0:
            return (), associations
        try:
            return self._recall(channel, view, position, associations)
        finally:
            self._unless_retired(channel, view.timeline)

    def _recall(
        self, channel: str, view: View, position: int, associations: tuple[Association, ...]
    ) -> tuple[tuple[RecalledSchema, ...], tuple[Association, ...]]:
        timeline = view.timeline
        message = timeline.messages[position]
        index = self._index(channel, timeline, view.key)
        speaker = message.ref.speaker_id
        found = self._in_force(
            index, channel, speaker, index.count(speaker, message.first_row), view
        )
        if found is None:
            return (), associations
        basis, run = found
        cues = timeline.vectors[timeline.rows_of(position)]
        chosen = related(run.states, cues, associations, self.settings.schemas)
        states = self.summaries.fill(basis, [state for state, _ in chosen])
        rows_of = {key: row for row, key in enumerate(basis.keys)}
        recalled = tuple(
            RecalledSchema(
                schema_id=state.schema_id,
                version=state.version,
                summary=state.summary or "",
                size=state.size,
                similarity=similarity,
                as_of=timeline.position_of.get(state.as_of_message_id, state.as_of),
                members=tuple(dict.fromkeys(message_of(key) for key in state.members)),
                keyphrases=self.summaries.keyphrases(basis, state),
                returned_by=returning(basis, state, cues, message.thoughts, self.settings.schemas),
                # The speaker's own words, from before the message, so a reader (and the model)
                # sees what the preconception is made of, not only its one-line name.
                examples=tuple(
                    basis.texts[row] for row in central_rows(basis, state, rows_of)[:EXAMPLES]
                ),
            )
            for state, (_, similarity) in zip(states, chosen, strict=True)
        )
        important = self.settings.activation.important_threshold
        return recalled, mark_important(associations, states, important)

    def schemas(
        self, channel: str, speaker_id: str | None = None, before_message: str | None = None
    ) -> list[SpeakerSchemas]:
        """Each speaker's schemas now, or as a reading of ``before_message`` would see them (the
        run in force there: :mod:`awai_engine.schemas.runs`)."""
        timeline = self._timeline(channel)
        end_row = None
        if before_message is not None:
            position = timeline.position_of.get(before_message)
            if position is None:
                raise LookupError(f"No message {before_message!r} is stored in {channel!r}.")
            end_row = timeline.messages[position].first_row
        index = self._index(channel, timeline)
        found = []
        for speaker in index.speakers():
            if speaker_id is not None and speaker != speaker_id:
                continue
            count = index.count(speaker, end_row)
            if count == 0:
                continue
            if end_row is None:
                in_force = self.runs.latest(index, channel, speaker)
            else:
                in_force = self.runs.in_force(index, channel, speaker, count)
            if in_force is None:
                found.append(
                    SpeakerSchemas(
                        speaker_id=speaker,
                        speaker_name=index.name(speaker),
                        thoughts=count,
                        clustered=0,
                        stored=False,
                        schemas=(),
                    )
                )
                continue
            basis, run = in_force
            states = self.summaries.fill(basis, run.states)
            found.append(
                SpeakerSchemas(
                    speaker_id=speaker,
                    speaker_name=basis.speaker_name,
                    thoughts=count,
                    clustered=basis.count,
                    stored=run.run_id is not None,
                    schemas=tuple(_view(state, basis, timeline) for state in states),
                )
            )
        self._unless_retired(channel, timeline)
        return found

    def speakers(self, channel: str) -> dict[str, str]:
        """Speaker ids of the channel and their latest display names."""
        index = self._index(channel, self._timeline(channel))
        return {speaker: index.name(speaker) for speaker in index.speakers()}

    # -- re-clustering -------------------------------------------------------------------------

    def pending(self) -> list[str]:
        """Channels with changes since their last re-clustering."""
        return [
            channel
            for channel in self.messages.channels()
            if self.store.reclustered_revision(channel) != self.messages.timeline(channel).revision
        ]

    def recluster_all(
        self, only_pending: bool = True, progress: Callable[[str], Progress] | None = None
    ) -> list[ReclusterReport]:
        """Re-cluster every channel with changes (``only_pending``), else every channel, each
        re-checked even with nothing new (``awai recluster --force``); one failing channel is
        logged, not fatal. ``progress`` gives each channel's progress callback (see
        :meth:`recluster`)."""
        reports = []
        for channel in self.pending() if only_pending else self.messages.channels():
            try:
                reports.append(
                    self.recluster(
                        channel,
                        force=not only_pending,
                        progress=progress(channel) if progress else None,
                    )
                )
            except Exception as error:
                log.exception("re-clustering %s failed", channel)
                reports.append(
                    ReclusterReport(channel=channel, error=f"{type(error).__name__}: {error}")
                )
        return reports

    def recluster(
        self, channel: str, force: bool = False, progress: Progress | None = None
    ) -> ReclusterReport:
        """Store the run at every fixed point each speaker has reached and not stored yet, in
        order (each takes its ids from the one below), then their run as of now; new versions
        where clusters changed. ``progress`` hears of each run made, with the total to make:
        catching up over an imported channel clusters every speaker's history many times.

        First removes every version holding a thought of a message deleted since the last time.
        Runs of one channel never overlap (a lock per channel); channels run in parallel.
        """
        with self._lock(channel):
            timeline = self._timeline(channel)
            if not force and self.store.reclustered_revision(channel) == timeline.revision:
                return ReclusterReport(channel=channel, skipped=True)
            purged = self.store.forget_deleted(channel)
            if purged.versions or purged.summaries:
                self.runs.forget(channel)
            index = self._index(channel, timeline)
            speakers = index.speakers()
            # Who has any run stored, asked once: a first re-clustering of an imported channel
            # of thousands of speakers asked the store twice about each (8 s at 8,455).
            having = {speaker for speaker, _, _ in self.store.run_counts(channel)}
            plan = [
                (speaker, *self._unstored(index, channel, speaker, speaker in having))
                for speaker in speakers
            ]
            # The chains with the most work first (a point's distances grow with its square),
            # so no long speaker starts last and keeps one core busy while the others idle.
            plan = sorted(
                [(speaker, before, todo) for speaker, before, todo in plan if todo],
                key=lambda item: -sum(count * count for count in item[2]),
            )
            tally = _Tally(sum(len(todo) for _, _, todo in plan), progress)
            chains = (self._chain(index, channel, *item) for item in plan)
            workers = processes(self.settings.schemas.recluster_processes, len(plan))
            made = _Made()
            try:
                if workers == 1:
                    for speaker, work in chains:
                        made.add(speaker, work, walk(work))
                        if made.due():
                            self._store_chains(channel, made.take(), tally)
                else:
                    self._walk_in_workers(channel, chains, workers, made, tally)
                self._store_chains(channel, made.take(), tally)
            finally:  # a worker that died leaves the chains stored so far: theirs go too
                self._drop_superseded(index, channel, tally.speakers)
            stored, new_versions = tally.stored, tally.new_versions
            self.store.mark_reclustered(channel, timeline.revision)
            self._unless_retired(channel, timeline)
        log.info("re-clustered %s: %d runs, %d new versions", channel, stored, new_versions)
        return ReclusterReport(
            channel=channel,
            speakers=len(speakers),
            runs_stored=stored,
            new_versions=new_versions,
            removed_versions=purged.versions,
        )

    def _chain(
        self,
        index: SpeakerRows,
        channel: str,
        speaker: str,
        before: SchemaRun | None,
        todo: list[int],
    ) -> tuple[str, ChainWork]:
        """What a worker needs to make the speaker's runs at the points ``todo``: the thoughts
        at the last (every earlier point is a prefix of them) and the memo the job kept."""
        basis = index.head(channel, speaker, todo[-1])
        assert basis is not None
        # Without the channel's speakers: they name versions, which clustering never does, and
        # pickling all of them with every chain made handing out chains quadratic in speakers
        # (12 s of the job's process for 8,455 speakers of one channel).
        basis = replace(basis, speakers=())
        points = tuple(
            Point(count, index.digest(speaker, count), index.name_at(speaker, count))
            for count in todo
        )
        memo = self._memo(channel, speaker)
        return speaker, ChainWork(basis, points, before, memo, self.settings.schemas)

    def _walk_in_workers(
        self,
        channel: str,
        chains: Iterator[tuple[str, ChainWork]],
        workers: int,
        made: _Made,
        tally: _Tally,
    ) -> None:
        """Walk the chains in ``workers`` processes, a group at a time (:func:`.chains.grouped`),
        and store their runs as they come back (a few groups a transaction: see :class:`_Made`).

        :data:`IN_FLIGHT` groups per worker are handed out, one more as one comes back: a
        worker that finishes starts its next group at once instead of waiting for the job to
        store and send one, and the job holds no more than those groups' thoughts. A worker
        that dies (killed, out of memory) breaks the pool: every group not made yet fails with
        it, nothing waits for it, and the channel stays pending, so the next run makes what is
        missing (the chains made so far are stored, whole)."""
        blas = self.settings.recall_index.blas_threads
        groups = grouped(chains)
        with pool(workers, blas) as executor:
            running: dict[Future[list[ChainDone]], list[tuple[str, ChainWork]]] = {}
            try:
                # A pool broken by a dead worker fails both a result and the next hand-out.
                for _ in range(IN_FLIGHT * workers):
                    _hand_out(executor, groups, running)
                while running:
                    finished, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in finished:
                        group = running.pop(future)
                        for (speaker, work), done in zip(group, future.result(), strict=True):
                            made.add(speaker, work, done)
                        _hand_out(executor, groups, running)
                    if made.due():
                        self._store_chains(channel, made.take(), tally)
            except BrokenProcessPool as error:
                _stop_workers(executor)
                self._store_chains(channel, made.take(), tally)
                raise ReclusterWorkerError(
                    f"A re-clustering worker process of {channel!r} died (killed, or out of"
                    " memory); the runs stored so far are kept and the next re-clustering"
                    " makes the rest."
                ) from error
            finally:
                executor.shutdown(wait=True, cancel_futures=True)

    def _store_chains(
        self,
        channel: str,
        made: list[tuple[str, ChainWork, ChainDone]],
        tally: _Tally,
    ) -> None:
        """Store the runs of some speakers' chains (one transaction), count each speaker's new
        versions, and keep their memos for the job's next run (the runs they supersede go once
        every chain is stored: :meth:`_drop_superseded`)."""
        if not made:
            return
        # Stored unsummarised: a version is worded when first shown (.summaries).
        saved = iter(self.store.save_runs([run for _, _, done in made for run in done.runs]))
        for speaker, work, done in made:
            before = work.before
            seen = {(s.schema_id, s.version) for s in before.states} if before else set()
            for run in islice(saved, len(done.runs)):
                new = {(s.schema_id, s.version) for s in run.states} - seen
                seen |= new
                tally.add(len(new))
            tally.speakers.add(speaker)
            if done.memo is not None:
                with self._indexes_guard:
                    self._memos[(channel, speaker)] = done.memo

    def _memo(self, channel: str, speaker: str) -> ChainMemo:
        """The speaker's memo from the job's last run, else a new one.

        Between two runs of the job a long speaker says a few more thoughts: their thoughts now
        extend those of the last run, so the knn graph's neighbours are extended (the new rows
        searched, the old ones merged with them) instead of searched afresh: the n² distances
        of a speaker of 20,000 thoughts every time they speak. Checked to be of a prefix before
        use, as within one walk, so a changed history is searched afresh; the labels are the
        same either way."""
        with self._indexes_guard:
            return self._memos.pop((channel, speaker), None) or ChainMemo()

    # -- digest --------------------------------------------------------------------------------

    def digest(
        self,
        channel: str,
        scopes: Scopes,
        record: bool = True,
        deliver: Callable[[Digest], None] | None = None,
        title: str | None = None,
    ) -> Digest:
        """The channel's digest as an audience that may read ``scopes`` may see it, after
        re-clustering what is new; ``record`` keeps it as the reference the next digest reports
        changes against. If re-clustering fails (say the language model is down), the digest
        still comes, from schemas clustered for it now. ``deliver`` (writing its files, say)
        runs before it is recorded: if it raises, nothing is recorded, so the next digest does
        not report its changes since one nobody received. ``title``: the channel's name as
        people know it (``#launch``), for the picture and the Markdown; else from its key.

        A digest for a restricted view (some messages of the channel are outside ``scopes``) is
        clustered from the visible thoughts alone, reports no changes and is never recorded: the
        record of the channel's digests is made from all of it."""
        self._timeline(channel)
        try:
            self.recluster(channel)
        except Exception:
            log.exception("re-clustering %s before its digest failed", channel)
        settings = self.settings.digest
        view = self.views.view(channel, self._timeline(channel), scopes)
        timeline = view.timeline
        index = self._index(channel, timeline, view.key)
        speakers = sorted(index.speakers(), key=lambda s: (-index.count(s), index.name(s), s))
        shown = speakers[: settings.max_speakers]
        previous = None if view.restricted else self.store.last_digest(channel)
        record = record and not view.restricted
        created_at = time.time()
        sections: list[SpeakerDigest] = []
        panels: list[SpeakerPanel] = []
        shown_states = []
        said: list[str] = []  # recent words of each shown speaker: the channel's language
        number = 1
        for speaker in shown:
            basis = index.basis(channel, speaker)
            if basis is None:
                continue
            states = self.summaries.fill(basis, self._whole(index, channel, speaker, view).states)
            section = speaker_digest(
                basis, states, number, previous, timeline.position_of, settings.examples_per_schema
            )
            section = self._with_dissolved_summaries(channel, basis, section)
            number += len(section.schemas)
            sections.append(section)
            panel = speaker_panel(section, basis, settings.picture_rows, first=previous is None)
            if panel is not None:
                panels.append(panel)
            shown_states.append((speaker, states))
            said.extend(basis.texts[-LANGUAGE_SAMPLE:])
        previous_at = previous.created_at if previous else None
        other = len(speakers) - len(shown)
        language = channel_language(said)
        name = title or channel_title(channel)
        digest = Digest(
            channel=channel,
            created_at=created_at,
            previous_at=previous_at,
            speakers=tuple(sections),
            other_speakers=other,
            language=language,
            markdown=render_markdown(name, created_at, previous_at, sections, other, language),
            png=render_png(panels, name, settings, previous is None, language),
            png_size=picture_size(panels, settings),
        )
        try:
            if deliver is not None:
                deliver(digest)
            if record:
                self.store.save_digest(channel, snapshot(created_at, shown_states))
        finally:
            self._unless_retired(channel, timeline)
        return digest

    def _with_dissolved_summaries(
        self, channel: str, basis: Basis, section: SpeakerDigest
    ) -> SpeakerDigest:
        """Schemas the last digest showed that no longer form, with the words it showed them by
        (the memo of their member set, the speaker's ``basis`` giving the members' texts)."""
        if not section.dissolved:
            return section
        dissolved = []
        for item in section.dissolved:
            stored = self.store.version(channel, item.schema_id, item.version)
            summary = self.summaries.known(basis, stored) if stored else None
            dissolved.append(item.model_copy(update={"summary": summary}))
        return section.model_copy(update={"dissolved": tuple(dissolved)})

    # -- forgetting ----------------------------------------------------------------------------

    def purge_deleted(self, channel: str) -> None:
        """Drop every schema version and summary made from a message deleted since the last time,
        at once rather than at the next re-clustering: a deleted message vanishes everywhere,
        the clusterings and indexes kept in memory (which hold its thoughts' texts) included."""
        with self._lock(channel):
            self.store.forget_deleted(channel)
            self.runs.forget(channel)
            self._forget_indexes(channel)

    def forget_held(self, channel: str) -> None:
        """Drop what memory holds for the channel (its indexes, which hold its timelines, and
        the clusterings made from them, which hold thoughts' texts), when the read model they
        were made from goes: nothing outlives it. The next reading makes them again."""
        self._forget_indexes(channel)
        self.runs.forget(channel)

    def held_channels(self) -> list[str]:
        """The channels an index, a kept memo or a clustering is held in memory for."""
        with self._indexes_guard:
            indexed = [channel for channel, _ in [*self._indexes, *self._memos]]
        return list(dict.fromkeys([*indexed, *self.runs.channels()]))

    def forget_speaker(self, channel: str, speaker_id: str) -> ForgetReport:
        """Remove the speaker's messages, thoughts and vectors, then every schema version, summary
        and digest entry made from them, re-cluster the channel, and scrub the files (privacy:
        users ask for it).

        Resumable: the erasure is recorded before anything is removed and cleared only at the
        end, so a crash anywhere is finished by :meth:`resume_erasures` (at the next start, or
        ``awai doctor --repair``), and forgetting the same speaker again completes it too.
        """
        self._timeline(channel)
        self.messages.begin_erasure(channel, speaker_id)
        with self._lock(channel):
            removed = self.messages.delete_speaker(channel, speaker_id)
            purged = self.store.forget_speaker(channel, speaker_id)
            purged = purged + self.store.forget_deleted(channel)
            self.runs.forget(channel)
            self._forget_indexes(channel)
            self.views.forget(channel)
            self.recluster(channel, force=True)
        self.messages.finish_erasures([channel])
        return _forget_report(channel, speaker_id, len(removed), purged)

    def resume_erasures(self) -> list[ForgetReport]:
        """Finish every forget and delete that was interrupted; one report per resumed forget."""
        channels = set(self.messages.channels())
        reports = [
            self.forget_speaker(item.channel, item.speaker_id)
            for item in self.messages.pending_erasures()
            if item.speaker_id is not None and item.channel in channels
        ]
        self.messages.finish_erasures()
        return reports

    # -- helpers -------------------------------------------------------------------------------

    def _timeline(self, channel: str) -> Timeline:
        if channel not in self.messages.channels():
            raise UnknownChannelError(f"No channel {channel!r} is stored.")
        return self.messages.timeline(channel)

    def _in_force(
        self, index: SpeakerRows, channel: str, speaker_id: str, count: int, view: View
    ) -> tuple[Basis, SchemaRun] | None:
        """The run in force after ``count`` of the speaker's thoughts: the chain's for the whole
        channel; for a restricted view, the chain walked again on its own thoughts
        (:meth:`Runs.walked`), since the stored runs (and so the ids they hand down) were made
        from messages the asker may not see."""
        if not view.restricted:
            return self.runs.in_force(index, channel, speaker_id, count, reading=True)
        point = fixed_point(count, self.settings.schemas.rules.fixed_point_bits)
        basis = index.head(channel, speaker_id, point) if point >= self.runs.first_point else None
        return None if basis is None else (basis, self.runs.walked(index, basis))

    def _whole(self, index: SpeakerRows, channel: str, speaker_id: str, view: View) -> SchemaRun:
        """The speaker's run as of now (for a restricted view: from its thoughts alone, as above)."""
        basis = index.basis(channel, speaker_id)
        assert basis is not None
        if view.restricted:
            return self.runs.walked(index, basis)
        latest = self.runs.latest(index, channel, speaker_id)
        return latest[1] if latest else self.runs.clustered(basis)

    def _unstored(
        self, index: SpeakerRows, channel: str, speaker_id: str, stored_any: bool = True
    ) -> tuple[SchemaRun | None, list[int]]:
        """The highest stored run of the speaker's chain, and the counts of thoughts left to
        store runs at: the fixed points above it they have reached, then their whole history
        unless it is one of them. ``stored_any`` ``False``: the store holds no run of the
        speaker, so it is not asked."""
        count = index.count(speaker_id)
        point = fixed_point(count, self.settings.schemas.rules.fixed_point_bits)
        if point < self.runs.first_point:
            return None, []
        before, todo = self.runs.unmade(
            index, channel, speaker_id, point, in_memory=False, stored_any=stored_any
        )
        if point != count and (
            not stored_any or self.runs.stored_at(index, channel, speaker_id, count) is None
        ):
            todo.append(count)
        return before, todo

    def _drop_superseded(self, index: SpeakerRows, channel: str, speakers: set[str]) -> None:
        """Drop the stored runs of ``speakers`` (those whose runs were just stored) as of an
        earlier now: no reading uses a run off the fixed points, and the one of their whole
        history now replaces them. Once for the channel, not per speaker: a real 100k channel
        has thousands of speakers, and a look at each one's runs was a tenth of its first
        re-clustering. As before, a newer "as of now" another process stored meanwhile goes
        too: it is derived, and the reading that needs it makes it again."""
        if not speakers:
            return
        bits = self.settings.schemas.rules.fixed_point_bits
        self.store.drop_runs(
            channel,
            [
                run_id
                for speaker, run_id, count in self.store.run_counts(channel)
                if speaker in speakers
                and count != index.count(speaker)
                and not is_fixed_point(count, bits)
            ],
        )

    def _index(
        self, channel: str, timeline: Timeline, view: frozenset[str] | None = None
    ) -> SpeakerRows:
        """The speakers' rows of ``timeline``, kept for the next reading unless the timeline is
        retired (its read model, or its view, let go of it: see
        :class:`~awai_engine.visibility.TimelineViews`, which keeps views the same way). The
        flag is checked under the guard :meth:`_forget_indexes` takes, and set before that runs,
        so a reading in flight when the timeline went cannot leave it here."""
        with self._indexes_guard:
            index = self._indexes.get((channel, view))
        if index is not None and index.timeline is timeline:
            index.catch_up()
            return index
        index = SpeakerRows(timeline)  # outside the guard: a pass over the channel
        with self._indexes_guard:
            if not timeline.retired:
                self._indexes[(channel, view)] = index
        return index

    def _forget_indexes(self, channel: str) -> None:
        """Drop the channel's indexes and kept memos (which hold its thoughts' texts)."""
        with self._indexes_guard:
            for key in [key for key in self._indexes if key[0] == channel]:
                del self._indexes[key]
            for memo in [memo for memo in self._memos if memo[0] == channel]:
                del self._memos[memo]

    def _unless_retired(self, channel: str, timeline: Timeline) -> None:
        """After a reading (or a run) that may have clustered on ``timeline`` and kept the
        runs: if the timeline was retired meanwhile, drop them. Its retirement set the flag
        before it had the channel's clusterings dropped, so either that drop came after these
        were kept, or this sees the flag."""
        if timeline.retired:
            self.forget_held(channel)

    def _lock(self, channel: str) -> threading.RLock:
        with self._locks_guard:
            return self._locks.setdefault(channel, threading.RLock())


def _stop_workers(executor: ProcessPoolExecutor) -> None:
    """Kill what is left of a broken pool's workers. CPython 3.11's pool terminates the
    workers it holds when it breaks, but a worker it was still starting then (a pool starts
    them as work is handed out) is added after that, never stopped, and waits for work
    forever while the pool's shutdown waits for it: a worker killed as it started hung the
    job's test. Every worker is in the pool's table once the hand-outs have returned."""
    for process in list((executor._processes or {}).values()):  # no public handle on them
        process.kill()


def _hand_out(
    executor: ProcessPoolExecutor,
    groups: Iterator[list[tuple[str, ChainWork]]],
    running: dict[Future[list[ChainDone]], list[tuple[str, ChainWork]]],
) -> None:
    """Give the next group of speakers' chains, if any, to the pool.

    A pool starts a worker as it is handed work; one that breaks meanwhile (a worker killed)
    closes the pipes the new worker was being started with, and the hand-out fails with
    ``OSError`` instead of ``BrokenProcessPool``: it is the same failure, and said as one."""
    group = next(groups, None)
    if group is None:
        return
    try:
        future = executor.submit(walk_all, [work for _, work in group])
    except OSError as error:
        raise BrokenProcessPool(f"a re-clustering worker could not be started: {error}") from error
    running[future] = group


def _view(state: SchemaState, basis: Basis, timeline: Timeline) -> SchemaView:
    recent = tuple(dict.fromkeys(message_of(key) for key in reversed(state.members)))
    rows_of = {key: row for row, key in enumerate(basis.keys)}
    central = central_rows(basis, state, rows_of)
    summary = state.summary or ""
    return SchemaView(
        schema_id=state.schema_id,
        version=state.version,
        name=summary,
        summary=summary,
        keyphrases=basis_keyphrases(basis, state.members, state.version),
        size=state.size,
        as_of=timeline.position_of.get(state.as_of_message_id, state.as_of),
        as_of_message_id=state.as_of_message_id,
        recent_message_ids=recent[:3],
        examples=tuple(basis.texts[row] for row in central[:EXAMPLES]),
        members=tuple(
            SchemaMember(
                message_id=message_of(key),
                thought_index=int(key.rsplit("#", 1)[1]),
                text=basis.texts[rows_of[key]],
            )
            for key in state.members
        ),
    )


def _forget_report(
    channel: str, speaker_id: str, messages: int, purged: PurgeReport
) -> ForgetReport:
    return ForgetReport(
        channel=channel,
        speaker_id=speaker_id,
        messages=messages,
        schema_runs=purged.runs,
        schema_versions=purged.versions,
        summaries=purged.summaries,
        digest_entries=purged.digest_entries,
    )
