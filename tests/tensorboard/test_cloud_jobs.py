"""A SageMaker job in moto (its S3 output, checkpoints and TensorBoardOutputConfig prefix): TensorBoard
serves its event files copied from s3:// (asked over HTTP), a running job's new bytes are copied on the
next refresh, and ``outputs`` lists and downloads what it produced (resuming, checking the ETag's MD5,
refusing to overwrite a different file)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

import cloudtrain
from cloudtrain import history
from cloudtrain.app.outputs import PARTIAL
from cloudtrain.cli import main
from cloudtrain.errors import BackendError, UsageError
from cloudtrain.history import JobRecord
from tests.fakes.aws import ROLE_ARN
from tests.fakes.events import write_scalars
from tests.fakes.gcs import free_port

pytestmark = [pytest.mark.slow, pytest.mark.server]
REGION = "eu-west-1"
JOB = "mnist-20261129-010203-abcdef"


@pytest.fixture
def sagemaker_job(aws, tmp_path):
    """A job whose request names its output, checkpoint and TensorBoard prefixes, and what it wrote there."""
    s3 = aws.client("s3", REGION)
    s3.create_bucket(Bucket="team-bucket", CreateBucketConfiguration={"LocationConstraint": REGION})
    aws.client("sagemaker", REGION).create_training_job(
        TrainingJobName=JOB,
        AlgorithmSpecification={"TrainingImage": "tf", "TrainingInputMode": "File"},
        RoleArn=ROLE_ARN,
        OutputDataConfig={"S3OutputPath": "s3://team-bucket/outputs"},
        CheckpointConfig={"S3Uri": f"s3://team-bucket/outputs/{JOB}/checkpoints"},
        TensorBoardOutputConfig={"S3OutputPath": f"s3://team-bucket/outputs/{JOB}/tensorboard"},
        ResourceConfig={"InstanceType": "ml.m5.large", "InstanceCount": 1, "VolumeSizeInGB": 10},
        StoppingCondition={"MaxRuntimeInSeconds": 60},
    )
    event = write_scalars(tmp_path / "written", {"epoch_loss": [0.8, 0.3], "epoch_accuracy": [0.7, 0.9]})
    files = {
        f"outputs/{JOB}/tensorboard/{event.name}": event.read_bytes(),
        f"outputs/{JOB}/output/model.tar.gz": b"model" * 1000,
        f"outputs/{JOB}/checkpoints/ckpt-2.index": b"index",
        f"outputs/{JOB}/checkpoints/ckpt-2.data-00000-of-00001": b"weights" * 300,
    }
    for key, body in files.items():
        s3.put_object(Bucket="team-bucket", Key=key, Body=body)
    history.record(JobRecord(JOB, f"arn:aws:sagemaker:{REGION}:123456789012:training-job/{JOB}", "sagemaker", REGION))
    return s3, files, event


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.loads(answer.read())


def test_tensorboard_serves_the_event_files_copied_from_s3_and_refreshes_a_running_job(aws, sagemaker_job) -> None:
    s3, files, event = sagemaker_job
    aws.set_job(REGION, JOB, "InProgress", "Training")
    with cloudtrain.tensorboard([JOB], port=free_port()) as board:
        (run,) = board.runs
        assert run.name == JOB and run.source == f"s3://team-bucket/outputs/{JOB}/tensorboard/"
        assert run.logdir.is_relative_to(history.cache_dir() / "tensorboard" / "sagemaker")
        assert get(board.url + "data/runs") == [f"{JOB}"]
        tags = get(board.url + "data/plugin/scalars/tags")
        assert sorted(tags[f"{JOB}"]) == ["epoch_accuracy", "epoch_loss"]

        grown = event.read_bytes() + b"appended record"  # the job appends; the copy gets the tail only
        s3.put_object(Bucket="team-bucket", Key=f"outputs/{JOB}/tensorboard/{event.name}", Body=grown)
        assert run.mirror is not None
        before = run.mirror.counts.bytes
        run.refresh()
        assert run.mirror.counts.bytes - before == len(b"appended record")
        assert (run.logdir / event.name).read_bytes() == grown
        assert run.running  # still InProgress: refreshed again later
        aws.set_job(REGION, JOB, "Completed", "Completed")
        run.refresh()
        assert not run.running


def test_outputs_lists_every_prefix_and_download_resumes_and_verifies(aws, sagemaker_job, tmp_path, capsys) -> None:
    s3, files, event = sagemaker_job
    job = cloudtrain.attach(JOB)
    listing = job.outputs()
    assert {o.path: o.file.size for o in listing.files} == {
        "output/model.tar.gz": 5000,
        "checkpoints/ckpt-2.index": 5,
        "checkpoints/ckpt-2.data-00000-of-00001": 2100,
        f"tensorboard/{event.name}": event.stat().st_size,
    }  # the job's folder holds its checkpoint and TensorBoard prefixes: listed once, under it
    assert listing.sources == {"output": f"s3://team-bucket/outputs/{JOB}/"}
    dest = tmp_path / "got"
    partial = dest / "output" / ("model.tar.gz" + PARTIAL)  # an earlier download stopped half-way
    partial.parent.mkdir(parents=True)
    partial.write_bytes(b"model" * 400)
    seen: list[tuple[int, int, str]] = []
    done = job.download(dest, progress=lambda n, total, path: seen.append((n, total, path)))
    assert (dest / "output" / "model.tar.gz").read_bytes() == b"model" * 1000 and not partial.exists()
    assert (dest / "checkpoints" / "ckpt-2.index").read_bytes() == b"index"
    assert seen[-1][:2] == (listing.total_bytes, listing.total_bytes)
    assert sorted(done.fetched) == sorted(o.path for o in listing.files)
    assert done.bytes == listing.total_bytes - 2000  # the partial file's 2,000 bytes were not fetched again

    assert job.download(dest).fetched == []  # all there, same size and MD5: nothing fetched again
    (dest / "checkpoints" / "ckpt-2.index").write_bytes(b"INDEX")  # same size, other content
    with pytest.raises(UsageError, match="differs from s3://team-bucket/outputs/.*ckpt-2.index"):
        job.download(dest)
    assert main(["outputs", JOB, "--download", str(dest)]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1
    assert main(["outputs", JOB, "--download", str(dest), "--force", "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["fetched"] == ["checkpoints/ckpt-2.index"]
    assert (dest / "checkpoints" / "ckpt-2.index").read_bytes() == b"index"


def test_a_download_whose_bytes_do_not_match_the_stores_md5_is_refused(aws, sagemaker_job, tmp_path) -> None:
    s3, files, event = sagemaker_job
    job = cloudtrain.attach(JOB)
    listing = job.outputs()
    s3.put_object(Bucket="team-bucket", Key=f"outputs/{JOB}/checkpoints/ckpt-2.index", Body=b"inde!")  # changed after
    from cloudtrain.app.outputs import download

    with pytest.raises(BackendError, match="md5 checksum"):
        download(listing, tmp_path / "got")
    assert not (tmp_path / "got" / "checkpoints" / ("ckpt-2.index" + PARTIAL)).exists()


def test_a_job_whose_outputs_are_gone_is_one_line(aws, sagemaker_job, capsys) -> None:
    s3, files, event = sagemaker_job
    for key in files:
        s3.delete_object(Bucket="team-bucket", Key=key)
    assert main(["outputs", JOB]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line == f"error: job {JOB}: its outputs are gone (s3://team-bucket/outputs/{JOB}/ holds nothing)"


def test_a_running_jobs_new_event_file_reaches_tensorboard_by_itself(aws, sagemaker_job, tmp_path) -> None:
    """The background refresh: no call from the test copies it; TensorBoard shows the new step when it has."""
    import time

    from cloudtrain.app.tensorboard import serve

    s3, files, event = sagemaker_job
    aws.set_job(REGION, JOB, "InProgress", "Training")
    later = write_scalars(tmp_path / "later", {"epoch_loss": [0.25]}, suffix=".later", first=2)
    with serve([JOB], port=free_port(), refresh_s=1) as board:
        scalars = board.url + f"data/plugin/scalars/scalars?run={JOB}&tag=epoch_loss"
        assert [step for _, step, _ in get(scalars)] == [0, 1]
        s3.put_object(Bucket="team-bucket", Key=f"outputs/{JOB}/tensorboard/{later.name}", Body=later.read_bytes())
        deadline = time.monotonic() + 120  # a bound on waiting, not a measured time
        while len(get(scalars)) < 3 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert [(step, round(value, 2)) for _, step, value in get(scalars)] == [(0, 0.8), (1, 0.3), (2, 0.25)]


@pytest.mark.parametrize("how", ["link", "fifo", "an object climbing out"])
def test_an_s3_download_never_writes_through_a_link_or_outside_its_folder(how, aws, sagemaker_job, tmp_path, capsys):
    """Issue 48: a partial file that was a link was appended to through it (the outside file grew by the
    download's size) before the MD5 check failed; a FIFO there hung the download."""
    s3, files, event = sagemaker_job
    dest, outside = tmp_path / "got", tmp_path / "elsewhere" / "precious"
    outside.parent.mkdir()
    outside.write_bytes(b"precious")
    partial = dest / "output" / ("model.tar.gz" + PARTIAL)
    partial.parent.mkdir(parents=True)
    if how == "link":
        partial.symlink_to(outside)
    elif how == "fifo":
        import os

        os.mkfifo(partial)
    else:
        s3.put_object(Bucket="team-bucket", Key=f"outputs/{JOB}/output/../../../../elsewhere/precious", Body=b"x")
    assert main(["outputs", JOB, "--download", str(dest)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("fetching ")]
    assert len(err) == 1 and err[0].startswith("error: "), err
    assert ("points outside" if how.startswith("an") else "not written through") in err[0], err
    assert outside.read_bytes() == b"precious"
