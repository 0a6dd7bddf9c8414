"""The Vertex lateness bench still runs, and cloudtrain's follower keeps its promises in it.

The busy-job checks of the Vertex log bench read the one quick bench run of the suite
(tests/bench/test_bench_smoke.py::test_vertex_follower_busy_job) instead of running it again."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.server


def test_lateness_bench_tiny(tmp_path):
    """Lines up to 10 minutes late at tiny scale: cloudtrain (live tail and polling alone) shows every
    line that arrived while it followed, once; the 60 s look-back and gcloud lose some; what arrives
    after cloudtrain's stop is counted apart and `logs` reads it afterwards."""
    from bench import vertex_late_bench as bench

    out = tmp_path / "late.json"
    assert bench.main(["--replicas", "3", "--minutes", "3", "--repeats", "1", "--speed", "60", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    runs = {r["follower"]: r for r in data["runs"]}
    assert set(runs) == set(bench.FOLLOWERS)
    for name in ("cloudtrain", "cloudtrain, polling alone"):
        ours = runs[name]
        assert ours["lost"] == ours["duplicates"] == 0, ours
        assert ours["shown"] + ours["after_stop"] == ours["lines"]
        assert ours["logs_after_shows"] == ours["lines"]
        assert ours["marked_late"] > 0  # minutes-late batches arrive after newer lines of their replica
    assert runs["cloudtrain"]["stopped_after_end_s"] >= 60  # --drain's default quiet minute
    assert runs["previous follower"]["lost"] > 0 and runs["gcloud ml-engine"]["lost"] > 0
    gcloud = runs["gcloud ml-engine"]
    assert gcloud["stopped_after_end_s"] >= 2 * 60 - 10  # two empty 60 s polls after its last line
    assert runs["gcloud ai custom-jobs"]["stopped_after_end_s"] > gcloud["stopped_after_end_s"]
    summary = {r["follower"]: r for r in data["summary"]}
    assert summary["gcloud ml-engine"]["verdicts"]["lost"] == "1 run(s): too few for a verdict"
