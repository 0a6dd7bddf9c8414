"""One replica of a cloudtrain job in a Kubernetes pod: the contract from ``JOB_COMPLETION_INDEX``, then the job.

Runs in the pod with the image's Python (>= 3.10), the standard library only; it reaches the pod with the
package in the job's ConfigMap, mounted at ``/cloudtrain``. ``python /cloudtrain/launcher.py``:

1. replica ``JOB_COMPLETION_INDEX`` (an indexed Job's, or a JobSet's child Job's) takes its plan from
   ``/cloudtrain/plan.json``: its variables (the contract's model, checkpoint and TensorBoard folders),
   and ``TF_CONFIG`` / ``CLUSTER_SPEC`` whose addresses are the replicas' stable DNS names under the
   headless Service (``<pod hostname>.<subdomain>:<port>``; replica 0 is the chief);
2. the sdist (from the ConfigMap, or one too big for it fetched from the signed URL ``CLOUDTRAIN_SDIST_URL``
   and checked against the plan's sha256) is unpacked and put on ``PYTHONPATH``; its declared requirements are
   installed with pip where the image has pip (a prebuilt TensorFlow image does);
3. the command runs with those variables; SIGTERM (a deleted or preempted pod) reaches it, so it can save.
"""

import hashlib
import json
import os
import signal
import subprocess
import sys
import tarfile
import time
import urllib.request
from typing import Any

HERE = "/cloudtrain"
SDIST_URL = "CLOUDTRAIN_SDIST_URL"  # a staged package's signed URL, from the job's Secret


def fetch(url: str, sha256: str, dest: str, tries: int = 5) -> str:
    """The staged sdist at ``dest``, its sha256 checked; a transient failure retried; else one line, exit 1."""
    for attempt in range(tries):
        try:
            digest = hashlib.sha256()
            with urllib.request.urlopen(url, timeout=60) as response, open(dest, "wb") as out:
                while chunk := response.read(1 << 20):
                    digest.update(chunk)
                    out.write(chunk)
            break
        except OSError as err:  # URLError, HTTPError, a reset connection
            if attempt == tries - 1 or getattr(err, "code", 500) in (400, 403, 404):
                where = url.split("?", 1)[0]  # never the signature
                sys.exit(f"cloudtrain: cannot fetch the package from {where}: {err}")
            time.sleep(2**attempt)
    if digest.hexdigest() != sha256:
        sys.exit(f"cloudtrain: the package fetched has sha256 {digest.hexdigest()}, not {sha256}: not installed")
    return dest


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
    env = {k: v for k, v in {**os.environ, **replica["env"]}.items() if k != SDIST_URL}
    if count > 1:
        env = with_addresses(env, addresses(plan, count))
    work = f"/tmp/cloudtrain-{index}"
    os.makedirs(work, exist_ok=True)
    argv = list(replica["argv"])
    if plan.get("sdist"):
        sdist = os.path.join(HERE, plan["sdist"])
        if plan.get("sdist_sha256"):  # staged in the bucket: too big for the ConfigMap
            sdist = fetch(os.environ[SDIST_URL], plan["sdist_sha256"], os.path.join(work, plan["sdist"]))
        src, requires = unpack(sdist, os.path.join(work, "src"))
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
