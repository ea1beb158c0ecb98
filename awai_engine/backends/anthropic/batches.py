"""Many extraction requests through the Message Batches API: half the price, asynchronous.

Why: a backfill extracts thousands of messages, one request each (see
:mod:`awai_engine.extraction_window`); nobody waits for them, so they may take the Batches API's
time (usually minutes, at most 24 hours) at half the price of live calls, and the cached prefix
is still read from the cache.

Resumable across restarts: before a batch is created, nothing is sent; once it is, its id is
written to a small ledger file keyed by a digest of exactly the requests it holds. A process that
stops while the batch runs (a crash, a deploy) and later asks for the same requests (the backfill
resumes, or ``awai reextract`` runs) finds the batch in the ledger and waits for it, or reads its
results, instead of paying for a second one. Entries older than the API keeps results (29 days)
are dropped.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic

from awai_engine.backends.anthropic.breaker import CircuitBreaker
from awai_engine.backends.anthropic.client import (
    ErrorKind,
    LanguageModelError,
    ModelAnswer,
    answer_of,
)

log = logging.getLogger(__name__)

RESULTS_KEPT_SECONDS = 29 * 24 * 3600
LEDGER_NAME = "batches.json"


@dataclass(frozen=True)
class BatchOutcome:
    """Per custom id, the finished answer, or why there is none (errored, expired, canceled)."""

    answers: dict[str, ModelAnswer]
    failures: dict[str, str]


class BatchLedger:
    """Which batch holds which set of requests, in a JSON file replaced atomically."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / LEDGER_NAME
        self._lock = threading.Lock()

    def find(self, digest: str) -> str | None:
        with self._lock:
            entry = self._read().get(digest)
        return entry["batch_id"] if entry else None

    def record(self, digest: str, batch_id: str) -> None:
        with self._lock:
            entries = {
                key: entry
                for key, entry in self._read().items()
                if time.time() - entry["created"] < RESULTS_KEPT_SECONDS
            }
            entries[digest] = {"batch_id": batch_id, "created": time.time()}
            self._write(entries)

    def forget(self, digest: str) -> None:
        with self._lock:
            entries = self._read()
            if entries.pop(digest, None) is not None:
                self._write(entries)

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            return json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except ValueError:
            log.warning(
                "language model: the batch ledger %s is unreadable; starting anew", self.path
            )
            return {}

    def _write(self, entries: dict[str, dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=self.path.parent, prefix=".batches-")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(entries, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(name, self.path)


class BatchRunner:
    """Submits (or re-attaches to) one batch and waits for its results, logging progress."""

    def __init__(
        self,
        sdk: anthropic.Anthropic,
        ledger: BatchLedger,
        poll_seconds: float,
        max_wait_seconds: float,
    ) -> None:
        self.sdk = sdk
        self.ledger = ledger
        self.poll_seconds = poll_seconds
        self.max_wait_seconds = max_wait_seconds

    def run(self, requests: Mapping[str, dict[str, Any]], breaker: CircuitBreaker) -> BatchOutcome:
        """The outcome of every request; raises :class:`LanguageModelError` if the batch could
        not be created or read, or did not end within ``max_wait_seconds`` (it stays in the
        ledger, so a later run with the same requests picks it up). The API being unreachable
        counts on the process's circuit breaker as a live call's failure does."""
        blocked = breaker.blocked_for()
        if blocked is not None:
            raise LanguageModelError(
                f"batch not sent: the circuit breaker is open for {blocked:.0f} s more", "paused"
            )
        try:
            outcome = self._run(requests)
        except LanguageModelError as error:
            if error.kind != "busy":  # a batch still running is no sign of an outage
                breaker.failed()
            raise
        breaker.succeeded()
        return outcome

    def _run(self, requests: Mapping[str, dict[str, Any]]) -> BatchOutcome:
        digest = _digest(requests)
        batch_id = self.ledger.find(digest)
        try:
            if batch_id is None:
                batch = self.sdk.messages.batches.create(
                    requests=[
                        {"custom_id": custom_id, "params": params}  # type: ignore[typeddict-item]
                        for custom_id, params in requests.items()
                    ]
                )
                batch_id = batch.id
                self.ledger.record(digest, batch_id)
                log.info("language model: batch %s of %d requests created", batch_id, len(requests))
            else:
                log.info(
                    "language model: resuming batch %s of %d requests", batch_id, len(requests)
                )
            self._wait(batch_id, len(requests))
            outcome = self._results(batch_id, requests.keys())
        except anthropic.NotFoundError:
            self.ledger.forget(digest)  # archived or deleted: the next run submits anew
            raise LanguageModelError(f"batch {batch_id} is gone", "unreachable") from None
        except anthropic.APIStatusError as error:
            kind: ErrorKind = (
                "refused" if error.status_code in (400, 401, 403, 413) else "unreachable"
            )
            raise LanguageModelError(
                f"batch: HTTP {error.status_code} ({error.message})", kind
            ) from error
        except (anthropic.APIConnectionError, anthropic.APITimeoutError) as error:
            raise LanguageModelError(
                f"batch: could not connect ({error})", "unreachable"
            ) from error
        return outcome

    def _wait(self, batch_id: str, size: int) -> None:
        started = time.monotonic()
        while True:
            batch = self.sdk.messages.batches.retrieve(batch_id)
            if batch.processing_status == "ended":
                counts = batch.request_counts
                log.info(
                    "language model: batch %s ended: %d succeeded, %d errored, %d expired,"
                    " %d canceled",
                    batch_id,
                    counts.succeeded,
                    counts.errored,
                    counts.expired,
                    counts.canceled,
                )
                return
            waited = time.monotonic() - started
            log.info(
                "language model: batch %s: %d of %d requests still processing (%.0f s)",
                batch_id,
                batch.request_counts.processing,
                size,
                waited,
            )
            if waited + self.poll_seconds > self.max_wait_seconds:
                raise LanguageModelError(
                    f"batch {batch_id} did not end within AWAI_LLM__BATCH_MAX_WAIT_SECONDS"
                    f" ({self.max_wait_seconds:g}); it is resumed by the next run",
                    "busy",
                )
            time.sleep(self.poll_seconds)

    def _results(self, batch_id: str, wanted: Any) -> BatchOutcome:
        answers: dict[str, ModelAnswer] = {}
        failures: dict[str, str] = {}
        for item in self.sdk.messages.batches.results(batch_id):
            result = item.result
            if result.type == "succeeded":
                answers[item.custom_id] = answer_of(result.message)
            elif result.type == "errored":
                failures[item.custom_id] = f"errored: {result.error.error.message}"
            else:
                failures[item.custom_id] = result.type
        for custom_id in wanted:
            if custom_id not in answers and custom_id not in failures:
                failures[custom_id] = "missing from the results"
        return BatchOutcome(answers=answers, failures=failures)


def _digest(requests: Mapping[str, dict[str, Any]]) -> str:
    """The same requests (ids and parameters, whatever their order) give the same digest."""
    canonical = json.dumps(sorted(requests.items()), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()
