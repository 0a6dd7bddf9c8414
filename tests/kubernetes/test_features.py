"""The manifests and refusals on the session's real cluster: every kind we produce validated by the API
server itself (``dryRun=All``, strict fields), the Secret a pod reads and no manifest shows, the ConfigMap's
exact limit, and one line for RBAC (the docs' Role checked), quota and an image that cannot be pulled."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from cloudtrain.backends.kubernetes import manifests
from cloudtrain.backends.kubernetes.api import connect
from cloudtrain.backends.kubernetes.backend import KubernetesBackend
from cloudtrain.config.load import load_config
from cloudtrain.errors import UsageError
from cloudtrain.packaging import build_sdist
from cloudtrain.spec import build_spec
from tests.kubernetes.conftest import REPO
from tests.kubernetes.test_jobs import ECHO_LINES, config, kubectl
from tests.kubernetes.test_manifests import cloudtrain

pytestmark = [pytest.mark.slow, pytest.mark.server]

TOKEN = "hf_" + "Mk3v" * 8


def namespace(kube: Path, name: str) -> str:
    subprocess.run(["kubectl", "--kubeconfig", str(kube), "create", "namespace", name], capture_output=True)
    return name


#: name → (kubernetes: lines, top-level lines, replicas, GPUs): what a user's configs vary.
CASES = {
    "one-replica": ("", "", 1, 0),
    "four-gke-gpu-spot": ("  provider: gke\n", "spot: {enabled: true}\n", 4, 2),
    "four-eks-gpu-spot": ("  provider: eks\n", "spot: {enabled: true}\n", 4, 1),
    "selectors-sa-namespace": (
        "  namespace: ml\n  service_account: trainer\n  node_selector: {pool: train}\n  cpu: '2'\n  memory: 4Gi\n"
        "  tolerations: [{key: dedicated, value: ml, effect: NoSchedule}, {key: gpu, operator: Exists}]\n",
        "",
        2,
        0,
    ),
    "secrets": ("", f"secrets: {{HF_TOKEN: 'shell:K8S_TEST_TOKEN'}}\nenv: {{API_TOKEN: '{TOKEN}', N: '1'}}\n", 2, 0),
}


def gpu_type(section: str) -> str:
    """A case's GPU as its provider's node label names it (EKS: Karpenter's; else GKE's)."""
    return "a100" if "eks" in section else "nvidia-tesla-a100"


@pytest.mark.parametrize("jobset", [False, True], ids=["job", "jobset"])
@pytest.mark.parametrize("case", CASES)
def test_every_manifest_is_what_the_api_server_accepts(kube, tmp_path, monkeypatch, case, jobset):
    section, top, replicas, gpus = CASES[case]
    monkeypatch.setenv("K8S_TEST_TOKEN", TOKEN)
    path = config(tmp_path, replicas=replicas, gpus=gpus)
    text = path.read_text().replace("  namespace: default\n", "")
    text = text.replace("kubernetes:\n", "kubernetes:\n" + (section or "  namespace: default\n"), 1)
    if gpus:
        text = text.replace("machine:\n", f"machine:\n  accelerator_type: {gpu_type(section)}\n")
    path.write_text(top + text)
    namespace(kube, "ml")
    spec = build_spec(load_config(path))
    package = build_sdist(ECHO_LINES, tmp_path / "dist", name="echo_lines", version="0.1")
    mine = manifests.render(spec, package, jobset=jobset, data=package.path.read_bytes(), secrets={"HF_TOKEN": TOKEN})
    made = KubernetesBackend().validate(connect(str(kube), ""), spec, package, jobset=jobset)
    assert [m["kind"] for m in made] == [m["kind"] for m in mine]
    workload, sent = made[-1], mine[-1]
    if jobset:
        workload = workload["spec"]["replicatedJobs"][0]["template"]
        sent = sent["spec"]["replicatedJobs"][0]["template"]
    pod, ours = workload["spec"]["template"]["spec"], sent["spec"]["template"]["spec"]
    for key in ("nodeSelector", "tolerations", "serviceAccountName", "subdomain"):
        assert pod.get(key) == ours.get(key), key  # kept as sent: nothing dropped or defaulted away
    assert pod["containers"][0]["image"] == "cloudtrain.local/debian-python:bookworm"
    assert pod["containers"][0]["resources"] == ours["containers"][0]["resources"]
    assert workload["spec"]["completions"] == replicas
    if case == "secrets":
        assert made[0]["kind"] == "Secret" and set(made[0]["data"]) == {"HF_TOKEN", "API_TOKEN"}
        assert TOKEN not in json.dumps(made[1:])


def test_the_configmap_holds_the_room_measured_and_the_api_server_refuses_one_byte_over_1_mib(kube, tmp_path):
    spec = build_spec(load_config(config(tmp_path, replicas=2)))
    package = build_sdist(ECHO_LINES, tmp_path / "dist", name="echo_lines", version="0.1")
    backend, cluster = KubernetesBackend(), connect(str(kube), "")
    room = manifests.package_room(spec, package)
    text = sum(len(v.encode()) for v in manifests.render(spec, package, jobset=False)[0]["data"].values())
    exact = manifests.CONFIGMAP_LIMIT - text  # what the server counts: data and binaryData (decoded) together
    assert 0 <= exact - room < 200
    for size in (room, exact):
        backend._create(cluster, manifests.render(spec, package, jobset=False, data=b"\1" * size)[0], dry_run="All")
    with pytest.raises(UsageError, match="may not be more than 1048576 bytes"):
        backend._create(
            cluster, manifests.render(spec, package, jobset=False, data=b"\1" * (exact + 1))[0], dry_run="All"
        )


SECRET_SCRIPT = """\
import hashlib, os
print("token sha256", hashlib.sha256(os.environ["HF_TOKEN"].encode()).hexdigest(), flush=True)
print("api sha256", hashlib.sha256(os.environ["API_TOKEN"].encode()).hexdigest(), flush=True)
"""


def test_a_pod_reads_its_secrets_which_no_manifest_shows_and_which_go_with_the_job(kube, tmp_path):
    folder = tmp_path / "script"
    folder.mkdir()
    (folder / "train.py").write_text(SECRET_SCRIPT)
    api_token = "sk-" + "Wq8e" * 12
    path = config(tmp_path, package=f"  path: {folder}\n  script: train.py\n", extra="  jobset: 'no'\n")
    path.write_text(
        path.read_text() + f"secrets: {{HF_TOKEN: 'shell:K8S_TEST_TOKEN'}}\nenv: {{API_TOKEN: '{api_token}'}}\n"
    )
    result = cloudtrain("submit", "--config", str(path), env={"K8S_TEST_TOKEN": TOKEN})
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert f"token sha256 {hashlib.sha256(TOKEN.encode()).hexdigest()}" in output
    assert f"api sha256 {hashlib.sha256(api_token.encode()).hexdigest()}" in output
    assert TOKEN not in output and api_token not in output
    (job,) = [j.split("/")[-1] for j in kubectl(kube, "get", "jobs", "-o", "name").split()]
    for kind in ("job", "configmap", "pods"):
        shown = kubectl(
            kube, "get", kind, *([job] if kind != "pods" else ["-l", f"{manifests.RUN_LABEL}={job}"]), "-o", "yaml"
        )
        assert TOKEN not in shown and api_token not in shown, kind
    secret = json.loads(kubectl(kube, "get", "secret", job, "-o", "json"))
    assert [o["kind"] for o in secret["metadata"]["ownerReferences"]] == ["Job"]
    kubectl(kube, "delete", "job", job, "--cascade=foreground", "--wait=true", "--timeout=60s")
    deadline = time.monotonic() + 60
    while kubectl(kube, "get", "secrets", "-l", f"{manifests.RUN_LABEL}={job}", "-o", "name").strip():
        assert time.monotonic() < deadline, "the Secret outlived its Job"
        time.sleep(1)


PRINTS_SECRETS = """\
import os
print("the token is", os.environ["HF_TOKEN"], flush=True)
print("the key is", os.environ["API_TOKEN"], "and it ends", flush=True)
"""


def test_a_pod_printing_its_secrets_shows_them_masked_at_submit_and_in_logs_reattached_in_a_new_process(kube, tmp_path):
    folder = tmp_path / "script"
    folder.mkdir()
    (folder / "train.py").write_text(PRINTS_SECRETS)
    token, api_token = "plain" + "Qx7r" * 6, "sk-" + "Vn2k" * 12  # the token has no credential's form of its own
    path = config(tmp_path, package=f"  path: {folder}\n  script: train.py\n", extra="  jobset: 'no'\n")
    path.write_text(
        path.read_text() + f"secrets: {{HF_TOKEN: 'shell:K8S_TEST_TOKEN'}}\nenv: {{API_TOKEN: '{api_token}'}}\n"
    )
    submit = cloudtrain("submit", "--config", str(path), env={"K8S_TEST_TOKEN": token})
    output = submit.stdout + submit.stderr
    assert submit.returncode == 0, output
    assert "the token is ***" in output and "the key is *** and it ends" in output, output
    assert token not in output and api_token not in output
    (job,) = [j.split("/")[-1] for j in kubectl(kube, "get", "jobs", "-o", "name").split()]
    assert token in kubectl(kube, "logs", f"job/{job}")  # the pod did print it: cloudtrain masked it
    logs = cloudtrain("logs", job)  # a new process: the values come from the job's Secret
    assert logs.returncode == 0, logs.stdout + logs.stderr
    assert "the token is ***" in logs.stdout and "the key is *** and it ends" in logs.stdout, logs.stdout
    assert token not in logs.stdout + logs.stderr and api_token not in logs.stdout + logs.stderr


def test_a_package_too_big_for_its_configmap_runs_from_the_staging_bucket_fetched_by_its_pods(kube, tmp_path):
    from moto.server import ThreadedMotoServer

    from tests.fakes.aws import env_for

    gateway = kubectl(kube, "get", "node", "node-a", "-o", "jsonpath={.status.addresses[0].address}").strip()
    server = ThreadedMotoServer(ip_address=gateway, port=0, verbose=False)  # on the pods' bridge: they reach it
    server.start()
    try:
        host, port = server.get_host_and_port()
        env = env_for(f"http://{host}:{port}")
        import boto3

        keys = {"aws_access_key_id": env["AWS_ACCESS_KEY_ID"], "aws_secret_access_key": env["AWS_SECRET_ACCESS_KEY"]}
        s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], region_name="us-east-1", **keys)
        s3.create_bucket(Bucket="stg")
        folder = tmp_path / "big"
        folder.mkdir()
        (folder / "__init__.py").write_text("")
        (folder / "task.py").write_text("import os\nprint('big package ran', os.path.getsize(__file__), flush=True)\n")
        (folder / "weights.bin").write_bytes(os.urandom(1100 * 1024))  # incompressible: the sdist > 1 MiB
        path = config(tmp_path, package=f"  path: {folder}\n  module: big.task\n", extra="  jobset: 'no'\n")
        path.write_text(path.read_text() + "staging_bucket: s3://stg\n")
        result = cloudtrain("submit", "--config", str(path), env=env)
        output = result.stdout + result.stderr
        assert result.returncode == 0, output
        assert "big package ran" in output
        (job,) = [j.split("/")[-1] for j in kubectl(kube, "get", "jobs", "-o", "name").split()]
        shown = kubectl(kube, "get", "job,configmap", job, "-o", "yaml")
        assert "X-Amz-Signature" not in shown and manifests.SDIST_URL in shown  # the reference only
    finally:
        server.stop()


def docs_role(namespace: str) -> str:
    """The Role docs/how-to/kubernetes.md tells a user to ask for, in ``namespace``."""
    text = (REPO / "docs" / "how-to" / "kubernetes.md").read_text()
    (role,) = re.findall(r"```yaml\n(apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\n.*?)```", text, re.S)
    return role.replace("namespace: ml", f"namespace: {namespace}")


def user_kubeconfig(kube: Path, tmp_path: Path, account: str, ns: str) -> Path:
    """A kubeconfig of service account ``account`` of ``ns`` (what an RBAC-limited user holds)."""
    kubectl(kube, "-n", ns, "create", "serviceaccount", account)
    token = kubectl(kube, "-n", ns, "create", "token", account).strip()
    path = tmp_path / f"{account}.kubeconfig"
    path.write_text(kube.read_text())
    for command in (
        ["config", "set-credentials", account, f"--token={token}"],
        ["config", "set-context", "--current", f"--user={account}", f"--namespace={ns}"],
    ):
        subprocess.run(["kubectl", "--kubeconfig", str(path), *command], check=True, capture_output=True)
    return path


def test_rbac_refuses_in_one_line_and_the_docs_role_is_enough_to_run_a_job(kube, tmp_path):
    ns = namespace(kube, "rbac")
    user = user_kubeconfig(kube, tmp_path, "trainer", ns)
    lines = ["rbac ok"]
    path = config(tmp_path, namespace=ns, args=["--line", lines[0]])
    refused = cloudtrain("submit", "--config", str(path), env={"KUBECONFIG": str(user)})
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert re.search(r"the cluster's RBAC does not let you create the ConfigMap \S+ in namespace " + ns, refused.stderr)
    assert "forbidden" in refused.stderr and "Traceback" not in refused.stderr
    (tmp_path / "role.yaml").write_text(docs_role(ns))
    kubectl(kube, "apply", "-f", str(tmp_path / "role.yaml"))
    kubectl(
        kube, "-n", ns, "create", "rolebinding", "trainer", "--role=cloudtrain-user", f"--serviceaccount={ns}:trainer"
    )
    ran = cloudtrain("submit", "--config", str(path), env={"KUBECONFIG": str(user)})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "rbac ok" in ran.stdout + ran.stderr


def test_a_namespaces_quota_refuses_the_pods_in_one_line_with_its_reason(kube, tmp_path):
    ns = namespace(kube, "quota")
    (tmp_path / "quota.yaml").write_text(
        f"apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: small, namespace: {ns}}}\n"
        "spec: {hard: {requests.cpu: '1', requests.memory: 1Gi}}\n"
    )
    kubectl(kube, "apply", "-f", str(tmp_path / "quota.yaml"))
    path = config(tmp_path, namespace=ns, extra="  cpu: '2'\n  memory: 512Mi\n")
    result = cloudtrain("submit", "--config", str(path))
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "the cluster cannot run this job: FailedCreate:" in output and "exceeded quota: small" in output, output
    assert "requested: requests.cpu=2" in output, output


def test_an_image_that_cannot_be_pulled_fails_in_one_line_with_the_kubelets_reason(kube, tmp_path):
    path = config(tmp_path)
    path.write_text(
        path.read_text().replace("cloudtrain.local/debian-python:bookworm", "cloudtrain.local/no-such-image:1")
    )
    result = cloudtrain("submit", "--config", str(path))
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert re.search(r"(ErrImagePull|ImagePullBackOff): .*no-such-image", output), output
    assert "Traceback" not in output


def test_a_sweep_runs_its_trials_as_jobs_on_the_cluster(kube, tmp_path):
    path = config(
        tmp_path, package=f"  path: {REPO / 'tests' / 'packages' / 'sweep_score'}\n  module: sweep_score.task\n"
    )
    path.write_text(
        path.read_text()
        + "sweep:\n  metric: score\n  max_trials: 2\n  algorithm: random\n  seed: 5\n"
        + "  params:\n    lr: {min: 0.0001, max: 1.0, scale: log}\n"
    )
    done = cloudtrain("submit", "--config", str(path), timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    sweep_id = re.search(r"Sweep (\S+) created", output) or re.search(r"\b(kube-\S+?)-t000\b", output)
    assert sweep_id, output
    found = cloudtrain("sweep", "results", sweep_id.group(1), "-o", "json")
    assert found.returncode == 0, found.stderr
    table = json.loads(found.stdout)
    assert len(table["trials"]) == 2, table
    for trial in table["trials"]:
        assert trial["state"] == "COMPLETE", trial
        assert trial["value"] == pytest.approx(-((math.log10(trial["params"]["lr"]) + 2) ** 2))
    # the cluster's default: a JobSet a trial (its child Job carries JobSet's labels, not ours)
    jobs = kubectl(kube, "get", "jobsets", "-l", "app.kubernetes.io/managed-by=cloudtrain", "-o", "name").split()
    assert sorted(j.rsplit("-", 1)[-1] for j in jobs) == ["t000", "t001"], jobs
    listed = cloudtrain("list", "--backend", "kubernetes", "--region", "current", "-o", "json")
    assert listed.returncode == 0, listed.stderr
    rows = {j["job_id"]: j for j in json.loads(listed.stdout)}
    assert sorted(rows) == sorted(j.split("/")[-1] for j in jobs), rows
    for row in rows.values():
        assert row["state"] == "SUCCEEDED", row
        assert row["details"]["image"] == "cloudtrain.local/debian-python:bookworm" and row["details"]["replicas"] == 1
        assert row["details"]["machine"] == "kubernetes-pod" and row["details"]["context"] == "current"
