"""Every config shipped in job_configs/ dry-runs as written without a warning: they are what users
copy, and a warning on an example teaches users to ignore warnings."""

from __future__ import annotations

import pytest

from cloudtrain.cli import main
from tests.conftest import REPO

SHIPPED = sorted((REPO / "job_configs").glob("*.yaml"))


def test_the_shipped_configs_are_all_found() -> None:
    assert {"gpu4.yaml", "sagemaker-gpu4.yaml", "slurm.yaml", "sweep.yaml"} <= {p.name for p in SHIPPED}


@pytest.mark.parametrize("config", SHIPPED, ids=[p.name for p in SHIPPED])
def test_a_shipped_config_dry_runs_without_a_warning(config, capsys, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("CLOUDTRAIN_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["submit", "--config", str(config), "--dry-run"]) == 0
    captured = capsys.readouterr()
    warnings = [line for line in (captured.err + captured.out).splitlines() if line.lower().startswith("warning")]
    assert warnings == []
    assert "Request (nothing was uploaded or created)" in captured.out or "sbatch" in captured.out
