"""Start callables at the same instant: threads released together by one barrier."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def at_once(*calls: Callable[[], Any], timeout: float = 300) -> list[Any]:
    """Run ``calls`` in threads released together by one barrier; their results, in order (errors re-raised)."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)
    errors: list[BaseException] = []

    def run(i: int, call: Callable[[], Any]) -> None:
        barrier.wait()
        try:
            results[i] = call()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a submit never returned"
    if errors:
        raise errors[0]
    return results
