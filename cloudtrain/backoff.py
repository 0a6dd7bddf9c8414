"""The one backoff: capped exponential delays with jitter (retry n waits ``initial·factor^(n-1)`` s, at most ``cap``),
and retrying a call with them. ``sleep`` and ``rng`` are injected, so tests run in no time and repeat exactly."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")


def _never(exc: BaseException) -> bool:
    return False


@dataclass
class Backoff:
    initial: float = 1.0
    cap: float = 30.0
    factor: float = 2.0
    spread: tuple[float, float] = (0.5, 1.0)  # the jitter: each delay times uniform(*spread)
    attempts: int = 6  # calls in all for call(), the first included
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = field(default_factory=random.Random)
    retryable: Callable[[BaseException], bool] = _never  # which errors call() retries

    def delay(self, failures: int) -> float:
        """The wait after ``failures`` failures in a row (1 for the first)."""
        top = min(self.cap, self.initial * self.factor ** max(failures - 1, 0))
        return top * self.rng.uniform(*self.spread)

    def delays(self) -> Iterator[float]:
        """The waits between ``attempts`` calls."""
        for failures in range(1, self.attempts):
            yield self.delay(failures)

    def call(self, fn: Callable[[], T], *, before_retry: Callable[[BaseException], T | None] | None = None) -> T:
        """``fn()``, retried while it raises a ``retryable`` error and attempts are left. ``before_retry(exc)``
        may return a result instead (e.g. the job a create that timed out did make)."""
        delays = self.delays()
        while True:
            try:
                return fn()
            except Exception as exc:
                if not self.retryable(exc):
                    raise
                delay = next(delays, None)
                if delay is None:
                    raise
                self.sleep(delay)
                if before_retry is not None:
                    found = before_retry(exc)
                    if found is not None:
                        return found
