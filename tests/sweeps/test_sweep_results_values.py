"""A sweep's results table by value (cloudtrain/sweeps/results.py): what ``cloudtrain sweep results -o json``
prints, and a local Optuna study read into it trial by trial (ids, states, the interrupted one, values,
parameters, each trial's job and message). Each assertion kills mutants that the goal tests let live
(docs/how-to/mutation-testing.md)."""

from __future__ import annotations

import optuna
from optuna.distributions import BaseDistribution, FloatDistribution
from optuna.trial import TrialState, create_trial

from cloudtrain.sweeps.results import SweepResults, TrialRow, from_study

LR: dict[str, BaseDistribution] = {"lr": FloatDistribution(1e-4, 1e-1, log=True)}


def test_the_json_of_a_sweep_names_every_field_and_its_best_trial() -> None:
    table = SweepResults(
        "sweep-7",
        "val_accuracy",
        "maximize",
        "SUCCEEDED",
        (TrialRow("0", "COMPLETE", 0.91, {"lr": 0.01}, "job-0"), TrialRow("1", "FAIL", None, {"lr": 0.1}, None, "OOM")),
        max_trials=2,
    )
    assert table.to_dict() == {
        "sweep_id": "sweep-7",
        "metric": "val_accuracy",
        "goal": "maximize",
        "state": "SUCCEEDED",
        "max_trials": 2,
        "best_trial": "0",
        "best_value": 0.91,
        "trials": [
            {
                "trial": "0",
                "state": "COMPLETE",
                "value": 0.91,
                "params": {"lr": 0.01},
                "job_id": "job-0",
                "message": None,
            },
            {"trial": "1", "state": "FAIL", "value": None, "params": {"lr": 0.1}, "job_id": None, "message": "OOM"},
        ],
    }


def test_a_sweep_without_a_completed_trial_has_no_best_in_its_json() -> None:
    table = SweepResults("s", "loss", "minimize", "RUNNING", (TrialRow("0", "RUNNING", None),), None)
    document = table.to_dict()
    assert (document["best_trial"], document["best_value"]) == (None, None)


def test_a_local_study_is_read_trial_by_trial() -> None:
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize")
    study.add_trial(
        create_trial(params={"lr": 0.01}, distributions=LR, value=0.9, user_attrs={"job_id": "run-0", "message": "ok"})
    )
    study.add_trial(create_trial(params={"lr": 0.1}, distributions=LR, state=TrialState.FAIL))
    study.add_trial(
        create_trial(params={"lr": 0.001}, distributions=LR, state=TrialState.FAIL, user_attrs={"interrupted": True})
    )

    table = from_study("sweep-3", study, "val_accuracy", "maximize", 8, "RUNNING")

    assert table == SweepResults(
        "sweep-3",
        "val_accuracy",
        "maximize",
        "RUNNING",
        (
            TrialRow("0", "COMPLETE", 0.9, {"lr": 0.01}, "run-0", "ok"),
            TrialRow("1", "FAIL", None, {"lr": 0.1}, None, None),
            TrialRow("2", "INTERRUPTED", None, {"lr": 0.001}, None, None),
        ),
        8,
    )
    assert table.best == TrialRow("0", "COMPLETE", 0.9, {"lr": 0.01}, "run-0", "ok")
