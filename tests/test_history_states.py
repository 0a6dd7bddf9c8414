"""A job's end, once this machine recorded it, stays: a later, weaker reading never replaces it (issue 42).

A cluster without accounting forgets a job after MinJobAge; a watcher that reads it then sees FAILED or
UNKNOWN. History (what ``list`` shows) keeps the end it recorded first: CANCELLED stays CANCELLED."""

from __future__ import annotations

import pytest

from cloudtrain import history
from cloudtrain.history import JobRecord


def _submitted(job_id: str, backend: str) -> None:
    history.record(JobRecord(job_id=job_id, name=f"runs/{job_id}", backend=backend, region="cluster-a"))


@pytest.mark.parametrize(
    ("first", "later", "kept"),
    [
        ("CANCELLED", "FAILED", "CANCELLED"),
        ("TIMED_OUT", "UNKNOWN", "TIMED_OUT"),
        ("PREEMPTED", "SUCCEEDED", "PREEMPTED"),
        ("RUNNING", "CANCELLED", "CANCELLED"),  # not ended yet: the new reading is the news
        ("PENDING", "RUNNING", "RUNNING"),
    ],
)
def test_an_end_once_recorded_is_never_replaced(first, later, kept):
    _submitted("42", "slurm")
    history.note_state("42", "runs/42", first)
    history.note_state("42", "runs/42", later)
    entry = history.find("42")
    assert entry is not None and entry.state == kept
    assert [e.state for e in history.recent(5)] == [kept]


def test_the_end_keeps_its_numbers_when_a_weaker_reading_comes_later():
    _submitted("7", "slurm")
    history.note_state("7", "runs/7", "SUCCEEDED", ended="2026-11-29T03:00:00+00:00", metrics={"loss": 0.25})
    history.note_state("7", "runs/7", "FAILED")
    entry = history.find("7")
    assert entry is not None
    assert (entry.state, entry.ended, entry.metrics) == ("SUCCEEDED", "2026-11-29T03:00:00+00:00", {"loss": 0.25})


def test_ended_record_is_the_record_only_once_it_holds_the_end():
    assert history.ended_record("9") is None  # not in history
    _submitted("9", "kubernetes")
    history.note_state("9", "runs/9", "RUNNING")
    assert history.ended_record("9") is None
    history.note_state("9", "runs/9", "CANCELLED", ended="2026-11-29T03:00:00+00:00")
    entry = history.ended_record("9")
    assert entry is not None and (entry.state, entry.ended) == ("CANCELLED", "2026-11-29T03:00:00+00:00")
