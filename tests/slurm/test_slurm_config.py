"""The Slurm keys offline: the batch script as a pure function of the spec (golden files), and `validate`.

Regenerate the golden scripts after an intended change with
``CLOUDTRAIN_UPDATE_GOLDEN=1 .venv/bin/pytest tests/slurm/test_slurm_config.py`` and read the diff.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cloudtrain.backends.slurm import script
from cloudtrain.backends.slurm.tasks import tasks_plan
from cloudtrain.config.load import load_config
from cloudtrain.errors import ConfigError
from cloudtrain.packaging import BuiltPackage
from cloudtrain.spec import build_spec
from tests.conftest import VERTEX_BASE

GOLDEN = Path(__file__).parent / "golden"
REPO = Path(__file__).resolve().parents[2]
NOW = dt.datetime(2026, 11, 25, 12, 0, 0, tzinfo=dt.timezone.utc)

BASE = """\
name: demo
backend: slurm
slurm:
  workdir: /fsx/cloudtrain
replica_count: 2
machine:
  accelerator_count: 4
package:
  path: trainer
  module: trainer.task
args: [--epochs=3]
max_runtime: 2h
"""

CASES = {
    "two-gpu-nodes": {},
    "hyperpod-requeue": {
        "slurm": {
            "login": "hyperpod",
            "workdir": "/fsx/cloudtrain",
            "partition": "ml.p5.48xlarge",
            "account": "research",
            "qos": "high",
            "constraint": "h100",
            "exclusive": True,
            "sbatch": ["--mem=0"],
            "setup": ["module load cuda/12.2", "source /fsx/env.sh"],
            "requeue": True,
            "grace": 300,
        },
        "budget": {"max_gpu_hours": 8},
    },
    "cpu-nodes": {"machine": {"accelerator_count": 0}, "replica_count": 1},
}


def write_config(tmp_path: Path, changes: dict | None = None, text: str = BASE) -> Path:
    data = yaml.safe_load(text)
    data.update(changes or {})
    (tmp_path / "trainer").mkdir(exist_ok=True)
    (tmp_path / "trainer" / "__init__.py").write_text("")
    (tmp_path / "trainer" / "task.py").write_text("print('hi')\n")
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.parametrize("case", sorted(CASES))
def test_batch_script_matches_golden(case, tmp_path):
    spec = build_spec(load_config(write_config(tmp_path, CASES[case])), now=NOW, suffix="abc123")
    text = script.batch_script(spec, script.Paths.of(spec, "/fsx/cloudtrain/envs/pkg-0123456789abcdef/bin/python"))
    path = GOLDEN / f"{case}.sh"
    if os.environ.get("CLOUDTRAIN_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"the batch script changed; see this module's docstring ({path.name})"


def test_the_gpu_hours_cap_cuts_the_time_limit(tmp_path):
    spec = build_spec(load_config(write_config(tmp_path, CASES["hyperpod-requeue"])), now=NOW, suffix="abc123")
    # 8 GPU-hours over 2 nodes × 4 GPUs = 1 h, under max_runtime's 2 h
    assert "--time=0-01:00:00" in script.sbatch_options(spec)


def test_the_spec_names_the_cluster_and_the_workdir(tmp_path):
    spec = build_spec(load_config(write_config(tmp_path, CASES["hyperpod-requeue"])), now=NOW, suffix="abc123")
    assert (spec.region, spec.project) == ("hyperpod", "/fsx/cloudtrain")
    assert spec.output_dir == "/fsx/cloudtrain/runs/demo-20261125-120000-abc123"
    assert (spec.replica_count, spec.machine.accelerator_count) == (2, 4)


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"region": "us-east-1"}, "region", "remove region"),
        ({"machine": {"type": "n1-standard-8", "accelerator_count": 4}}, "machine.type", "remove machine.type"),
        ({"slurm": {"workdir": "relative/dir"}}, "slurm.workdir", "absolute path"),
        ({"slurm": {"workdir": "/fsx", "login": "bad host name"}}, "slurm.login", "ssh destination"),
        ({"slurm": {"workdir": "/fsx", "sbatch": ["--time=10"]}}, "slurm.sbatch[0]", "set max_runtime instead"),
        ({"slurm": {"workdir": "/fsx", "grace": 30}}, "slurm.grace", "greater than or equal to 90"),
        ({"slurm": {"workdir": "/fsx", "partiton": "gpu"}}, "slurm.partiton", "partition"),
        ({"max_runtime": "2m"}, "max_runtime", "more than"),
        ({"image": {"uri": "docker.io/me/img"}}, "image.uri", "remove image.uri"),
        ({"image": {"tensorflow": "2.99"}}, "image.tensorflow", "choose a TensorFlow version the clouds ship"),
        ({"data": {"train": "ftp://b/x"}}, "data.train", "not a data location"),
        ({"budget": {"max_usd": 10}}, "budget.max_usd", "max_gpu_hours"),
        ({"machine": {"accelerator_count": 0, "accelerator_type": "h100"}}, "machine.accelerator_type", "asks for no"),
        ({"machine": {"accelerator_count": 4, "accelerator_type": "h 100"}}, "machine.accelerator_type", "gres"),
        ({"slurm": {"workdir": "/fsx", "sbatch": ["--gres=gpu:2"]}}, "slurm.sbatch[0]", "accelerator_type"),
        (
            {"slurm": {"workdir": "/fsx", "tasks_per_node": "gpus"}, "machine": {"accelerator_count": 0}},
            "slurm.tasks_per_node",
            "CPU nodes",
        ),
        (
            {"slurm": {"workdir": "/fsx", "login": "hyperpod"}, "data": {"train": "no-such-folder"}},
            "data.train",
            "or write an absolute path on the cluster",
        ),
    ],
)
def test_validate_refuses_with_one_line_naming_the_key(changes, field, words, tmp_path):
    data = dict(changes)
    path = write_config(tmp_path, data)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert field in message and words in message, message


def test_the_gpu_type_goes_into_the_gres_request(tmp_path):
    changes = {"machine": {"accelerator_count": 8, "accelerator_type": "h100"}}
    spec = build_spec(load_config(write_config(tmp_path, changes)), now=NOW, suffix="abc123")
    options = script.sbatch_options(spec)
    assert "--gres=gpu:h100:8" in options and not [o for o in options if o.startswith("--gpus-per-node")]
    assert spec.machine.accelerators == "8 × h100"
    plain = build_spec(load_config(write_config(tmp_path)), now=NOW, suffix="abc123")
    assert "--gpus-per-node=4" in script.sbatch_options(plain)
    assert plain.machine.accelerators == "4 × GPU"  # no type: not "4 × None" (validate's line)


def test_one_task_per_gpu_gets_its_own_gpu_and_tf_config_entry(tmp_path):
    changes = {"slurm": {"workdir": "/fsx/cloudtrain", "tasks_per_node": "gpus"}, "replica_count": 2}
    spec = build_spec(load_config(write_config(tmp_path, changes)), now=NOW, suffix="abc123")
    options = script.sbatch_options(spec)
    assert ["--nodes=2", "--ntasks-per-node=4", "--gpus-per-task=1"] == [
        o for o in options if o.startswith(("--nodes", "--ntasks", "--gpus"))
    ]
    package = BuiltPackage(Path("/dist/t-0.1-ab.tar.gz"), "ab" * 32, 0, "t", "0.1", "t-0.1-ab.tar.gz", (), ())
    plan = tasks_plan(spec, package, "/fsx/cloudtrain/envs/pkg-x/bin/python", {})
    assert [t["name"] for t in plan["tasks"]] == ["chief", *(f"worker-{i}" for i in range(7))]
    assert plan["gpus_per_task"] == 1 and plan["gpus_per_node"] == 4
    for i, task in enumerate(plan["tasks"]):
        tf_config = json.loads(task["env"]["TF_CONFIG"])
        assert len(tf_config["cluster"]["worker"]) == 7 and tf_config["task"]["index"] == max(i - 1, 0)
    per_node = build_spec(load_config(write_config(tmp_path)), now=NOW, suffix="abc123")
    assert len(tasks_plan(per_node, package, "/p/bin/python", {})["tasks"]) == 2


def test_accelerator_type_is_refused_by_a_cloud(project):
    with pytest.raises(ConfigError) as info:
        load_config(project(VERTEX_BASE), ["machine.accelerator_type=h100"])
    assert "machine.accelerator_type" in str(info.value) and "does not take it" in str(info.value)


def test_a_missing_slurm_section_is_named(tmp_path):
    text = BASE.replace("slurm:\n  workdir: /fsx/cloudtrain\n", "")
    path = write_config(tmp_path, text=text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert "needs a slurm: section" in str(info.value)


def test_max_gpu_hours_is_refused_where_it_cannot_be_honoured(project):
    with pytest.raises(ConfigError) as info:
        load_config(project(VERTEX_BASE + "budget:\n  max_gpu_hours: 10\n"))
    assert "budget.max_gpu_hours" in str(info.value) and "cannot cap GPU-hours" in str(info.value)


def shown_alike(text: str) -> str:
    """A dry run's text with what changes from run to run (the job name's time and suffix, the
    environment's content hash) as placeholders."""
    text = re.sub(r"mnist-slurm-\d{8}-\d{6}-[a-z0-9]{6}", "JOB", text)
    return re.sub(r"pkg-[0-9a-f]{16}", "pkg-HASH", text)


def test_validate_and_dry_run_of_the_shipped_config():
    """`validate`, then the dry run: ``-o json`` keeps the batch script as one string; the text form
    prints it as the script itself, line by line, after the request (golden: dry-run-script.txt)."""
    validate = subprocess.run(
        [sys.executable, "-m", "cloudtrain", "validate", "job_configs/slurm.yaml"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert validate.returncode == 0, validate.stderr
    dry = subprocess.run(
        [sys.executable, "-m", "cloudtrain", "submit", "--config", "job_configs/slurm.yaml", "--dry-run", "-o", "json"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert dry.returncode == 0, dry.stderr
    request = json.loads(dry.stdout)["request"]
    assert request["batch_script"].startswith("#!/bin/bash\n")
    assert "#SBATCH --nodes=2" in request["batch_script"]
    assert request["commands"][-1].startswith("sbatch --parsable --export=NONE ")
    text = subprocess.run(
        [sys.executable, "-m", "cloudtrain", "submit", "--config", "job_configs/slurm.yaml", "--dry-run"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert text.returncode == 0, text.stderr
    shown = shown_alike(text.stdout.split("\nbatch_script:\n", 1)[1])
    path = GOLDEN / "dry-run-script.txt"
    if os.environ.get("CLOUDTRAIN_UPDATE_GOLDEN"):
        path.write_text(shown)
    assert shown == path.read_text(), f"the dry run's script changed; see this module's docstring ({path.name})"
    assert shown == shown_alike(request["batch_script"])  # the same script, as lines
    request_json = text.stdout.split("\nbatch_script:\n", 1)[0]
    assert '"batch_script"' not in request_json and "#SBATCH" not in request_json


@pytest.mark.parametrize(
    ("gpus", "gpu_type", "option"), [(2, None, "--gpus-per-task=1"), (2, "h100", "--gpus-per-task=h100:1")]
)
def test_one_task_per_gpu_asks_for_one_gpu_of_the_named_type_each(gpus, gpu_type, option, tmp_path):
    machine = {"accelerator_count": gpus, "accelerator_type": gpu_type} if gpu_type else {"accelerator_count": gpus}
    changes = {"slurm": {"workdir": "/fsx", "tasks_per_node": "gpus"}, "machine": machine}
    options = script.sbatch_options(build_spec(load_config(write_config(tmp_path, changes)), now=NOW, suffix="a"))
    assert [o for o in options if o.startswith(("--ntasks", "--gpus", "--gres"))] == [
        f"--ntasks-per-node={gpus}",
        option,
    ]


def test_a_trailing_slash_of_the_workdir_or_the_run_folder_is_in_no_path_written(tmp_path):
    spec = build_spec(load_config(write_config(tmp_path, {"slurm": {"workdir": "/fsx/ct/"}})), now=NOW, suffix="a")
    assert script.workdir(spec) == "/fsx/ct"
    run = spec.output_dir.rstrip("/")
    slashed = dataclasses.replace(spec, output_dir=run + "/")
    assert script.Paths.of(slashed, "/py") == script.Paths(
        run, "/py", f"{run}/slurm/launcher.py", f"{run}/slurm/tasks.json"
    )
    assert f"--output={run}/slurm/batch-%j.log" in script.sbatch_options(slashed)


@pytest.mark.parametrize(
    ("changes", "private"),
    [
        ({}, False),
        ({"secrets": {"HF_TOKEN": "shell:CT_TOKEN"}}, True),
        ({"env": {"API_KEY": "sk-live-0123456789abcdefABCDEF"}}, True),  # a secret-looking value in env:
        ({"env": {"LOG_LEVEL": "debug"}}, False),
    ],
)
def test_a_job_holding_a_secret_writes_its_files_private(changes, private, tmp_path):
    """umask 077 before the batch shell writes anything: its logs and records may hold the job's secrets."""
    spec = build_spec(
        load_config(write_config(tmp_path, {"slurm": {"workdir": "/fsx"}, **changes})), now=NOW, suffix="a"
    )
    text = script.batch_script(spec, script.Paths.of(spec, "/fsx/envs/p/bin/python"))
    assert ("\numask 077\nsay() {" in text) is private


@pytest.mark.parametrize(("budget", "budget_s"), [(None, 0), (4, 1800)])  # 4 GPU-hours over 2 nodes x 4 GPUs
def test_a_requeued_job_spends_the_gpu_hours_budget_per_gpu_or_none(budget, budget_s, tmp_path):
    changes: dict = {"slurm": {"workdir": "/fsx", "requeue": True}}
    if budget is not None:
        changes["budget"] = {"max_gpu_hours": budget}
    spec = build_spec(load_config(write_config(tmp_path, changes)), now=NOW, suffix="a")
    assert f"  budget_s={budget_s}\n" in script.requeue_lines(spec)
