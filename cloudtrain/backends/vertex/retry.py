"""Retries with capped exponential backoff for idempotent Google API calls.

Only UNAVAILABLE, DEADLINE_EXCEEDED and RESOURCE_EXHAUSTED are retried, and RESOURCE_EXHAUSTED only
when it is a request-rate limit: one that says capacity or quota (cloudtrain.catalog.capacity) goes
straight back to the caller, which moves to the next fallback. Anything else is the caller's to explain. ``sleep`` is injected so tests run in no time.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Callable, TypeVar

T = TypeVar("T")


def transient_errors() -> tuple[type[BaseException], ...]:
    from google.api_core import exceptions

    return (exceptions.ServiceUnavailable, exceptions.DeadlineExceeded, exceptions.ResourceExhausted)


@dataclass
class Backoff:
    attempts: int = 6  # calls in all, the first included
    initial: float = 1.0
    factor: float = 2.0
    cap: float = 30.0
    jitter: float = 0.2  # ± fraction of each delay
    sleep: Callable[[float], None] = time.sleep

    def delays(self):
        delay = self.initial
        for _ in range(self.attempts - 1):
            yield delay * (1 + random.uniform(-self.jitter, self.jitter))
            delay = min(delay * self.factor, self.cap)

    def call(self, fn: Callable[[], T], *, before_retry: Callable[[BaseException], T | None] | None = None) -> T:
        """``fn()``, retried on transient errors. ``before_retry(exc)`` may return a result instead."""
        transient = transient_errors()
        delays = self.delays()
        while True:
            try:
                return fn()
            except transient as exc:
                if _no_capacity(exc):
                    raise  # not a rate limit: retrying here cannot help; a fallback candidate may
                delay = next(delays, None)
                if delay is None:
                    raise
                self.sleep(delay)
                if before_retry is not None:
                    found = before_retry(exc)
                    if found is not None:
                        return found


def _no_capacity(exc: BaseException) -> bool:
    from google.api_core import exceptions

    from cloudtrain.catalog.capacity import moves_on

    if not isinstance(exc, exceptions.ResourceExhausted):
        return False
    return moves_on("vertex", str(exc), [getattr(exc, "reason", None) or ""])
