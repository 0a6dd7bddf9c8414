"""The manifests ``submit`` sends, checked by the session's API server against its own schema and admission
(``dryRun=All``: nothing is created), for configs that vary what a user varies."""

from __future__ import annotations

import subprocess

import pytest

from cloudtrain.backends import get_backend
from cloudtrain.backends.kubernetes.api import connect
from cloudtrain.backends.kubernetes.manifests import render
from cloudtrain.config import load_config
from cloudtrain.packaging import build_sdist
from cloudtrain.spec import build_spec
from tests.kubernetes.test_jobs import ECHO_LINES, config

pytestmark = [pytest.mark.slow, pytest.mark.server]

GKE_SPOT_L4 = """\
  context: ""
  provider: gke
  cpu: "1500m"
  memory: 3Gi
  node_selector: {pool: train}
  tolerations: [{key: dedicated, operator: Equal, value: ml, effect: NoSchedule}]
"""


@pytest.mark.parametrize("jobset", [False, True])
@pytest.mark.parametrize(
    ("replicas", "gpus", "extra", "namespace"),
    [(1, 0, "", "default"), (3, 2, GKE_SPOT_L4, "ml-team")],
)
def test_the_api_server_accepts_the_manifests(kube, tmp_path, jobset, replicas, gpus, extra, namespace):
    if namespace != "default":
        subprocess.run(["kubectl", "--kubeconfig", str(kube), "create", "namespace", namespace], capture_output=True)
    path = config(tmp_path, replicas=replicas, gpus=gpus, extra=extra, namespace=namespace)
    text = path.read_text()
    if extra:
        text = text.replace("machine:\n", "spot: {enabled: true}\nmachine:\n  accelerator_type: nvidia-l4\n")
        path.write_text(text)
    spec = build_spec(load_config(path))
    package = build_sdist(ECHO_LINES, tmp_path / "dist", name="echo_lines", version="0.1")
    backend = get_backend("kubernetes")
    backend.validate(connect("", ""), spec, package, jobset=jobset)  # type: ignore[attr-defined]
    objects = render(spec, package, jobset=jobset, data=package.path.read_bytes())
    workload = objects[-1]
    job = workload["spec"]["replicatedJobs"][0]["template"]["spec"] if jobset else workload["spec"]
    assert (job["completions"], job["parallelism"], job["completionMode"]) == (replicas, replicas, "Indexed")
    pod = job["template"]["spec"]
    assert all(o["metadata"]["namespace"] == namespace for o in objects)
    limits = pod["containers"][0].get("resources", {}).get("limits", {})
    assert limits.get("nvidia.com/gpu") == (str(gpus) if gpus else None)
    if extra:
        assert pod["nodeSelector"] == {
            "pool": "train",
            "cloud.google.com/gke-accelerator": "nvidia-l4",
            "cloud.google.com/gke-spot": "true",
        }
        assert pod["containers"][0]["resources"]["requests"] == {"cpu": "1500m", "memory": "3Gi"}
        assert {
            "key": "cloud.google.com/gke-spot",
            "operator": "Equal",
            "value": "true",
            "effect": "NoSchedule",
        } in pod["tolerations"]
