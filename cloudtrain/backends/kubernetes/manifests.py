"""A job spec as the manifests ``submit`` creates: a pure function of the spec and the package (no I/O, no SDK).

- a Secret (only where the job has ``secrets:`` or secret-looking ``env:`` values): the pods read each as
  ``env.valueFrom.secretKeyRef``, so no value is in the ConfigMap or the Job; the dry run shows ``***``;
- a ConfigMap holding the sdist (``binaryData``), the pod launcher (:mod:`.launcher`) and each replica's plan; an
  sdist too big for it is staged in the staging bucket instead (:mod:`.staging`): the plan names its sha256 and
  the Secret holds its signed URL (``CLOUDTRAIN_SDIST_URL``);
- the workload: an indexed Job (``completionMode: Indexed``, one completion per replica) with a headless
  Service whose name is the pods' subdomain, so replica *i* is ``<job>-<i>.<job>`` as on GKE; or a JobSet
  of one replicated Job (its controller makes the headless Service);
- a preempted, evicted or deleted pod is replaced up to ``kubernetes.max_restarts`` times (the pod failure
  policy counts signals and disruptions), any other non-zero exit fails the job at once.

``--dry-run`` prints exactly these; the tests send them to a real API server with ``dryRun=All``.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from cloudtrain.backends.kubernetes.job_settings import gpu_type, kubernetes_section
from cloudtrain.backends.kubernetes.section import POD_TYPE, Kubernetes
from cloudtrain.backends.runner import contract
from cloudtrain.data import schemes
from cloudtrain.environment_vars import PYTHONUNBUFFERED
from cloudtrain.errors import ExitCode
from cloudtrain.packaging import BuiltPackage
from cloudtrain.secrets.masking import MASK, secret_names
from cloudtrain.spec import JobSpec

LAUNCHER = Path(__file__).parent / "launcher.py"
MOUNT = "/cloudtrain"
#: The port each replica's TensorFlow server listens on (every replica has a pod, and so an address, of its own).
TF_PORT = 2222
#: What the API server lets a ConfigMap hold: its data's and binaryData's bytes together (core.MaxSecretSize),
#: binaryData counted decoded. The sdist shares it with the launcher and the plan.
CONFIGMAP_LIMIT = 1024 * 1024
#: The Secret's key of a staged package's signed URL (the launcher fetches it).
SDIST_URL = "CLOUDTRAIN_SDIST_URL"
#: The labels that find a job's objects again.
RUN_LABEL = "cloudtrain.dev/run"
#: Exit codes of a replica stopped from outside: the trainer's "preempted" (5: it saved a checkpoint on
#: SIGTERM), SIGKILL's and SIGTERM's; replaced, up to max_restarts.
SIGNALLED = [int(ExitCode.PREEMPTED), 137, 143]
#: Node labels of each provider: machine.accelerator_type's, and a spot node's.
GPU_LABEL = {"gke": "cloud.google.com/gke-accelerator", "eks": "karpenter.k8s.aws/instance-gpu-name"}
SPOT_LABEL = {"gke": ("cloud.google.com/gke-spot", "true"), "eks": ("karpenter.sh/capacity-type", "spot")}


def provider(section: Kubernetes) -> str:
    """``gke``, ``eks`` or ``other``: the section's, else what the context's name says."""
    if section.provider != "auto":
        return section.provider
    if section.context.startswith("gke_"):
        return "gke"
    if section.context.startswith("arn:aws:eks:") or ".eksctl.io" in section.context:
        return "eks"
    return "other"


def object_name(spec: JobSpec) -> str:
    """The job's name as a DNS label (63 characters, lower case): the Job's, the Service's, the ConfigMap's."""
    name = re.sub(r"[^a-z0-9-]+", "-", spec.job_name.lower()).strip("-")
    return name[:52].rstrip("-")  # room for "-<index>" hostnames and JobSet's "-<rjob>-0-<i>"


def secret_keys(spec: JobSpec) -> list[str]:
    """The variables the job's Secret holds: ``secrets:`` and the ``env:`` values that look secret."""
    return sorted({*spec.secrets, *secret_names(spec.env)})


def secret(
    spec: JobSpec, section: Kubernetes, values: Mapping[str, str] | None, staged: str | None = None
) -> dict[str, Any]:
    """The job's Secret: ``values`` (``secrets:`` as read at submit) and the secret ``env:`` values; ``None``
    (the dry run): every value ``***``. ``staged``: a staged package's signed URL."""
    data = {k: MASK if values is None else str(values.get(k, spec.env.get(k, ""))) for k in secret_keys(spec)}
    if staged is not None:
        data[SDIST_URL] = staged
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": metadata(spec, section),
        "stringData": data,
    }


def node_selection(spec: JobSpec, section: Kubernetes) -> tuple[dict[str, str], list[dict[str, str]]]:
    """The pods' node selector and tolerations: the section's, the GPU type's label, spot's."""
    selector = dict(section.node_selector)
    tolerations = [{k: v for k, v in t.model_dump().items() if v} for t in section.tolerations]
    kind = provider(section)
    if gpu_type(spec) and kind in GPU_LABEL:
        selector[GPU_LABEL[kind]] = str(gpu_type(spec))
    if spec.spot and kind in SPOT_LABEL:
        key, value = SPOT_LABEL[kind]
        selector[key] = value
        if kind == "gke":
            tolerations.append({"key": key, "operator": "Equal", "value": value, "effect": "NoSchedule"})
    if spec.machine.accelerator_count:
        tolerations.append({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"})
    return selector, tolerations


def resources(spec: JobSpec, section: Kubernetes) -> dict[str, dict[str, str]]:
    """Each replica's requests and limits: its GPUs (``nvidia.com/gpu``, a limit), CPU and memory."""
    requests = {k: v for k, v in (("cpu", section.cpu), ("memory", section.memory)) if v}
    limits = {"memory": section.memory} if section.memory else {}
    if spec.machine.accelerator_count:
        limits["nvidia.com/gpu"] = str(spec.machine.accelerator_count)
    return {k: v for k, v in (("requests", requests), ("limits", limits)) if v}


def plan(spec: JobSpec, package: BuiltPackage | None, section: Kubernetes) -> dict[str, Any]:
    """What the launcher reads: each replica's command and the contract's variables and folders."""
    if package is None:  # container: the image's own command
        replicas = [{"name": f"replica-{i}", "argv": [], "env": {}, "dirs": []} for i in range(spec.replica_count)]
        return {"replicas": replicas, "port": TF_PORT}
    held = secret_keys(spec)
    public = replace(spec, env={k: v for k, v in spec.env.items() if k not in held}, secrets={})
    plans = contract.plan(  # the contract's CLUSTER_SPEC describes the job: without a secret value or reference
        public,
        output_dir=spec.output_dir.rstrip("/"),
        ports=[TF_PORT] * spec.replica_count,
        package=package,
        num_gpus=spec.machine.accelerator_count,
    )
    replicas = []
    for p in plans:
        env = {k: v for k, v in {**spec.env, **p.env}.items() if k not in held} | {PYTHONUNBUFFERED: "1"}
        replicas.append(
            {
                "name": p.name,
                "argv": contract.argv(public, p, section.python, package),
                "env": env,
                "dirs": [p.model_dir, p.checkpoint_dir, p.tensorboard_dir],
            }
        )
    return {"replicas": replicas, "port": TF_PORT, "sdist": package.filename}


def config_map(
    spec: JobSpec, package: BuiltPackage | None, section: Kubernetes, hostname: str, data: bytes, staged: bool = False
) -> dict[str, Any]:
    """The ConfigMap mounted at /cloudtrain: launcher, plan and (``data``) the sdist's bytes; ``staged``: the
    plan names the sdist's sha256, which the launcher checks of what it fetches, instead."""
    run_plan = {**plan(spec, package, section), "hostname": hostname}
    if staged and package is not None:
        run_plan["sdist_sha256"] = package.sha256
    binary = {package.filename: base64.b64encode(data).decode()} if package is not None and not staged else {}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(spec, section),
        "data": {"launcher.py": LAUNCHER.read_text(), "plan.json": json.dumps(run_plan, indent=1, sort_keys=True)},
        "binaryData": binary,
    }


def package_room(spec: JobSpec, package: BuiltPackage | None) -> int:
    """How many bytes of sdist the job's ConfigMap has room for (the limit less the launcher and the plan)."""
    text = config_map(spec, package, kubernetes_section(spec), "x" * 63 + "-{index}", b"")["data"].values()
    return CONFIGMAP_LIMIT - sum(len(v.encode()) for v in text)


def package_key(spec: JobSpec, package: BuiltPackage) -> str | None:
    """Where the package goes (``s3://…/cloudtrain/packages/<sha256>/<file>``); None: no staging bucket."""
    prefix = spec.package_prefix
    if not prefix or schemes.source_kind(prefix) not in ("s3", "gs"):
        return None
    return f"{prefix.rstrip('/')}/{package.sha256}/{package.filename}"


def pod_facts(workload: dict[str, Any]) -> dict[str, Any]:
    """What a job's pods run, read back from its Job or JobSet (as ``status`` and ``list`` show it): the
    image, GPUs, the machine (``kubernetes-pod`` and its requests), the replicas."""
    spec = workload.get("spec") or {}
    if spec.get("replicatedJobs"):
        spec = spec["replicatedJobs"][0]["template"]["spec"]
    pod = (spec.get("template") or {}).get("spec") or {}
    container = (pod.get("containers") or [{}])[0]
    asked = container.get("resources") or {}
    gpus = (asked.get("limits") or {}).get("nvidia.com/gpu")
    kind = next((v for k, v in (pod.get("nodeSelector") or {}).items() if k in GPU_LABEL.values()), "nvidia.com/gpu")
    accelerator = f"{gpus} × {kind}" if gpus else None
    parts = [f"{k} {v}" for k, v in (asked.get("requests") or {}).items()] + ([accelerator] if accelerator else [])
    return {
        "image": container.get("image"),
        "accelerator": accelerator,
        "machine": f"{POD_TYPE} ({', '.join(parts)})" if parts else POD_TYPE,
        "replicas": spec.get("completions"),
    }


def metadata(spec: JobSpec, section: Kubernetes) -> dict[str, Any]:
    labels = {RUN_LABEL: object_name(spec), "app.kubernetes.io/managed-by": "cloudtrain"}
    return {"name": object_name(spec), "namespace": section.namespace, "labels": labels}


def pod_template(
    spec: JobSpec, package: BuiltPackage | None, section: Kubernetes, subdomain: str | None
) -> dict[str, Any]:
    """Every replica's pod: the launcher (or the user's container command), the ConfigMap, the section's volumes."""
    name = object_name(spec)
    selector, tolerations = node_selection(spec, section)
    mounts = [{"name": "cloudtrain", "mountPath": MOUNT, "readOnly": True}]
    volumes: list[dict[str, Any]] = [{"name": "cloudtrain", "configMap": {"name": name}}]
    for i, (path, source) in enumerate(sorted(section.volumes.items())):
        mounts.append({"name": f"volume-{i}", "mountPath": path})
        volumes.append({"name": f"volume-{i}", **source})
    env = [
        {"name": "CLOUDTRAIN_NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        *([{"name": "CLOUDTRAIN_SUBDOMAIN", "value": subdomain}] if subdomain else []),
        *({"name": k, "valueFrom": {"secretKeyRef": {"name": name, "key": k}}} for k in secret_keys(spec)),
    ]
    if spec.container is not None:  # no launcher: env: is the container's own
        env += [{"name": k, "value": v} for k, v in spec.env.items() if k not in secret_keys(spec)]
    container: dict[str, Any] = {
        "name": "train",
        "image": spec.image_uri,  # kubernetes.image is image.uri (KubernetesBackend.fill_document)
        "env": env,
        "volumeMounts": mounts,
        "resources": resources(spec, section),
    }
    if spec.container is not None:
        if spec.container.command:
            container["command"] = list(spec.container.command)
        container["args"] = list(spec.args)
    else:
        container["command"] = [section.python, f"{MOUNT}/launcher.py"]
    pod: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [container],
        "volumes": volumes,
        "terminationGracePeriodSeconds": 60,
    }
    if subdomain:
        pod["subdomain"] = subdomain
    if spec.replica_count > 1:  # one replica a node where the nodes allow (as Vertex AI gives each its machine)
        term = {"labelSelector": {"matchLabels": {RUN_LABEL: name}}, "topologyKey": "kubernetes.io/hostname"}
        pod["affinity"] = {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": term}]
            }
        }
    if section.service_account:
        pod["serviceAccountName"] = section.service_account
    if selector:
        pod["nodeSelector"] = selector
    if tolerations:
        pod["tolerations"] = tolerations
    return {"metadata": {"labels": metadata(spec, section)["labels"]}, "spec": pod}


def job_spec(spec: JobSpec, package: BuiltPackage | None, section: Kubernetes, subdomain: str | None) -> dict[str, Any]:
    """An indexed Job of ``replica_count`` pods that run at once; disruptions replaced, user failures final."""
    n = spec.replica_count
    return {
        "completionMode": "Indexed",
        "completions": n,
        "parallelism": n,
        "backoffLimit": section.max_restarts,
        "activeDeadlineSeconds": spec.max_runtime_seconds,
        "podFailurePolicy": {
            "rules": [
                {"action": "Count", "onPodConditions": [{"type": "DisruptionTarget"}]},
                {"action": "Count", "onExitCodes": {"containerName": "train", "operator": "In", "values": SIGNALLED}},
                {"action": "FailJob", "onExitCodes": {"containerName": "train", "operator": "NotIn", "values": [0]}},
            ]
        },
        "template": pod_template(spec, package, section, subdomain),
    }


def render(
    spec: JobSpec,
    package: BuiltPackage | None,
    *,
    jobset: bool,
    data: bytes = b"",
    secrets: Mapping[str, str] | None = None,
    staged: str | None = None,
) -> list[dict[str, Any]]:
    """The manifests, in the order ``submit`` creates them (the workload last). ``data``: the sdist's bytes (the
    dry run passes none and the ConfigMap names the file instead); ``secrets``: the values of ``secrets:``
    (``None``: the dry run's ``***``); ``staged``: the signed URL of the sdist staged in the bucket (the dry run:
    ``***``), which every pod reads from the Secret."""
    section = kubernetes_section(spec)
    name = object_name(spec)
    meta = metadata(spec, section)
    if jobset:
        hostname = f"{name}-workers-0-{{index}}"
        workload: dict[str, Any] = {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": meta,
            "spec": {
                "network": {"enableDNSHostnames": True, "subdomain": name, "publishNotReadyAddresses": True},
                "failurePolicy": {"maxRestarts": section.max_restarts},
                "replicatedJobs": [
                    {"name": "workers", "replicas": 1, "template": {"spec": job_spec(spec, package, section, name)}}
                ],
            },
        }
        objects = [config_map(spec, package, section, hostname, data, staged is not None), workload]
    else:
        hostname = f"{name}-{{index}}"
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": meta,
            "spec": {
                "clusterIP": "None",
                "publishNotReadyAddresses": True,
                "selector": {RUN_LABEL: name},
                "ports": [{"name": "tf", "port": TF_PORT}],
            },
        }
        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": meta,
            "spec": job_spec(spec, package, section, name),
        }
        objects = [config_map(spec, package, section, hostname, data, staged is not None), service, job]
    if staged is not None:
        ref = {"name": SDIST_URL, "valueFrom": {"secretKeyRef": {"name": name, "key": SDIST_URL}}}
        top = objects[-1]["spec"]
        for one in [r["template"]["spec"] for r in top["replicatedJobs"]] if jobset else [top]:
            one["template"]["spec"]["containers"][0]["env"].append(ref)
    held = secret_keys(spec) or staged is not None
    return ([secret(spec, section, secrets, staged)] if held else []) + objects
