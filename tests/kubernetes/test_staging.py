"""A package too big for the job's ConfigMap, offline: staged content-addressed in the staging bucket (moto's S3 in
server mode, gcp-storage-emulator), its signed URL only in the Secret, and the pod launcher's fetch with its sha256
checked against a real HTTP server (the presigned URL of moto's S3). A pod's fetch is in test_features.py (moto on
the cluster's bridge address, which the pods reach; 127.0.0.1 is each pod's own)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from cloudtrain.backends.kubernetes import launcher, manifests, staging
from cloudtrain.backends.kubernetes.backend import KubernetesBackend
from cloudtrain.config.load import load_config
from cloudtrain.errors import UsageError
from cloudtrain.packaging import BuiltPackage, build_sdist
from cloudtrain.spec import JobSpec, build_spec
from tests.kubernetes.test_jobs import config


@pytest.fixture
def gcs_host(monkeypatch):
    from tests.fakes.gcs import gcs_emulator

    with gcs_emulator("staging") as host:
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", host)
        yield host


URL = "https://bucket.s3.amazonaws.com/cloudtrain/packages/x?X-Amz-Signature=" + "f00d" * 16


def big_package(tmp_path: Path, bucket: str = "") -> tuple[JobSpec, BuiltPackage]:
    folder = tmp_path / "big"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "task.py").write_text("print('big')\n")
    (folder / "weights.bin").write_bytes(os.urandom(1100 * 1024))  # incompressible: the sdist > 1 MiB
    path = config(tmp_path, package=f"  path: {folder}\n  module: big.task\n")
    if bucket:
        path.write_text(path.read_text() + f"staging_bucket: {bucket}\n")
    spec = build_spec(load_config(path))
    return spec, build_sdist(folder, tmp_path / "dist", name="big", version="0.1")


@pytest.mark.parametrize("jobset", [False, True])
def test_a_staged_package_leaves_the_configmap_its_url_in_the_secret_only_the_plan_its_sha256(tmp_path, jobset):
    spec, package = big_package(tmp_path, "s3://my-bucket")
    objects = manifests.render(spec, package, jobset=jobset, data=b"", secrets={}, staged=URL)
    secret, config_map = objects[0], objects[1]
    assert secret["kind"] == "Secret" and secret["stringData"] == {manifests.SDIST_URL: URL}
    assert config_map["binaryData"] == {}
    plan = json.loads(config_map["data"]["plan.json"])
    assert plan["sdist"] == package.filename and plan["sdist_sha256"] == package.sha256
    for obj in objects[1:]:
        assert "X-Amz-Signature" not in json.dumps(obj), obj["kind"]
    text = json.dumps(objects[-1])
    key = {"name": secret["metadata"]["name"], "key": manifests.SDIST_URL}
    ref = {"name": manifests.SDIST_URL, "valueFrom": {"secretKeyRef": key}}
    assert json.dumps(ref) in text
    shown = KubernetesBackend().render(spec, package)  # the dry run: where it goes, the URL ***
    assert shown["package"].startswith(f"s3://my-bucket/cloudtrain/packages/{package.sha256}/{package.filename} ")
    assert shown["manifests"][0]["stringData"] == {manifests.SDIST_URL: "***"}


def test_without_a_staging_bucket_a_big_package_is_refused_in_one_line_naming_the_fix(tmp_path):
    spec, package = big_package(tmp_path)
    with pytest.raises(UsageError) as refused:
        KubernetesBackend().submit(spec, package)  # refused before any cluster call (no kubeconfig here)
    assert "ConfigMap has room for" in str(refused.value) and "set staging_bucket: s3://" in str(refused.value.hint)


def test_a_big_package_is_staged_once_in_s3_and_the_launcher_fetches_it_checking_its_sha256(aws, tmp_path):
    aws.client("s3", "us-east-1").create_bucket(Bucket="staging")
    spec, package = big_package(tmp_path, "s3://staging")
    url = staging.stage(spec, package)
    key = f"cloudtrain/packages/{package.sha256}/{package.filename}"
    head = aws.client("s3", "us-east-1").head_object(Bucket="staging", Key=key)
    assert head["ContentLength"] == package.size and "X-Amz-Expires=604800" in url
    fetched = launcher.fetch(url, package.sha256, str(tmp_path / "fetched.tar.gz"))
    assert Path(fetched).read_bytes() == package.path.read_bytes()
    s3 = aws.client("s3", "us-east-1")  # an object of that key and sha256 is not uploaded again
    s3.put_object(Bucket="staging", Key=key, Body=b"kept", Metadata={"cloudtrain-sha256": package.sha256})
    assert staging.stage(spec, package).split("?")[0] == url.split("?")[0]
    assert s3.get_object(Bucket="staging", Key=key)["Body"].read() == b"kept"
    with pytest.raises(SystemExit, match=f"the package fetched has sha256 {hashlib.sha256(b'kept').hexdigest()}, "):
        launcher.fetch(url, package.sha256, str(tmp_path / "wrong.tar.gz"))  # not what the plan names: not installed
    gone = url.replace(package.filename, "other.tar.gz")
    with pytest.raises(SystemExit, match=r"cannot fetch the package from http://\S+/other.tar.gz: HTTP Error 404"):
        launcher.fetch(gone, package.sha256, str(tmp_path / "x"))


def test_a_gs_staging_bucket_whose_credentials_cannot_sign_is_refused_in_one_line_naming_the_fixes(gcs_host, tmp_path):
    spec, package = big_package(tmp_path, "gs://staging")
    with pytest.raises(UsageError) as refused:
        staging.stage(spec, package)  # the emulator's anonymous credentials cannot sign, as a user's login cannot
    assert "too big for its ConfigMap, and it cannot be staged in gs://staging/cloudtrain/packages/" in str(
        refused.value
    )
    assert "service account's key" in str(refused.value.hint) and "s3://" in str(refused.value.hint)
