"""The kubernetes: section offline: what the dry run prints, and the one-line refusals (exit 2), no cluster."""

from __future__ import annotations

import json

import pytest

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
