"""The Kubernetes backend: a ConfigMap with the package, then an indexed Job and its headless Service, or a JobSet.

History records the kubeconfig context (``current`` for the current one) as the region and the namespace as
the project; the job's id is its Job's (or JobSet's) name. ``$KUBECONFIG`` (or ``kubernetes.kubeconfig`` when a
config is given) says where the contexts are.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from cloudtrain import catalog, history
from cloudtrain.backend_rules.capabilities import Capabilities, Capability, Refusal
from cloudtrain.backends import DEFAULT_CONTRACT
from cloudtrain.backends.base import Backend, BackendFacts, Facts, Hardware, JobStatus, Words
from cloudtrain.backends.kubernetes import manifests
from cloudtrain.backends.kubernetes.job_settings import KubernetesSettings, kubernetes_section
from cloudtrain.backends.kubernetes.section import POD_TYPE, Kubernetes, cluster_of, fill_kubernetes_keys
from cloudtrain.catalog.records import MachineInfo
from cloudtrain.config.loaded import LoadedConfig
from cloudtrain.config.rules import Check
from cloudtrain.config.schema import JobConfig
from cloudtrain.errors import UsageError
from cloudtrain.packaging import BuiltPackage
from cloudtrain.secrets.masking import MASK
from cloudtrain.spec import JobSpec

if TYPE_CHECKING:  # what only the cluster calls use (.live): --help and --dry-run never load it
    from cloudtrain.backends.kubernetes.api import Cluster
    from cloudtrain.backends.kubernetes.job import KubernetesJob
    from cloudtrain.backends.kubernetes.live import Live

#: How long a submit watches a new job for a refusal that waiting cannot cure (no node can ever take it).
FIRST_LOOK_S = 30.0
#: The words of a scheduler that sees no node able to run a pod (on a cluster that cannot add nodes).
NEVER_FITS = re.compile(r"\d+/\d+ nodes are available")


def context_of(region: str | None) -> str:
    """The kubeconfig context history's region names (``current``: the current context)."""
    return "" if region in (None, "", cluster_of("")) else str(region)


#: What each provider's GPU node label looks like (GKE: cloud.google.com/gke-accelerator, EKS: Karpenter's).
GPU_FORM = {"gke": "use GKE's name, e.g. nvidia-tesla-t4, nvidia-l4", "eks": "use Karpenter's name, e.g. t4, a10g"}


def gpu_label(kind: str, wanted: str) -> str | None:
    """``wanted`` as the provider's GPU node label: itself when it has the label's form, else the label of
    the catalog's GPU it names (``A100``, ``NVIDIA_TESLA_A100``, ``nvidia-tesla-a100``), else None."""
    if re.fullmatch(r"nvidia-[a-z0-9-]+" if kind == "gke" else r"[a-z0-9]+", wanted):
        return wanted
    key = wanted.lower().replace("_", "-")
    for m in catalog.machines("vertex", every_combination=True):  # Vertex AI's accelerator names are GKE's
        if m.gpu and m.accelerator and key in (m.gpu.name.lower(), m.accelerator.lower().replace("_", "-")):
            gke = m.accelerator.lower().replace("_", "-")
            return gke if kind == "gke" else m.gpu.name.lower().split("-")[0]
    return None


def _live() -> type[Live]:
    from cloudtrain.backends.kubernetes.live import Live  # the cluster's client, handle, buckets: not on --dry-run

    return Live


def secret_values(spec: JobSpec) -> dict[str, str]:
    """``secrets:`` (``shell:NAME``) read from this shell at submit: they go into the job's Secret only."""
    return _live().resolve_here(spec.secrets, os.environ) if spec.secrets else {}


class KubernetesBackend(BackendFacts):
    name = "kubernetes"
    facts = Facts(
        section="kubernetes",
        settings_record=KubernetesSettings,
        location_keys=("region", "project"),  # the kubeconfig context and the namespace
        storage_schemes=("gs", "s3"),
        secret_kind="shell",  # shell:NAME read where cloudtrain submit runs, into the job's Secret
        image_region="us-central1",  # the prebuilt images' rules (Vertex AI's, as on GKE)
        contract=DEFAULT_CONTRACT,  # the Vertex AI contract in every pod (AIP_* folders, TF_CONFIG, CLUSTER_SPEC)
        machine_keys=("accelerator_type",),  # the provider's GPU node label
        job_name_limit=52,
        job_id_pattern=re.compile(r"^kubernetes:(?P<region>.+)/(?P<project>[a-z0-9-]+)/(?P<id>[a-z0-9-]+)$"),
        capabilities=Capabilities.of(
            {
                Capability.WRITES_BUCKETS,
                Capability.CONTAINERS,
                Capability.ANY_REGISTRY,  # a cluster pulls from any registry (the summary names the image)
                Capability.SCRIPT_ARGS,
                Capability.SWEEPS_HERE,
                Capability.CLUSTER,
            },
            TPUS=Refusal("this backend asks for GPUs (nvidia.com/gpu) only", "use backend: vertex for TPUs"),
        ),
        list_columns=("replicas", "machine", "image"),  # the status details each listed job shows (pod_facts)
    )
    words = Words(title="Kubernetes", local_data=None, model_dir_words="AIP_MODEL_DIR")

    def fill_document(self, data: dict[str, Any]) -> list[tuple[tuple[str, ...], str, str]]:
        """``region`` (the context), ``machine.type`` and ``image.uri`` (``kubernetes.image``: what every line that
        names the image shows) filled in; the keys the cluster decides refused."""
        section, image = data.get("kubernetes"), data.get("image")
        if isinstance(section, dict) and section.get("image") and (image is None or isinstance(image, dict)):
            data["image"] = {**(image or {}), "uri": section["image"]}
        return fill_kubernetes_keys(data)

    def resolve_machine(self, config: JobConfig) -> MachineInfo:
        gpus = config.machine.accelerator_count
        accelerator = (config.machine.accelerator_type or "GPU") if gpus else None
        return Hardware(accelerator, gpus, 0, 0.0).unpriced("kubernetes", POD_TYPE)

    def job_settings(self, config: JobConfig) -> KubernetesSettings:
        settings = super().job_settings(config)
        if not isinstance(settings, KubernetesSettings):  # never: settings_record is KubernetesSettings
            raise TypeError(f"Kubernetes settings expected, got {type(settings).__name__}")
        return replace(settings, gpu_type=config.machine.accelerator_type)

    def project(self, loaded: LoadedConfig) -> tuple[str | None, str | None]:
        """The namespace: history records it as the project."""
        section: Kubernetes = loaded.config.section("kubernetes") or Kubernetes()
        return section.namespace, "kubernetes.namespace"

    def config_checks(self, loaded: LoadedConfig) -> list[Check]:
        """The kubernetes: section: a cluster has no catalog of regions and machines."""

        def section() -> None:
            found: Kubernetes = loaded.config.section("kubernetes") or Kubernetes()
            if not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", found.namespace):
                raise loaded.error(
                    ("kubernetes", "namespace"),
                    f"{found.namespace!r} is not a namespace name",
                    "use lower-case letters, digits and -",
                )
            for path in found.volumes:
                if not path.startswith("/") or path.startswith(manifests.MOUNT):
                    raise loaded.error(
                        ("kubernetes", "volumes"),
                        f"mount path {path!r} must be absolute, outside {manifests.MOUNT}",
                        "use e.g. /data",
                    )

        def node_labels() -> None:
            cfg, found = loaded.config, loaded.config.section("kubernetes") or Kubernetes()
            kind, wanted = manifests.provider(found), cfg.machine.accelerator_type
            if kind not in manifests.GPU_LABEL and (wanted or cfg.spot.enabled):
                key = ("machine", "accelerator_type") if wanted else ("spot",)
                raise loaded.error(
                    key,
                    f"cloudtrain knows the GPU and spot node labels of GKE and EKS only, and "
                    f"{found.context or 'the current context'} names neither",
                    "set kubernetes.provider: gke or eks (the labels your nodes carry), or select nodes with "
                    "kubernetes.node_selector instead",
                )
            label = gpu_label(kind, wanted) if wanted else None
            if wanted and label != wanted:
                raise loaded.error(
                    ("machine", "accelerator_type"),
                    f"{wanted!r} is not a GPU node label of {kind.upper()} ({manifests.GPU_LABEL[kind]})",
                    f"write accelerator_type: {label}" if label else GPU_FORM[kind],
                )

        return [(("kubernetes",), section), (("machine", "accelerator_type"), node_labels)]

    def _jobset(self, spec: JobSpec, cluster: Cluster | None) -> bool:
        wanted = kubernetes_section(spec).jobset
        if wanted == "auto":
            return cluster.has_jobset() if cluster is not None else False
        return wanted == "yes"

    def render(self, spec: JobSpec, package: BuiltPackage | None) -> dict[str, Any]:
        """The manifests ``submit`` creates (``jobset: auto`` shows the indexed Job; a cluster with JobSet's CRD
        gets a JobSet); the ConfigMap's sdist is named, not shown; one too big for it, where it is staged."""
        section = kubernetes_section(spec)
        staged = package is not None and package.size > manifests.package_room(spec, package)
        uri = manifests.package_key(spec, package) if package is not None and staged else None
        objects = manifests.render(spec, package, jobset=self._jobset(spec, None), staged=MASK if uri else None)
        if package is not None and not uri:
            (config_map,) = [o for o in objects if o["kind"] == "ConfigMap"]
            config_map["binaryData"] = {package.filename: f"<{package.size} bytes of {package.filename}, base64>"}
        return {
            **({"package": f"{uri} (too big for the ConfigMap: the pods fetch it with a signed URL)"} if uri else {}),
            "backend": "kubernetes",
            "context": section.context or "(current)",
            "namespace": section.namespace,
            "image": spec.image_uri,
            "manifests": objects,
        }

    def submit(self, spec: JobSpec, package: BuiltPackage | None) -> KubernetesJob:
        section = kubernetes_section(spec)
        data = package.path.read_bytes() if package is not None else b""
        staged = None
        if package is not None and self._staged(spec, package):
            staged, data = _live().stage(spec, package), b""  # the pods fetch it with the signed URL instead
        values = secret_values(spec)
        cluster = _live().connect(section.kubeconfig, section.context)
        jobset = self._jobset(spec, cluster)
        objects = manifests.render(spec, package, jobset=jobset, data=data, secrets=values, staged=staged)
        created: list[dict[str, Any]] = []
        try:
            for obj in objects[:-1]:
                try:
                    self._create(cluster, obj)
                except KeyboardInterrupt:  # the API may have made it before the Ctrl-C: it goes too
                    created.append(obj)
                    raise
                created.append(obj)
            _live().hold()  # Ctrl-C from here waits until the job is in history (no orphans)
            workload = self._create(cluster, objects[-1])
        except BaseException:
            for obj in created:  # nothing left behind of a submit that did not start its job
                self._delete(cluster, obj)
            raise
        self._owned_by(cluster, created, objects[-1]["kind"], workload)
        held = [str(v) for o in objects if o["kind"] == "Secret" for v in o["stringData"].values()]
        job = _live().KubernetesJob(
            cluster, section.namespace, manifests.object_name(spec), objects[-1]["kind"], spec.region, held
        )
        self._first_look(job)
        return job

    @staticmethod
    def _staged(spec: JobSpec, package: BuiltPackage) -> bool:
        """Whether the package goes by the staging bucket: too big for its ConfigMap (refused without a bucket)."""
        room = manifests.package_room(spec, package)
        if package.size <= room:
            return False
        if manifests.package_key(spec, package) is None:
            raise UsageError(
                f"the package {package.filename} is {package.size} bytes: over the {room} bytes its ConfigMap has "
                f"room for ({manifests.CONFIGMAP_LIMIT} less the launcher and the plan)",
                "set staging_bucket: s3://my-bucket (the pods fetch it with a signed URL), or leave data and large "
                "files out of the package (read them from a bucket or kubernetes.volumes)",
            )
        return True

    def _create(self, cluster: Cluster, obj: dict[str, Any], dry_run: str | None = None) -> dict[str, Any]:
        """Create one manifest; the API's refusal as one line."""
        ns, kind = obj["metadata"]["namespace"], obj["kind"]
        extra = {"dry_run": dry_run, "field_validation": "Strict"} if dry_run else {}  # no field dropped unsaid
        try:
            if kind == "Secret":
                made = cluster.core.create_namespaced_secret(ns, obj, **extra)
            elif kind == "ConfigMap":
                made = cluster.core.create_namespaced_config_map(ns, obj, **extra)
            elif kind == "Service":
                made = cluster.core.create_namespaced_service(ns, obj, **extra)
            elif kind == "Job":
                made = cluster.batch.create_namespaced_job(ns, obj, **extra)
            else:
                group, version, plural = _live().JOBSET
                made = cluster.custom.create_namespaced_custom_object(group, version, ns, plural, obj, **extra)
        except Exception as err:
            raise _live().refusal(err, f"create the {kind} {obj['metadata']['name']} in namespace {ns}") from err
        return dict(cluster.api_client.sanitize_for_serialization(made))

    def validate(
        self, cluster: Cluster, spec: JobSpec, package: BuiltPackage | None, *, jobset: bool
    ) -> list[dict[str, Any]]:
        """The manifests, checked by the API server against its own schema and admission (``dryRun=All``, an
        unknown field an error)."""
        data = package.path.read_bytes() if package is not None else b""
        objects = manifests.render(spec, package, jobset=jobset, data=data, secrets=secret_values(spec))
        return [self._create(cluster, obj, dry_run="All") for obj in objects]

    def _delete(self, cluster: Cluster, obj: dict[str, Any]) -> None:
        ns, name = obj["metadata"]["namespace"], obj["metadata"]["name"]
        try:
            if obj["kind"] == "Secret":
                cluster.core.delete_namespaced_secret(name, ns)
            elif obj["kind"] == "ConfigMap":
                cluster.core.delete_namespaced_config_map(name, ns)
            elif obj["kind"] == "Service":
                cluster.core.delete_namespaced_service(name, ns)
        except Exception:
            pass

    def _owned_by(self, cluster: Cluster, objects: list[dict[str, Any]], kind: str, workload: dict[str, Any]) -> None:
        """The Secret, ConfigMap and Service go with the workload (the garbage collector deletes what it owns)."""
        meta = workload["metadata"]
        owner = {
            "apiVersion": workload["apiVersion"],
            "kind": kind,
            "name": meta["name"],
            "uid": meta["uid"],
            "blockOwnerDeletion": True,
        }
        patch = {"metadata": {"ownerReferences": [owner]}}
        for obj in objects:
            ns, name = obj["metadata"]["namespace"], obj["metadata"]["name"]
            try:
                if obj["kind"] == "Secret":
                    cluster.core.patch_namespaced_secret(name, ns, patch)
                elif obj["kind"] == "ConfigMap":
                    cluster.core.patch_namespaced_config_map(name, ns, patch)
                elif obj["kind"] == "Service":
                    cluster.core.patch_namespaced_service(name, ns, patch)
            except Exception as err:
                raise _live().refusal(err, f"patch the {obj['kind']} {name}") from err

    def _first_look(self, job: KubernetesJob) -> None:
        """Cancel a job no node can ever run, or whose pods the namespace refuses, with the API's reason."""
        deadline = time.monotonic() + FIRST_LOOK_S
        while time.monotonic() < deadline:
            pods = job.pods()
            if pods and all(
                (p.get("status") or {}).get("phase") != "Pending" or p.get("spec", {}).get("nodeName") for p in pods
            ):
                return  # every pod has a node
            why = job.waiting_for(pods)
            if why and (
                why.startswith("FailedCreate") or (NEVER_FITS.search(why) and not self._autoscales(job.cluster))
            ):
                job.cancel()
                raise UsageError(
                    f"the cluster cannot run this job: {why}",
                    "ask less (replica_count, machine.accelerator_count, kubernetes.cpu/memory) or check the node "
                    "selectors (kubectl describe nodes)",
                )
            time.sleep(1.0)

    @staticmethod
    def _autoscales(cluster: Cluster) -> bool:
        """Whether a cluster autoscaler may add a node (its status ConfigMap is there): then pending pods wait."""
        try:
            cluster.core.read_namespaced_config_map("cluster-autoscaler-status", "kube-system")
        except Exception:
            return False
        return True

    def attach(self, job_id: str, *, region: str | None = None, project: str | None = None) -> KubernetesJob:
        """A job by its name; ``region`` is the context and ``project`` the namespace (as history has them)."""
        found = self.parse_job_id(job_id)
        if found is not None:
            job_id, location = found
            region, project = location.get("region", region), location.get("project", project)
        namespace = project or "default"
        cluster = _live().connect("", context_of(region))
        for kind in ("Job", "JobSet"):
            job = _live().KubernetesJob(cluster, namespace, job_id, kind, region or cluster_of(""))
            if job.workload() is not None:
                return job
        if history.ended_record(job_id) is not None:  # its objects deleted (a cancel): its end as kept
            return _live().KubernetesJob(cluster, namespace, job_id, "Job", region or cluster_of(""))
        raise UsageError(
            f"no cloudtrain job {job_id} in namespace {namespace} of {region or 'the current context'}",
            "check the job id (cloudtrain list)",
        )

    def list_jobs(self, *, region: str | None = None, project: str | None = None, limit: int = 20) -> list[JobStatus]:
        """The namespace's cloudtrain Jobs and JobSets, newest first."""
        cluster = _live().connect("", context_of(region))
        namespace, mine = project or "default", "app.kubernetes.io/managed-by=cloudtrain"
        try:
            found = [
                ("Job", o)
                for o in cluster.api_client.sanitize_for_serialization(
                    cluster.batch.list_namespaced_job(namespace, label_selector=mine)
                )["items"]
            ]
            if cluster.has_jobset():
                group, version, plural = _live().JOBSET
                listed = cluster.custom.list_namespaced_custom_object(
                    group, version, namespace, plural, label_selector=mine
                )
                found += [("JobSet", o) for o in listed["items"]]
        except Exception as err:
            raise _live().refusal(err, f"list the jobs in {namespace}") from err
        found.sort(key=lambda k_o: str(k_o[1]["metadata"]["creationTimestamp"]), reverse=True)
        where = region or cluster_of("")
        handle = _live().KubernetesJob
        return [handle(cluster, namespace, o["metadata"]["name"], k, where).status() for k, o in found[:limit]]


BACKEND: Backend = KubernetesBackend()  # mypy checks it is a whole Backend
