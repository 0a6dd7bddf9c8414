"""The Python API as a notebook uses it: the plan is what --dry-run prints, a whole local job runs
through it alone, errors are the CLI's exception types, nothing is printed, and ``import cloudtrain``
stays cheap."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap

import pytest

import cloudtrain
from cloudtrain import history
from cloudtrain.backends.base import JobState
from cloudtrain.cli import main
from cloudtrain.errors import ConfigError, ExitCode, UsageError
from tests.conftest import REPO

GPU4 = REPO / "job_configs" / "gpu4.yaml"
CHATTY = REPO / "tests" / "packages" / "chatty_trainer"


@pytest.fixture(autouse=True)
def fresh_process_logging(monkeypatch):
    """As in a notebook: no handler that an earlier CLI run in this test process left on the logger."""
    monkeypatch.setattr(logging.getLogger("cloudtrain"), "handlers", [logging.NullHandler()])


def _without_run_id(document: dict, run_id: str) -> dict:
    """The document with what is new on every submit (the run id: time + random suffix, and the
    submit id label) as RUN."""
    submit_id = document["request"]["labels"]["cloudtrain-submit-id"]
    return json.loads(json.dumps(document).replace(run_id, "RUN").replace(submit_id, "RUN"))


def test_plan_is_what_dry_run_json_prints(capsys) -> None:
    assert (
        main(["submit", "--config", str(GPU4), "--set", "machine.accelerator_count=2", "--dry-run", "-o", "json"]) == 0
    )
    printed = json.loads(capsys.readouterr().out)
    cfg = cloudtrain.load_config(GPU4, overrides={"machine.accelerator_count": 2})
    plan = cloudtrain.plan(cfg)
    assert capsys.readouterr() == ("", "")
    assert plan.request["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorCount"] == 2
    assert plan.cost_per_hour == printed["cost_per_hour"] == cfg.spec.cost_per_hour
    assert _without_run_id(plan.to_dict(), plan.spec.job_name) == _without_run_id(printed, printed["job_name"])


def test_overrides_as_a_mapping_are_typed_as_set_reads_them() -> None:
    cfg = cloudtrain.load_config(GPU4, overrides={"machine.accelerator_count": 2, "name": "on", "args": ["--epochs=1"]})
    assert cfg.spec.machine.accelerator_count == 2
    assert cfg.spec.job_name.startswith("on-")  # "on" stays a string (YAML 1.1 would read it as True)
    assert cfg.spec.module_args() == ("--epochs=1",) or list(cfg.spec.module_args()) == ["--epochs=1"]


@pytest.fixture
def chatty_config(tmp_path, monkeypatch):
    """A Vertex job of the chatty package (no TensorFlow); run here with ``local=True``."""
    monkeypatch.chdir(tmp_path)  # the local run's folder is under the working directory
    path = tmp_path / "chatty.yaml"
    path.write_text(
        textwrap.dedent(f"""\
        name: chatty
        backend: vertex
        region: us-central1
        project: my-project
        staging_bucket: gs://my-bucket
        machine: {{type: n1-standard-4}}
        package: {{path: {CHATTY}, module: chatty_trainer.task}}
        args: [--epochs, "2"]
        """)
    )
    return path


@pytest.mark.slow
def test_a_whole_local_job_through_the_api_alone(chatty_config, capfd) -> None:
    cfg = cloudtrain.load_config(chatty_config)
    job = cloudtrain.submit(cfg, local=True)
    recorded = history.find(job.job_id)
    assert recorded is not None and recorded.backend == "local"  # recorded before anything is followed
    messages = [line.message for line in job.logs(follow=True)]
    status = job.wait()
    assert status.state is JobState.SUCCEEDED
    assert any("Epoch 2/2" in m for m in messages), messages[-20:]
    assert job.outcome is not None and job.outcome.error() is None
    saved = history.load_run(job.job_id)
    assert (
        saved is not None and saved["status"]["state"] == "SUCCEEDED"
    )  # the summary the CLI keeps, kept by the API too
    assert [row["phase"] for row in saved["timeline"]][-1] == "training"
    again = cloudtrain.attach(job.job_id)  # any id the CLI accepts: this one from history
    assert again.status().state is JobState.SUCCEEDED
    assert [r.job_id for r in cloudtrain.jobs(5)][0] == job.job_id
    assert capfd.readouterr().out == ""  # the API never prints to stdout


@pytest.mark.slow
def test_a_failed_local_job_is_returned_with_the_clis_exit_code(chatty_config) -> None:
    cfg = cloudtrain.load_config(chatty_config, overrides=["args=[--exit, '3']"])
    job = cloudtrain.submit(cfg, local=True)
    status = job.wait()
    assert status.state is JobState.FAILED
    assert job.outcome is not None
    error = job.outcome.error()
    assert error is not None and error.exit_code == ExitCode.JOB_FAILED and job.job_id in str(error)


def test_errors_are_the_clis_exceptions_and_nothing_is_printed(tmp_path, capsys) -> None:
    with pytest.raises(ConfigError, match="config file not found") as missing:
        cloudtrain.load_config(tmp_path / "nope.yaml")
    assert missing.value.exit_code == ExitCode.BAD_INPUT
    with pytest.raises(ConfigError, match="accelerator_count") as bad:
        cloudtrain.load_config(GPU4, overrides={"machine.accelerator_count": 3})
    assert bad.value.exit_code == ExitCode.BAD_INPUT
    with pytest.raises(UsageError, match="not in this machine's history"):
        cloudtrain.attach("no-such-job")
    assert capsys.readouterr() == ("", "")


def test_a_sweep_config_is_refused_by_submit_with_the_way_to_run_it(tmp_path) -> None:
    path = tmp_path / "sweep.yaml"
    path.write_text(
        GPU4.read_text().replace("../trainer", str(REPO / "trainer"))
        + textwrap.dedent("""\
        sweep:
          metric: accuracy
          goal: maximize
          max_trials: 2
          params: {learning_rate: {min: 0.001, max: 0.1}}
        """)
    )
    with pytest.raises(UsageError, match="sweep") as refused:
        cloudtrain.submit(cloudtrain.load_config(path))
    assert "submit_sweep" in str(refused.value.hint)


def test_import_cloudtrain_loads_nothing_else_until_the_api_is_used() -> None:
    code = (
        "import sys, cloudtrain; before = sorted(m for m in sys.modules if m.startswith(('cloudtrain', 'pydantic')));"
        "cloudtrain.load_config; after = 'cloudtrain.api' in sys.modules; print(before, after)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['cloudtrain'] True"


def test_unknown_names_are_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="no attribute 'sumbit'"):
        cloudtrain.sumbit  # noqa: B018
