"""The kubernetes: section offline: what the dry run prints, and the one-line refusals (exit 2), no cluster."""

from __future__ import annotations

import json
import re

import pytest

from cloudtrain.backends.kubernetes.backend import KubernetesBackend
from cloudtrain.config.load import load_config
from cloudtrain.errors import ConfigError
from cloudtrain.packaging import build_sdist
from cloudtrain.spec import build_spec
from tests.kubernetes.test_jobs import cloudtrain, config


@pytest.mark.parametrize(
    ("extra", "top", "words"),
    [
        (
            "",
            "region: us-central1\n",
            "region is not a Kubernetes setting — remove region: the cluster is kubernetes.context",
        ),
        ("", "service_account: sa@p.iam.gserviceaccount.com\n", "use kubernetes.service_account"),
        ("  namespace_typo: x\n", "", "namespace_typo"),
        ("  volumes:\n    data: {emptyDir: {}}\n", "", "mount path 'data' must be absolute"),
        ("  jobset: maybe\n", "", "jobset"),
    ],
)
def test_what_a_kubernetes_job_does_not_take_is_one_line_exit_2(tmp_path, extra, top, words):
    path = config(tmp_path)
    text = path.read_text()
    if extra.startswith("  volumes:"):
        text = text.replace("  volumes:\n", extra, 1)
    elif extra:
        text = text.replace("kubernetes:\n", f"kubernetes:\n{extra}", 1)
    path.write_text(top + text)
    result = cloudtrain("submit", "--config", str(path), "--dry-run", timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert words in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_the_dry_run_prints_the_manifests_for_gke_gpus_and_spot(tmp_path):
    path = config(tmp_path, replicas=3, gpus=4)
    text = path.read_text().replace("kubernetes:\n", "kubernetes:\n  context: gke_proj_us-central1-a_train\n", 1)
    path.write_text(
        "spot: {enabled: true}\n" + text.replace("machine:\n", "machine:\n  accelerator_type: nvidia-tesla-a100\n")
    )
    result = cloudtrain("submit", "--config", str(path), "--dry-run", "-o", "json", timeout=120)
    assert result.returncode == 0, result.stderr
    request = json.loads(result.stdout)
    request = request.get("request", request)
    kinds = [m["kind"] for m in request["manifests"]]
    assert kinds == ["ConfigMap", "Service", "Job"]
    pod = request["manifests"][2]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {
        "cloud.google.com/gke-accelerator": "nvidia-tesla-a100",
        "cloud.google.com/gke-spot": "true",
    }
    assert pod["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": "4"}
    assert request["manifests"][2]["spec"]["completions"] == 3


@pytest.mark.parametrize(
    ("kubernetes", "accelerator", "words"),
    [
        (
            "  provider: gke\n",
            "A100",
            "'A100' is not a GPU node label of GKE (cloud.google.com/gke-accelerator) — "
            "write accelerator_type: nvidia-tesla-a100",
        ),
        ("  provider: gke\n", "NVIDIA_L4", "write accelerator_type: nvidia-l4"),
        (
            "  provider: eks\n",
            "nvidia-tesla-t4",
            "'nvidia-tesla-t4' is not a GPU node label of EKS "
            "(karpenter.k8s.aws/instance-gpu-name) — write accelerator_type: t4",
        ),
        ("  provider: eks\n", "Tesla", "use Karpenter's name, e.g. t4, a10g"),
        (
            "",
            "nvidia-l4",
            "machine.accelerator_type: cloudtrain knows the GPU and spot node labels of GKE and EKS only",
        ),
    ],
)
def test_a_gpu_type_the_providers_node_labels_do_not_name_is_one_line_exit_2(tmp_path, kubernetes, accelerator, words):
    path = config(tmp_path, gpus=1)
    text = path.read_text().replace("kubernetes:\n", f"kubernetes:\n{kubernetes}", 1)
    path.write_text(text.replace("machine:\n", f"machine:\n  accelerator_type: {accelerator}\n"))
    result = cloudtrain("submit", "--config", str(path), "--dry-run", timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert words in result.stderr, result.stderr
    assert len([line for line in result.stderr.splitlines() if line.startswith("error:")]) == 1


def test_spot_on_a_cluster_of_unknown_labels_is_refused_and_on_eks_selects_karpenters_spot_nodes(tmp_path):
    path = config(tmp_path)
    path.write_text("spot: {enabled: true}\n" + path.read_text())
    refused = cloudtrain("submit", "--config", str(path), "--dry-run", timeout=120)
    assert refused.returncode == 2 and "spot: cloudtrain knows the GPU and spot node labels" in refused.stderr
    path.write_text(
        path.read_text().replace("kubernetes:\n", "kubernetes:\n  context: arn:aws:eks:us-east-1:1:cluster/t\n")
    )
    shown = cloudtrain("submit", "--config", str(path), "--dry-run", "-o", "json", timeout=120)
    assert shown.returncode == 0, shown.stderr
    pod = json.loads(shown.stdout)["request"]["manifests"][-1]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"karpenter.sh/capacity-type": "spot"} and "tolerations" not in pod


@pytest.mark.parametrize(
    ("backend", "output_dir", "refused"),
    [
        ("kubernetes", "s3://my-bucket/out", None),  # EKS pods (IRSA) write through TensorFlow's S3 filesystem
        ("kubernetes", "gs://my-bucket/out", None),  # GKE pods (Workload Identity) through its GCS one
        ("sagemaker", "gs://my-bucket/out", "gs://my-bucket/out is a Vertex AI bucket; SageMaker cannot use it"),
        ("vertex", "s3://my-bucket/out", "s3://my-bucket/out is a SageMaker bucket; Vertex AI cannot use it"),
    ],
)
def test_a_kubernetes_job_writes_its_outputs_to_either_clouds_bucket_a_managed_one_to_its_own(
    tmp_path, backend, output_dir, refused
):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "task.py").write_text("print('hi')\n")
    path = tmp_path / "job.yaml"  # no kubernetes: section: its defaults
    path.write_text(
        f"name: buckets\nbackend: {backend}\npackage:\n  path: {tmp_path / 'pkg'}\n  module: pkg.task\n"
        f"output_dir: {output_dir}\n"
    )
    if refused:
        with pytest.raises(ConfigError, match=re.escape(refused)):
            load_config(path)
        return
    spec = build_spec(load_config(path))
    assert spec.output_dir == output_dir
    package = build_sdist(tmp_path / "pkg", tmp_path / "dist", name="pkg", version="0.1")
    plan = json.loads(KubernetesBackend().render(spec, package)["manifests"][0]["data"]["plan.json"])
    assert plan["replicas"][0]["env"]["AIP_MODEL_DIR"] == f"{output_dir}/model/"
