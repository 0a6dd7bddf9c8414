"""The manifests offline: what ``--dry-run`` prints (the Secret masked, no value anywhere, the image the pods
run), and the ConfigMap's room for the sdist, where a submit refuses with one line before any cluster call."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from cloudtrain.backends.kubernetes import manifests
from cloudtrain.config import load_config
from cloudtrain.packaging import build_sdist
from cloudtrain.spec import build_spec
from tests.kubernetes.conftest import REPO
from tests.kubernetes.test_jobs import ECHO_LINES, config

TOKEN = "hf_" + "Q7x9" * 8  # a value the Secret holds: never printed, never in the ConfigMap or the Job
API_KEY = "sk-" + "Zp4w" * 12  # an env: value that looks secret


def cloudtrain(*args: str, timeout: float = 300, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``cloudtrain ARGS`` in a process of its own, with ``env`` added to this one's environment."""
    command = [sys.executable, "-m", "cloudtrain", *args]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, cwd=REPO, env={**os.environ, **(env or {})}
    )


def dry_run(tmp_path, text: str, **env: str) -> dict:
    path = tmp_path / "job.yaml"
    path.write_text(text)
    result = cloudtrain("submit", "--config", str(path), "--dry-run", "-o", "json", timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert TOKEN not in result.stdout + result.stderr and API_KEY not in result.stdout + result.stderr
    found = json.loads(result.stdout)
    return found.get("request", found)


def test_secrets_and_secret_looking_env_go_in_a_masked_secret_the_pods_read_by_reference(tmp_path):
    text = config(tmp_path, replicas=2).read_text()
    text += f"secrets: {{HF_TOKEN: 'shell:MY_TOKEN'}}\nenv: {{WANDB_API_KEY: '{API_KEY}', EPOCHS: '3'}}\n"
    request = dry_run(tmp_path, text, MY_TOKEN=TOKEN)
    kinds = [m["kind"] for m in request["manifests"]]
    assert kinds == ["Secret", "ConfigMap", "Service", "Job"]
    secret, config_map, _, job = request["manifests"]
    assert secret["stringData"] == {"HF_TOKEN": "***", "WANDB_API_KEY": "***"}
    env = job["spec"]["template"]["spec"]["containers"][0]["env"]
    refs = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in env if "secretKeyRef" in e.get("valueFrom", {})}
    name = job["metadata"]["name"]
    assert refs == {
        "HF_TOKEN": {"name": name, "key": "HF_TOKEN"},
        "WANDB_API_KEY": {"name": name, "key": "WANDB_API_KEY"},
    }
    plan = json.loads(config_map["data"]["plan.json"])
    for replica in plan["replicas"]:
        assert replica["env"]["EPOCHS"] == "3"
        assert "WANDB_API_KEY" not in replica["env"] and "HF_TOKEN" not in replica["env"]
        # the contract's job description (CLUSTER_SPEC) names neither the secret env nor the reference
        assert (
            "WANDB_API_KEY" not in replica["env"]["CLUSTER_SPEC"] and "MY_TOKEN" not in replica["env"]["CLUSTER_SPEC"]
        )


def test_the_dry_run_names_the_image_each_pod_runs(tmp_path):
    text = config(tmp_path).read_text()
    request = dry_run(tmp_path, text)
    pods = request["manifests"][-1]["spec"]["template"]["spec"]["containers"]
    assert request["image"] == pods[0]["image"] == "cloudtrain.local/debian-python:bookworm"
    path = tmp_path / "job.yaml"
    path.write_text(
        text.replace("  image: cloudtrain.local/debian-python:bookworm\n", "").replace(
            "accelerator_count: 0", "accelerator_count: 1"
        )
    )
    result = cloudtrain("submit", "--config", str(path), "--dry-run", timeout=120)
    assert result.returncode == 0, result.stderr
    image = "us-docker.pkg.dev/vertex-ai/training/tf-gpu."
    assert f"\nimage: {image}" in result.stdout, result.stdout
    assert f'"image": "{image}' in result.stdout


def test_the_configmaps_room_is_one_mib_less_the_launcher_and_the_plan(tmp_path):
    spec = build_spec(load_config(config(tmp_path, replicas=4)))
    package = build_sdist(ECHO_LINES, tmp_path / "dist", name="echo_lines", version="0.1")
    room = manifests.package_room(spec, package)
    config_map = manifests.render(spec, package, jobset=False, data=b"\0" * room)[0]
    used = sum(len(v.encode()) for v in config_map["data"].values()) + room
    assert used <= manifests.CONFIGMAP_LIMIT == 1024 * 1024
    assert manifests.CONFIGMAP_LIMIT - used < 200  # the plan's hostname is measured at its longest
    assert 900_000 < room < manifests.CONFIGMAP_LIMIT - len(manifests.LAUNCHER.read_bytes())


def test_a_package_over_the_configmaps_room_is_refused_in_one_line_before_any_cluster_call(tmp_path):
    folder = tmp_path / "big"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "task.py").write_text("print('never runs')\n")
    (folder / "weights.bin").write_bytes(os.urandom(1100 * 1024))  # incompressible: the sdist > 1 MiB
    path = config(tmp_path, package=f"  path: {folder}\n  module: big.task\n")
    result = cloudtrain("submit", "--config", str(path), timeout=180, env={"KUBECONFIG": str(tmp_path / "none")})
    assert result.returncode == 2, result.stdout + result.stderr
    line = [x for x in result.stderr.splitlines() if "ConfigMap has room for" in x]
    assert line and "bytes: over the" in line[0] and "(1048576 less the launcher and the plan)" in line[0], (
        result.stderr
    )
    assert "kubeconfig" not in result.stderr and "Traceback" not in result.stderr


def test_status_reads_what_the_pods_run_back_from_the_job_or_jobset(tmp_path):
    path = config(tmp_path, replicas=4, gpus=2, extra="  provider: gke\n  cpu: '8'\n  memory: 32Gi\n")
    path.write_text(path.read_text().replace("machine:\n", "machine:\n  accelerator_type: nvidia-l4\n"))
    spec = build_spec(load_config(path))
    for jobset in (False, True):
        workload = manifests.render(spec, None, jobset=jobset)[-1]
        assert manifests.pod_facts(workload) == {
            "image": "cloudtrain.local/debian-python:bookworm",
            "accelerator": "2 × nvidia-l4",
            "machine": "kubernetes-pod (cpu 8, memory 32Gi, 2 × nvidia-l4)",
            "replicas": 4,
        }
    assert manifests.pod_facts(manifests.render(build_spec(load_config(config(tmp_path))), None, jobset=False)[-1]) == {
        "image": "cloudtrain.local/debian-python:bookworm",
        "accelerator": None,
        "machine": "kubernetes-pod",
        "replicas": 1,
    }
