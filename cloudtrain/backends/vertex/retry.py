"""Retries with capped exponential backoff for idempotent Google API calls.

Only UNAVAILABLE, DEADLINE_EXCEEDED and a request-rate RESOURCE_EXHAUSTED are retried: one that says capacity or
quota (cloudtrain.catalog.capacity) goes straight back, so the caller moves to its next fallback."""

from __future__ import annotations

import random
from typing import Any

from cloudtrain.backoff import Backoff
from cloudtrain.catalog.capacity import moves_on


def transient_errors() -> tuple[type[BaseException], ...]:
    from google.api_core import exceptions

    return (exceptions.ServiceUnavailable, exceptions.DeadlineExceeded, exceptions.ResourceExhausted)


def api_backoff(**settings: Any) -> Backoff:
    """The retries of idempotent Google API calls: 6 attempts, 1 s doubling up to 30 s, ±20 % jitter,
    transient errors only (``settings`` override, e.g. ``sleep`` in tests)."""
    return Backoff(**{"spread": (0.8, 1.2), "rng": random.Random(), "retryable": retryable, **settings})


def retryable(exc: BaseException) -> bool:
    """A transient error worth retrying here; a capacity or quota refusal goes back to the caller."""
    return isinstance(exc, transient_errors()) and not _no_capacity(exc)


def _no_capacity(exc: BaseException) -> bool:
    from google.api_core import exceptions

    if not isinstance(exc, exceptions.ResourceExhausted):
        return False
    return moves_on("vertex", str(exc), [getattr(exc, "reason", None) or ""])
