"""The log-follow bench still runs, and cloudtrain's follower keeps its promises in it."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.server


def test_bench_quick(tmp_path):
    from bench import vertex_logs_bench as bench

    out = tmp_path / "bench.json"
    assert bench.main(["--quick", "--json", str(out)]) == 0
    results = {(r["scenario"], r["follower"]): r for r in json.loads(out.read_text())["results"]}
    busy = results["busy", "cloudtrain"]
    assert busy["lost"] == busy["duplicates"] == 0
    assert busy["delay_median_s"] < results["busy", "gcloud-60s"]["delay_median_s"] / 5
    assert busy["peak_requests_in_60s"] <= 55
