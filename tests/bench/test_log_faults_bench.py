"""The log-faults bench at tiny scale: both clouds' followers through the fault proxy lose and repeat nothing."""

from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.server]


def test_log_faults_bench_quick_outage(tmp_path):
    from bench import log_faults_bench as bench

    out = tmp_path / "faults.json"
    assert bench.main(["--quick", "--only", "outage-2s", "--json", str(out)]) == 0
    rows = {r["cloud"]: r for r in json.loads(out.read_text())["rows"]}
    assert set(rows) == {"sagemaker", "vertex"}
    for row in rows.values():
        assert row["written"] > 0 and row["lost"] == row["duplicates"] == 0 and row["errors"] == []
        assert len(row["recovery_s"]["runs"]) == 1  # lines flowed again after the one outage
