"""Local runs read their channels where the cloud would: a linked folder, or a bucket downloaded once.

The buckets are real servers (moto for S3, gcp-storage-emulator for Cloud Storage) reached
through the same client libraries a user's machine uses.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from types import MappingProxyType

import pytest

from cloudtrain.backends.base import JobState
from cloudtrain.backends.local.backend import LocalBackend
from cloudtrain.spec import DataChannel
from tests.data.conftest import make_folder

from .conftest import make_spec

pytestmark = [pytest.mark.slow, pytest.mark.server]

# Prints, for every SM_CHANNEL_* it gets, the folder and what it holds; with TRY_WRITE, writes into it.
TASK = """
import json, os
seen = {}
for key in sorted(k for k in os.environ if k.startswith("SM_CHANNEL_")):
    path = os.environ[key]
    files = {os.path.relpath(os.path.join(d, f), path): open(os.path.join(d, f)).read()
             for d, _, names in os.walk(path, followlinks=True) for f in names}
    writable = None
    if os.environ.get("TRY_WRITE"):
        try:
            open(os.path.join(path, "written-by-the-job"), "w").close()
            writable = True
        except OSError:
            writable = False
    seen[key] = {"path": path, "files": files, "writable": writable}
print("channels " + json.dumps(seen, sort_keys=True))
"""


@pytest.fixture(scope="module")
def datapkg(tmp_path_factory):
    from cloudtrain.packaging import build_sdist

    root = tmp_path_factory.mktemp("datapkg")
    (root / "datapkg").mkdir()
    (root / "datapkg" / "__init__.py").write_text("")
    (root / "datapkg" / "task.py").write_text(TASK)
    return build_sdist(root / "datapkg", root / "dist", name="datapkg", version="0.1")


def _run(tmp_path, cache, datapkg, cloud: str, env=None, replicas: int = 1, **channels: DataChannel) -> dict:
    """What the first replica saw; with several, replica name → what it saw."""
    spec = make_spec(tmp_path, cloud=cloud, module="datapkg.task", env=env, replica_count=replicas)
    spec = dataclasses.replace(spec, channels=MappingProxyType(channels))
    job = LocalBackend(cache_root=cache, gpu_count=lambda: 0).submit(spec, datapkg)
    lines = list(job.logs(follow=True))
    assert job.wait().state is JobState.SUCCEEDED, [line.message for line in lines]
    seen = {
        line.replica: json.loads(line.message[len("channels ") :])
        for line in lines
        if line.message.startswith("channels ")
    }
    return seen if replicas > 1 else next(iter(seen.values()))


def _put(store, tmp_path, key: str, text: str) -> None:
    (tmp_path / "obj").write_text(text)
    store.upload(tmp_path / "obj", key, "-")


def test_s3_channel_runs_under_the_sagemaker_contract(s3_store, datapkg, shared_cache, tmp_path, caplog):
    _put(s3_store, tmp_path, "digits/train/a.npz", "A")
    _put(s3_store, tmp_path, "digits/train/sub/b.tfrecord", "B")
    channel = DataChannel("train", "s3://staging/digits/train", "FastFile")
    seen = _run(tmp_path / "one", shared_cache, datapkg, "sagemaker", train=channel)
    got = seen["SM_CHANNEL_TRAIN"]
    assert got["path"] == str(tmp_path / "one" / "out" / "algo-1" / "input" / "data" / "train")
    assert got["files"] == {"a.npz": "A", "sub/b.tfrecord": "B"}
    idc = json.loads((tmp_path / "one/out/algo-1/input/config/inputdataconfig.json").read_text())
    assert idc["train"]["TrainingInputMode"] == "FastFile"

    caplog.set_level(logging.INFO, logger="cloudtrain")
    caplog.clear()  # only the second run's records: whether the first one's were kept depends on the logger's level
    again = _run(tmp_path / "two", shared_cache, datapkg, "sagemaker", train=channel)
    assert again["SM_CHANNEL_TRAIN"]["files"] == got["files"]
    assert any("from the cache" in r.getMessage() for r in caplog.records)  # downloaded once
    # the data is not downloaded again (an environment build's own "downloading" phase is not the data's)
    assert not any(r.getMessage().startswith("data ") and "downloading" in r.getMessage() for r in caplog.records)


def test_gcs_channel_runs_under_the_vertex_contract(gcs_store, datapkg, shared_cache, tmp_path):
    _put(gcs_store, tmp_path, "digits/train/a.npz", "G")
    seen = _run(
        tmp_path / "one",
        shared_cache,
        datapkg,
        "vertex",
        {"TRY_WRITE": "1"},
        train=DataChannel("train", "gs://staging/digits/train"),
    )
    got = seen["SM_CHANNEL_TRAIN"]
    assert got["path"] == str(tmp_path / "one" / "out" / "local-run" / "data" / "train")
    assert got["files"] == {"a.npz": "G"}
    assert not got["writable"] or os.geteuid() == 0  # the cached copy is read-only (root writes anyway…)
    again = _run(
        tmp_path / "two", shared_cache, datapkg, "vertex", train=DataChannel("train", "gs://staging/digits/train")
    )
    assert again["SM_CHANNEL_TRAIN"]["files"] == {"a.npz": "G"}  # … and then the changed copy is not reused


def test_local_folder_is_linked_under_both_contracts(datapkg, shared_cache, tmp_path):
    folder = make_folder(tmp_path / "mine", {"x.npz": b"X"})
    for cloud, where in (("vertex", "out/local-run/data/Val"), ("sagemaker", "out/algo-1/input/data/Val")):
        seen = _run(tmp_path / cloud, shared_cache, datapkg, cloud, Val=DataChannel("Val", str(folder)))
        assert seen["SM_CHANNEL_VAL"]["path"] == str(tmp_path / cloud / where)
        assert seen["SM_CHANNEL_VAL"]["files"]["x.npz"] == "X"


def test_sharded_by_s3_key_gives_each_host_its_share(datapkg, shared_cache, tmp_path):
    folder = make_folder(tmp_path / "mine", {f"part-{i}.tfrecord": str(i).encode() for i in range(5)})
    channel = DataChannel("train", str(folder), distribution="ShardedByS3Key")
    seen = _run(tmp_path / "run", shared_cache, datapkg, "sagemaker", replicas=2, train=channel)
    shares = {host: sorted(got["SM_CHANNEL_TRAIN"]["files"]) for host, got in seen.items()}
    assert shares == {
        "algo-1": ["part-0.tfrecord", "part-2.tfrecord", "part-4.tfrecord"],
        "algo-2": ["part-1.tfrecord", "part-3.tfrecord"],
    }
    assert sorted((folder).iterdir()) == sorted(folder.glob("part-*"))  # the user's folder is untouched
