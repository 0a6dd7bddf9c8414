"""The Python API misused (issue 48, deliverable 6): a wrong type, an unknown keyword, a value out of range
or a handle whose run folder is gone is one :class:`UsageError` naming the argument (or the run), never
``unexpected …Error`` from deep inside, never a hang."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import cloudtrain
from cloudtrain.errors import UsageError
from tests.fakes.events import local_run

CONFIG = """\
name: demo
backend: vertex
region: us-central1
project: my-project
staging_bucket: gs://my-bucket
machine: {type: n1-standard-4}
package: {path: trainer, module: trainer.task}
"""


@pytest.fixture
def job(tmp_path, monkeypatch) -> cloudtrain.Job:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "trainer").mkdir()
    (tmp_path / "trainer" / "__init__.py").write_text("")
    (tmp_path / "trainer" / "task.py").write_text("print('hi')\n")
    (tmp_path / "job.yaml").write_text(CONFIG)
    local_run(tmp_path / "runs", "demo-1")
    return cloudtrain.attach("demo-1")


# (the call, what the one line must say)
api: Any = cloudtrain  # the calls below pass wrong types on purpose

MISUSE: dict[str, tuple[Callable[[Any], Any], str]] = {
    "load_config(123)": (lambda j: api.load_config(123), "load_config(): path must be str | Path, not int 123"),
    "overrides=5": (
        lambda j: api.load_config("job.yaml", overrides=5),
        "load_config(): overrides must be Mapping[str, Any] | Sequence[str], not int 5",
    ),
    "include='trainer'": (
        lambda j: api.load_config("job.yaml", include="trainer"),
        "load_config(): include must be Sequence[str], not str 'trainer'",
    ),
    "strict='yes'": (
        lambda j: api.load_config("job.yaml", strict="yes"),
        "load_config(): strict must be bool, not str 'yes'",
    ),
    "an unknown keyword": (
        lambda j: api.load_config("job.yaml", overides={"name": "x"}),
        "load_config(): got an unexpected keyword argument 'overides'",
    ),
    "plan of a path": (lambda j: api.plan("job.yaml"), "plan(): config must be Config, not str 'job.yaml'"),
    "submit of a path": (lambda j: api.submit("job.yaml"), "submit(): config must be Config, not str"),
    "submit local='yes'": (
        lambda j: api.submit(api.load_config("job.yaml"), local="yes"),
        "submit(): local must be bool, not str 'yes'",
    ),
    "attach(123)": (lambda j: api.attach(123), "attach(): job_id must be str, not int 123"),
    "jobs('5')": (lambda j: api.jobs("5"), "jobs(): limit must be int, not str '5'"),
    "jobs(0)": (lambda j: api.jobs(0), "jobs(): limit must be 1 or more, not 0"),
    "report of a text": (lambda j: api.report("demo-1"), "report(): job_ids must be Sequence[str], not str"),
    "tensorboard of a text": (
        lambda j: api.tensorboard("demo-1"),
        "tensorboard(): job_ids must be Sequence[str], not str 'demo-1'",
    ),
    "tensorboard port='x'": (
        lambda j: api.tensorboard(["demo-1"], port="x"),
        "tensorboard(): port must be int, not str 'x'",
    ),
    "tensorboard port 70000": (
        lambda j: api.tensorboard(["demo-1"], port=70000),
        "tensorboard(): port must be 1 to 65535, not 70000",
    ),
    "sweep_results(5)": (lambda j: api.sweep_results(5), "sweep_results(): sweep_id must be str, not int 5"),
    "download(5)": (lambda j: j.download(5), "Job.download(): dest must be str | Path, not int 5"),
    "logs(drain='x')": (lambda j: list(j.logs(drain="x")), "Job.logs(): drain must be float | None, not str 'x'"),
    "cancel(wait=1)": (lambda j: j.cancel(wait=1), "Job.cancel(): wait must be bool, not int 1"),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("call, said", MISUSE.values(), ids=MISUSE.keys())
def test_a_misused_call_is_one_usage_error_naming_the_argument(call, said, job) -> None:
    with pytest.raises(UsageError) as refused:
        call(job)
    assert str(refused.value).startswith(said), str(refused.value)


GONE = {
    "status": lambda j: j.status(),
    "logs": lambda j: list(j.logs()),
    "outputs": lambda j: j.outputs(),
    "wait": lambda j: j.wait(),
    "cancel": lambda j: j.cancel(),
    "download": lambda j: j.download("dl"),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("call", GONE.values(), ids=GONE.keys())
def test_a_handle_whose_run_folder_is_gone_is_one_usage_error(call, job, tmp_path) -> None:
    shutil.rmtree(tmp_path / "runs" / "demo-1")
    with pytest.raises(UsageError) as refused:
        call(job)
    assert f"its run folder {tmp_path / 'runs' / 'demo-1'} is gone" in str(refused.value), str(refused.value)
    assert not Path("dl").exists()


def test_the_checked_api_still_takes_what_it_documents(job) -> None:
    config = cloudtrain.load_config("job.yaml", overrides={"machine.type": "n1-standard-8"}, include=[])
    assert config.spec.machine.type == "n1-standard-8"
    assert cloudtrain.load_config(Path("job.yaml"), ["name=other"]).spec.name == "other"
    assert [r.job_id for r in cloudtrain.jobs(5)] == ["demo-1"]
    assert job.status().state.name == "SUCCEEDED"
