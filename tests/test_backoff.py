"""The one backoff, in the two settings its callers rely on: the log followers' outage waits and the
retries of idempotent Google API calls (tests/backends/vertex/test_vertex_unreachable.py drives
the latter against the fake)."""

from __future__ import annotations

import random

import pytest

from cloudtrain.backends.follow import Outage
from cloudtrain.backoff import Backoff


def test_follower_waits_double_up_to_the_cap_between_half_and_all_of_each_step() -> None:
    backoff = Backoff(1.0, 30.0, rng=random.Random(7))
    for failures, top in [(1, 1), (2, 2), (3, 4), (4, 8), (5, 16), (6, 30), (20, 30)]:
        waits = [backoff.delay(failures) for _ in range(200)]
        assert top * 0.5 <= min(waits) and max(waits) <= top
        assert max(waits) - min(waits) > top * 0.3  # jittered, not a fixed wait


def test_an_outage_uses_it_and_resets_when_the_connection_is_back() -> None:
    outage = Outage("Cloud Logging", clock=lambda: 0.0, notify=lambda line: None, backoff=Backoff(2.0, 8.0))
    waits = [outage.failed(ConnectionError("refused")) for _ in range(4)]
    assert [w <= top for w, top in zip(waits, [2, 4, 8, 8], strict=True)] == [True] * 4
    assert [w >= top / 2 for w, top in zip(waits, [2, 4, 8, 8], strict=True)] == [True] * 4
    outage.ok()
    assert 1.0 <= outage.failed(ConnectionError("refused")) <= 2.0


def test_api_retries_wait_within_a_fifth_of_each_step_and_stop_after_the_attempts() -> None:
    slept: list[float] = []
    backoff = Backoff(
        spread=(0.8, 1.2), attempts=6, sleep=slept.append, retryable=lambda e: isinstance(e, TimeoutError)
    )
    calls = []

    def flaky() -> str:
        calls.append(1)
        raise TimeoutError("deadline exceeded")

    with pytest.raises(TimeoutError):
        backoff.call(flaky)
    assert len(calls) == 6 and len(slept) == 5
    assert all(0.8 * top <= s <= 1.2 * top for s, top in zip(slept, [1, 2, 4, 8, 16], strict=True))


def test_only_retryable_errors_are_retried_and_a_found_result_ends_the_retries() -> None:
    backoff = Backoff(sleep=lambda s: None, retryable=lambda e: isinstance(e, TimeoutError))
    with pytest.raises(ValueError):
        backoff.call(lambda: (_ for _ in ()).throw(ValueError("bad request")))
    assert backoff.call(lambda: (_ for _ in ()).throw(TimeoutError()), before_retry=lambda exc: "made") == "made"
