"""The composition root: settings → storage, embeddings, language backend → one engine.

Every adapter (terminal, Slack, Discord) starts here, so they all share one way of being built.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from awai_engine.backends.offline import OfflineBackend
from awai_engine.calibration import calibrated
from awai_engine.embedding import Embedder
from awai_engine.engine import Engine
from awai_engine.ports import LanguageBackend
from awai_engine.posts import PostRecord
from awai_engine.reconcile import reconcile
from awai_engine.schemas.service import ForgetReport, SchemaService
from awai_engine.settings import Settings
from bots.settings import BotSettings, composed
from storage.store import AwaiStore


@dataclass
class Runtime:
    settings: BotSettings
    store: AwaiStore
    engine: Engine
    schemas: SchemaService = field(init=False)
    posts: PostRecord = field(init=False)
    """Every poster records here which stored messages its post quotes (awai_engine.posts)."""
    resumed: list[ForgetReport] = field(default_factory=list)
    """Forgets a crash had interrupted, finished when this runtime was opened."""

    def __post_init__(self) -> None:
        # Every runtime, however assembled, recalls and re-clusters schemas through one service.
        self.schemas = SchemaService(
            self.settings, self.store, self.store.schemas, self.engine.backend, self.engine.views
        )
        self.engine.schemas = self.schemas
        self.posts = PostRecord(self.store.posts)

    def close(self) -> None:
        self.store.close()


def language_backend(settings: Settings) -> LanguageBackend:
    """The Anthropic backend when an API key is set (AWAI_LLM__API_KEY), else the offline one."""
    if settings.llm.api_key is not None:
        # Imported here: the SDK takes seconds to import, which offline runs need not pay.
        from awai_engine.backends.anthropic import AnthropicBackend

        return AnthropicBackend(settings.llm, settings.limits)
    return OfflineBackend(settings.limits)


def open_runtime(settings: Settings, repair: bool = True, read_only: bool = False) -> Runtime:
    """Build the runtime; first bring SQL and Chroma back into agreement after any crash.

    The start-up check costs a few counts per channel when nothing is wrong
    (:mod:`awai_engine.reconcile`); ``repair=False`` is for ``awai doctor``, which reports first.
    ``read_only`` (no repair) is for commands that only look, so a read-only data folder works.
    """
    repair = repair and not read_only
    store = AwaiStore.open(settings, read_only)
    embedder = Embedder(settings.embedding)
    settings = calibrated(composed(settings), embedder)  # thresholds on the model's similarity scale
    if repair:
        reconcile(store, embedder)
    engine = Engine(settings, store, embedder, language_backend(settings))
    runtime = Runtime(settings=settings, store=store, engine=engine)
    if repair:  # a forget or delete a crash interrupted is finished before anything else runs
        runtime.resumed = runtime.schemas.resume_erasures()
    return runtime
