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
