"""Every field of a job's status and summary goes through the masking (issue 48, item 7: a failed task's
last lines were in clear in the submit summary, ``status``, ``logs --follow`` and the run record).

A ``secrets:`` value, a secret-looking ``env:`` value and a credential of a known form are planted into
every string a backend's status is made of (the cloud's description walked generically, so a field the
cloud or cloudtrain adds later is planted too); none may show in clear anywhere a status reaches: its
fields at any depth, its repr, ``-o json``, the CLI's text, the run record. What a backend cannot know
(a cloud resolves ``secrets:`` on its machines) is masked by its form: the planted credential."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from cloudtrain.job_states import JobState, JobStatus
from cloudtrain.secrets.masking import MASK

SECRET = "s3cr3t-from-the-store-Qx81"  # secrets: HF_TOKEN, as the job's machine resolves it
ENV_VALUE = "hunter2-env-Vk27"  # env: DB_PASSWORD, secret by its name
CREDENTIAL = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a token by its form (a cloud's secrets: value)
CLEAR = (SECRET, ENV_VALUE, CREDENTIAL)
CLOUD_CLEAR = (ENV_VALUE, CREDENTIAL)  # a cloud resolves secrets: on its machines: cloudtrain never holds SECRET
LEAK = f"token {SECRET} pw {ENV_VALUE} key {CREDENTIAL}"


def planted(node: Any, skip: frozenset[str] = frozenset()) -> Any:
    """``node`` (a cloud's JSON-like description) with the secrets added to every string in it, at any
    depth; the keys of ``skip`` (what the job was given, states the parser needs) kept as they are."""
    if isinstance(node, Mapping):
        return {k: v if k in skip else planted(v, skip) for k, v in node.items()}
    if isinstance(node, list):
        return [planted(v, skip) for v in node]
    return f"{node} {LEAK}" if isinstance(node, str) else node


def texts(node: Any) -> Iterator[str]:
    """Every text a status holds, found generically: dataclass fields, mappings (keys too), sequences."""
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        node = {f.name: getattr(node, f.name) for f in dataclasses.fields(node)}
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield str(key)
            yield from texts(value)
    elif isinstance(node, (list, tuple)):
        for item in node:
            yield from texts(item)
    elif isinstance(node, str):
        yield node


def assert_masked(status: JobStatus, *shown: str, clear: tuple[str, ...] = CLEAR, planted: int = 2) -> None:
    """Nothing of ``clear`` in the status or in what was shown of it, and the plants reached ``planted``
    of its texts. Its identity (``job_id``, ``name``: what history finds it by) is not planted."""
    from cloudtrain.app.job_status import StatusReport

    everything = [*texts(status), repr(status), json.dumps(status.to_dict(), default=str), *shown]
    everything.append(json.dumps(StatusReport(status, None, None).to_dict(), default=str))
    leaked = [t for t in everything if any(value in t for value in clear)]
    assert not leaked, leaked
    assert sum(MASK in t for t in texts(status)) >= planted, list(texts(status))


def test_every_text_of_every_field_of_a_status_is_masked_whatever_the_field():
    """The masking is the status's own: a field added to JobStatus later is masked without a word more."""
    values: dict[str, Any] = {}
    for f in dataclasses.fields(JobStatus):
        kind = str(f.type)
        if "Mapping" in kind:
            values[f.name] = {"planted": LEAK, "deeper": {"lines": [LEAK, "-----BEGIN PRIVATE KEY-----", "MIIEv"]}}
        elif "Sequence" in kind:
            values[f.name] = [{"source": LEAK}]
        elif "str" in kind:
            values[f.name] = LEAK
    assert {"message", "details", "interruptions", "waiting_for", "machine_type", "output_dir"} <= set(values)
    values |= {"job_id": "demo-1", "name": "projects/p/locations/l/customJobs/1"}  # its identity: not masked
    status = JobStatus(**{"state": JobState.FAILED, **values}, secret_values=[SECRET, ENV_VALUE])
    assert (status.job_id, status.name) == (values["job_id"], values["name"])
    for name in values.keys() - {"job_id", "name"}:
        shown = json.dumps(getattr(status, name))
        assert MASK in shown and not any(clear in shown for clear in CLEAR), (name, shown)
    assert status.details["deeper"]["lines"][1:] == [MASK, MASK]  # a key's every line
    assert_masked(status)
    assert_masked(dataclasses.replace(status, native_state="FAILED"))  # a copy keeps what was masked


def test_a_slurm_status_masks_what_the_run_folder_and_the_controller_say(tmp_path):
    """The failed task's last lines (``failed_task_output``), the controller's fields and the recorded
    message, with the values ``slurm/secrets.json`` lists (the real cluster: tests/slurm/test_hostile_scripts.py)."""
    from cloudtrain.backends.slurm.job import SlurmJob

    job = SlurmJob(None, "42", "/fsx/runs/demo", cluster="c1", workdir="/fsx")  # type: ignore[arg-type]
    lines = [LEAK, "-----BEGIN PRIVATE KEY-----", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "-----END PRIVATE KEY-----"]
    files = {
        "known": True,
        "tasks": [{"node": "n1", "task": 0, "exit": 1, "start": 1.0, "end": 2.0, "last_lines": lines}],
        "slurm_state": planted("JobState=FAILED NodeList=n1"),
        "mask": [SECRET, ENV_VALUE],
    }
    fields = planted({"NodeList": "n1", "Reason": "NonZeroExitCode", "Partition": "debug"})
    status = job._status(JobState.FAILED, planted("FAILED"), planted("task 0 failed"), fields, files)
    assert status.details["failed_task_output"] == [
        "n1/task-0: token *** pw *** key ***",
        "n1/task-0: ***",
        MASK,  # a private key's body and end, whatever the key
        MASK,
    ]
    assert "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" not in json.dumps(status.to_dict())
    assert_masked(status)


def test_a_sagemaker_status_masks_every_field_of_the_jobs_description(aws):
    """moto's DescribeTrainingJob, every string planted (FailureReason, transitions' messages, ARNs, …):
    the secret-looking ``Environment`` values and any credential show as ***."""
    from cloudtrain.backends.sagemaker.jobs import to_status

    sm = aws.client("sagemaker", "eu-west-1")
    sm.create_training_job(
        TrainingJobName="demo-20261202-010203-abcdef",
        AlgorithmSpecification={"TrainingImage": "tf", "TrainingInputMode": "File"},
        RoleArn="arn:aws:iam::123456789012:role/SageMakerRole",
        OutputDataConfig={"S3OutputPath": "s3://team-bucket/outputs"},
        ResourceConfig={"InstanceType": "ml.m5.large", "InstanceCount": 1, "VolumeSizeInGB": 10},
        StoppingCondition={"MaxRuntimeInSeconds": 60},
        Environment={"DB_PASSWORD": ENV_VALUE},
        HyperParameters={"epochs": "2"},
    )
    desc = sm.describe_training_job(TrainingJobName="demo-20261202-010203-abcdef")
    assert "Environment" not in desc  # moto leaves it out; SageMaker's DescribeTrainingJob returns it
    desc["Environment"] = {"DB_PASSWORD": ENV_VALUE}
    desc |= {"TrainingJobStatus": "Failed", "FailureReason": "AlgorithmError: exit 1", "SecondaryStatus": "Failed"}
    desc["SecondaryStatusTransitions"] = [
        {"Status": "Training", "StartTime": desc["CreationTime"], "StatusMessage": "Training image download"}
    ]
    keep = {"TrainingJobName", "TrainingJobArn", "TrainingJobStatus", "SecondaryStatus", "Status", "Environment"}
    assert_masked(to_status(planted(desc, frozenset(keep)), "eu-west-1"), clear=CLOUD_CLEAR)


def test_a_vertex_status_masks_every_field_of_the_custom_job(tmp_path, monkeypatch, capsys):
    """The fake JobService answers a job whose every string is planted (its error too); ``status`` of it,
    text and JSON, and the handle's status: the secret-looking ``env`` values and any credential as ***."""
    from google.cloud.aiplatform_v1.types import CustomJob

    import cloudtrain.backends.vertex as vertex_module
    from cloudtrain.backends.vertex import VertexBackend
    from cloudtrain.cli import main
    from cloudtrain.packaging import BuiltPackage
    from cloudtrain.testing.contract import sample_spec
    from tests.fakes.vertex_jobs import FakeJobService, Script

    fake = FakeJobService()
    try:
        monkeypatch.setenv("CLOUDTRAIN_VERTEX_ENDPOINT", fake.address)
        backend = VertexBackend()
        monkeypatch.setattr(vertex_module, "BACKEND", backend)
        job_id = fake.start(Script(states=["FAILED"], error=f"The replica workerpool0-0 exited 1: {LEAK}"))
        package = BuiltPackage(Path("/d/t-0.1-ab.tar.gz"), "ab" * 32, 0, "t", "0.1", "t-0.1-ab.tar.gz", (), ())
        body = backend.render(sample_spec(env={"DB_PASSWORD": ENV_VALUE}), package)
        typed = {"env", "acceleratorType", "replicaCount", "acceleratorCount", "bootDiskSizeGb", "timeout"}
        job = CustomJob.from_json(json.dumps(planted(body, frozenset(typed))))
        job.name, job.create_time = fake.jobs[job_id].name, fake.jobs[job_id].create_time
        fake.jobs[job_id] = job
        assert main(["status", job.name]) == 0
        text = capsys.readouterr()
        assert main(["status", job.name, "-o", "json"]) == 0
        shown = capsys.readouterr()
        status = backend.attach(job.name).status()
        assert status.state is JobState.FAILED
        assert_masked(status, text.out, text.err, shown.out, shown.err, clear=CLOUD_CLEAR)
        assert MASK in json.loads(shown.out)["message"]
    finally:
        fake.stop()


def test_a_local_runs_status_summary_and_record_mask_what_it_printed_and_where_it_ran(tmp_path, monkeypatch, capsys):
    """A real local run whose last words hold the secrets, failing: its lines are masked where the run writes
    them, so the submit summary, ``status`` (text and JSON), the run record and the API's handle hold none."""
    import importlib

    from cloudtrain import api, history
    from cloudtrain.backends.local.backend import LocalBackend
    from cloudtrain.cli import main
    from tests.backends.local.conftest import bare_image

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CT_TOKEN", SECRET)
    local = LocalBackend(cache_root=tmp_path / "cache", gpu_count=lambda: 0, image_for=lambda spec: bare_image())
    monkeypatch.setattr(importlib.import_module("cloudtrain.backends.local.backend"), "BACKEND", local)
    (tmp_path / "trainer").mkdir()
    (tmp_path / "trainer" / "__init__.py").write_text("")
    (tmp_path / "trainer" / "task.py").write_text(
        "import os\nraise SystemExit(f\"boom {os.environ['HF_TOKEN']} {os.environ['DB_PASSWORD']} "
        f'{CREDENTIAL}")\n'
    )
    (tmp_path / "job.yaml").write_text(
        "name: demo\nbackend: vertex\nregion: us-central1\nproject: my-project\nstaging_bucket: gs://b\n"
        "machine: {type: n1-standard-4}\npackage: {path: trainer, module: trainer.task}\n"
        f"secrets: {{HF_TOKEN: 'shell:CT_TOKEN'}}\nenv: {{DB_PASSWORD: {ENV_VALUE}}}\n"
    )
    assert main(["submit", "job.yaml", "--local"]) == 1
    submitted = capsys.readouterr()
    (entry,) = history.recent(limit=1)
    assert main(["status", entry.job_id]) == 0
    text = capsys.readouterr()
    assert main(["status", entry.job_id, "-o", "json"]) == 0
    shown = capsys.readouterr()
    job = api.attach(entry.job_id)
    status = job.status()
    assert status.state is JobState.FAILED
    record = history.run_file(entry.job_id).read_text()
    assert "boom *** *** ***" in submitted.out  # the job said them: its last words, masked
    assert_masked(status, submitted.out, submitted.err, text.out, shown.out, record, repr(job), planted=0)
