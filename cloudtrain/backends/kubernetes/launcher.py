"""One replica of a cloudtrain job in a Kubernetes pod: the contract from ``JOB_COMPLETION_INDEX``, then the job.

Runs in the pod with the image's Python (>= 3.10), the standard library only; it reaches the pod with the
package in the job's ConfigMap, mounted at ``/cloudtrain``. ``python /cloudtrain/launcher.py``:

1. replica ``JOB_COMPLETION_INDEX`` (an indexed Job's, or a JobSet's child Job's) takes its plan from
   ``/cloudtrain/plan.json``: its variables (the contract's model, checkpoint and TensorBoard folders),
   and ``TF_CONFIG`` / ``CLUSTER_SPEC`` whose addresses are the replicas' stable DNS names under the
   headless Service (``<pod hostname>.<subdomain>:<port>``; replica 0 is the chief);
2. the sdist is unpacked and put on ``PYTHONPATH``; its declared requirements are installed with pip
   where the image has pip (a prebuilt TensorFlow image does);
3. the command runs with those variables; SIGTERM (a deleted or preempted pod) reaches it, so it can save.
"""

import json
import os
import signal
import subprocess
import sys
import tarfile
from typing import Any

HERE = "/cloudtrain"


def with_addresses(env: dict[str, str], addresses: list[str]) -> dict[str, str]:
    """TF_CONFIG / CLUSTER_SPEC with the replicas' DNS names (chief = replica 0, workers after)."""
    env = dict(env)
    if "TF_CONFIG" in env:
        tf = json.loads(env["TF_CONFIG"])
        tf["cluster"] = {"chief": addresses[:1], "worker": addresses[1:]}
        env["TF_CONFIG"] = json.dumps(tf)
    if "CLUSTER_SPEC" in env:
        spec = json.loads(env["CLUSTER_SPEC"])
        spec["cluster"] = {"workerpool0": addresses[:1], "workerpool1": addresses[1:]}
        env["CLUSTER_SPEC"] = json.dumps(spec)
    return env


def addresses(plan: dict[str, Any], count: int) -> list[str]:
    """Each replica's ``host:port``: its pod's hostname under the subdomain (the headless Service)."""
    subdomain, port = os.environ.get("CLOUDTRAIN_SUBDOMAIN", ""), plan["port"]
    hosts = [plan["hostname"].replace("{index}", str(i)) for i in range(count)]
    return [f"{h}.{subdomain}:{port}" if subdomain else f"{h}:{port}" for h in hosts]


def unpack(sdist: str, into: str) -> tuple[str, list[str]]:
    """The sdist's source folder, and its ``Requires-Dist`` lines."""
    with tarfile.open(sdist) as tar:
        tar.extractall(into, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(into)
    (top,) = [os.path.join(into, d) for d in os.listdir(into)]
    requires: list[str] = []
    info = os.path.join(top, "PKG-INFO")
    if os.path.exists(info):
        with open(info, encoding="utf-8") as f:
            requires = [line.split(":", 1)[1].strip() for line in f if line.startswith("Requires-Dist:")]
    return top, [r for r in requires if "extra ==" not in r]


def main() -> int:
    with open(os.path.join(HERE, "plan.json")) as f:
        plan = json.load(f)
    index = int(os.environ.get("JOB_COMPLETION_INDEX", "0"))
    count = len(plan["replicas"])
    replica = plan["replicas"][index]
    env = {**os.environ, **replica["env"]}
    if count > 1:
        env = with_addresses(env, addresses(plan, count))
    work = f"/tmp/cloudtrain-{index}"
    os.makedirs(work, exist_ok=True)
    argv = list(replica["argv"])
    if plan.get("sdist"):
        src, requires = unpack(os.path.join(HERE, plan["sdist"]), os.path.join(work, "src"))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)
        argv = [a.replace("{source}", src) for a in argv]
        if requires:
            has_pip = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode == 0
            if has_pip:
                subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *requires], check=True)
            else:
                print(f"cloudtrain: no pip in the image; not installed: {', '.join(requires)}", flush=True)
    for folder in replica.get("dirs", []):
        if folder.startswith("/"):
            os.makedirs(folder, exist_ok=True)
    print(f"cloudtrain: replica {index} ({replica['name']}) on {os.environ.get('CLOUDTRAIN_NODE', '?')}", flush=True)
    child = subprocess.Popen(argv, cwd=work, env=env)

    def forward(signum: int, frame: Any) -> None:
        try:
            child.send_signal(signal.SIGTERM)
        except OSError:
            pass

    signal.signal(signal.SIGTERM, forward)
    code = child.wait()
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main())
