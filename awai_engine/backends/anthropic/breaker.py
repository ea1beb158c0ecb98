"""A process-wide circuit breaker in front of the Messages API.

Why: when the API is down, every caller would otherwise wait out its own timeouts and retries, one
after another; a person who asked for a reading would wait minutes for the offline one. After
``failures`` calls in a row got no answer, the breaker opens: for ``cooldown`` seconds no call is
made and callers fall back at once. Then one trial call is let through (half-open); its success
closes the breaker, its failure opens it again. One breaker per endpoint and key, shared by every
backend of the process (a bot's readings, its ingest and its scheduled jobs).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable


class CircuitBreaker:
    def __init__(
        self, failures: int, cooldown: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.failures = failures
        self.cooldown = cooldown
        self._clock = clock
        self._lock = threading.Lock()
        self._failed = 0
        self._open_until: float | None = None
        self._trial = False

    def blocked_for(self) -> float | None:
        """Seconds the breaker stays open (``None``: the call may go; it then counts as the
        half-open trial if the cool-down just ended)."""
        with self._lock:
            if self._open_until is None:
                return None
            remaining = self._open_until - self._clock()
            if remaining > 0 or self._trial:
                return max(remaining, 0.0) or self.cooldown
            self._trial = True
            return None

    def succeeded(self) -> None:
        with self._lock:
            self._failed, self._open_until, self._trial = 0, None, False

    def failed(self) -> None:
        with self._lock:
            self._failed += 1
            if self._trial or self._failed >= self.failures:
                self._open_until = self._clock() + self.cooldown
                self._trial = False


_breakers: dict[tuple[str, str], CircuitBreaker] = {}
_breakers_lock = threading.Lock()


def shared_breaker(endpoint: str, api_key: str, failures: int, cooldown: float) -> CircuitBreaker:
    """The process's breaker for this endpoint and key (made on first use)."""
    key = (endpoint, hashlib.sha256(api_key.encode()).hexdigest())
    with _breakers_lock:
        breaker = _breakers.get(key)
        if breaker is None or (breaker.failures, breaker.cooldown) != (failures, cooldown):
            breaker = _breakers[key] = CircuitBreaker(failures, cooldown)
        return breaker
