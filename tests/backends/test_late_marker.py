"""The followers' ``late`` mark (cloudtrain/backends/follow.py ``LateMarker``), shared by the Vertex
and SageMaker followers: a line is late only when a *newer* line of its own replica was already
shown. CloudWatch stamps in milliseconds, so one instance writes many lines with the same timestamp:
those are in order, never late."""

from __future__ import annotations

import datetime as dt

from cloudtrain.backends.base import LogLine
from cloudtrain.backends.follow import LateMarker

T = dt.datetime(2025, 1, 2, 3, 4, 5, 123000, tzinfo=dt.timezone.utc)


def line(seconds: float, message: str, replica: str = "algo-1") -> LogLine:
    return LogLine(T + dt.timedelta(seconds=seconds), replica, message)


def test_lines_with_the_same_timestamp_are_not_late_in_one_batch_or_across_batches():
    marker = LateMarker()
    first = marker.batch([line(0, "a"), line(0, "b"), line(0, "c")])
    then = marker.batch([line(0, "d"), line(1, "e")])
    assert [(line.message, line.late) for line in first + then] == [
        ("a", False),
        ("b", False),
        ("c", False),
        ("d", False),
        ("e", False),
    ]
    assert marker.late == 0


def test_an_older_line_of_the_same_replica_is_late_and_another_replicas_is_not():
    marker = LateMarker()
    marker.batch([line(5, "newest of algo-1")])
    shown = marker.batch([line(4, "older, algo-1"), line(4, "older, algo-2", replica="algo-2")])
    assert [(line.message, line.late) for line in shown] == [("older, algo-1", True), ("older, algo-2", False)]
    assert marker.late == 1
