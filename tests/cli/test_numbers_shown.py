"""Numbers where the CLI shows them: a sweep's cost cap per trial and in total, its parameters and
values to 4 significant digits in text, full precision in ``-o json``."""

from __future__ import annotations

import io
import re

from cloudtrain.cli.sweep import _show
from cloudtrain.console import PlainConsole
from cloudtrain.sweeps.results import SweepResults, TrialRow


def test_a_sweeps_dry_run_shows_the_cost_cap_per_trial_and_in_total(cli):
    result = cli("submit", "job_configs/sweep.yaml", "--dry-run")
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stdout.splitlines() if line.startswith("cost cap: "))
    m = re.match(
        r"cost cap: \$([\d,.]+) per trial, \$([\d,.]+) for the sweep's 8 trials if it runs until max_runtime", line
    )
    assert m, line
    per_trial, total = (float(g.replace(",", "")) for g in m.groups())
    assert abs(total - 8 * per_trial) <= 0.05  # the total is 8 × the (unrounded) per-trial cap


def test_one_job_has_one_cost_cap(cli):
    result = cli("submit", "job_configs/gpu4.yaml", "--dry-run")
    line = next(line for line in result.stdout.splitlines() if line.startswith("cost cap: "))
    assert "per trial" not in line and re.match(r"cost cap: \$[\d,]+\.\d\d ", line)


def _table() -> SweepResults:
    return SweepResults(
        "lr-sweep",
        "val_accuracy",
        "maximize",
        "SUCCEEDED",
        (
            TrialRow("0", "COMPLETE", 0.912345678, {"lr": 0.0001694044709524275, "batch-size": 64}, "lr-sweep-0"),
            TrialRow("1", "COMPLETE", 0.95, {"lr": 0.0123, "batch-size": 128}, "lr-sweep-1"),
        ),
    )


def test_sweep_results_show_parameters_to_four_significant_digits(capsys):
    out = io.StringIO()
    _show(PlainConsole(out), _table(), "text")
    rows = [line.split("\t") for line in out.getvalue().splitlines()]
    assert rows[0] == ["trial", "state", "val_accuracy", "batch-size", "lr", "job"]
    assert rows[1] == ["0", "COMPLETE", "0.9123", "64", "0.0001694", "lr-sweep-0"]
    assert capsys.readouterr().out.startswith("best: trial 1, val_accuracy=0.95, --lr=0.0123 --batch-size=128")


def test_sweep_results_keep_full_precision_in_json(capsys):
    import json

    _show(None, _table(), "json")
    data = json.loads(capsys.readouterr().out)
    assert data["trials"][0]["params"]["lr"] == 0.0001694044709524275 and data["trials"][0]["value"] == 0.912345678
