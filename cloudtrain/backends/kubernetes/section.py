"""The ``kubernetes:`` section of a job config: which cluster and namespace, the image, and what each pod asks for.

The registry names this module; it imports only config records (the schema loads it while the config loads).
"""

from typing import Any, Literal

from cloudtrain.config.problems import fill_cluster_keys
from cloudtrain.config.records import Field, Record, StrictInt, StrictStr


class Toleration(Record):
    """One toleration of every pod (a GKE spot node's taint, a GPU pool's)."""

    key: StrictStr = Field(description="The taint's key, e.g. cloud.google.com/gke-spot.")
    operator: Literal["Equal", "Exists"] = Field("Equal", description="Equal (with value) or Exists.")
    value: StrictStr = Field("", description="The taint's value (with operator Equal).")
    effect: Literal["", "NoSchedule", "PreferNoSchedule", "NoExecute"] = Field("", description='"" = every effect.')


class Kubernetes(Record):
    """Where a ``backend: kubernetes`` job runs and what its pods ask for."""

    section_description = "backend kubernetes: the kubeconfig context, namespace, image and each pod's requests."

    context: StrictStr = Field(
        "", description='The kubeconfig context; "" = the current one ($KUBECONFIG or ~/.kube/config).'
    )
    kubeconfig: StrictStr = Field("", description='A kubeconfig file; "" = $KUBECONFIG, else ~/.kube/config.')
    namespace: StrictStr = Field("default", description="The namespace the Job, its Service and ConfigMap go in.")
    image: StrictStr = Field(
        "",
        description='The container image; "" = the prebuilt TensorFlow training image the config\'s TF and GPU '
        "call for "
        "(Vertex AI's on a GKE cluster, the AWS DLC on EKS).",
    )
    python: StrictStr = Field("python3", description="The image's Python, which runs the launcher and the package.")
    service_account: StrictStr = Field(
        "", description='The pods\' Kubernetes service account; "" = the namespace default.'
    )
    node_selector: dict[StrictStr, StrictStr] = Field(
        default_factory=dict,
        description="More node labels every pod needs (GPU type and spot labels are added from machine:).",
    )
    tolerations: list[Toleration] = Field(default_factory=list, description="Tolerations of every pod.")
    cpu: StrictStr = Field("", description='CPU each replica requests, e.g. "4" or "500m"; "" = none requested.')
    memory: StrictStr = Field("", description='Memory each replica requests, e.g. "16Gi"; "" = none requested.')
    volumes: dict[StrictStr, dict[StrictStr, Any]] = Field(
        default_factory=dict,
        description="Mount path → a Kubernetes volume source, e.g. {persistentVolumeClaim: {claimName: data}}; "
        "mounted in every pod.",
    )
    jobset: Literal["auto", "yes", "no"] = Field(
        "auto", description="auto = a JobSet when the cluster has its CRD, else an indexed Job; yes / no force one."
    )
    max_restarts: StrictInt = Field(
        3, ge=0, description="How often a preempted or deleted pod is replaced before the job fails."
    )
    provider: Literal["auto", "gke", "eks", "other"] = Field(
        "auto",
        description="Whose node labels machine.accelerator_type and spot: select (GKE's cloud.google.com/gke-*, EKS's "
        "Karpenter and capacity-type labels); auto = from the context's name (gke_… or arn:aws:eks:…).",
    )


#: ``machine.type`` of every Kubernetes job: a pod, sized by machine.accelerator_count and kubernetes.cpu / memory.
POD_TYPE = "kubernetes-pod"
#: Keys a Kubernetes job does not take, with the fix for each.
NOT_FOR_KUBERNETES = {
    ("region",): "remove region: the cluster is kubernetes.context",
    ("machine", "type"): "remove machine.type: size pods with kubernetes.cpu / kubernetes.memory",
    ("project",): "remove project",
    ("role_arn",): "remove role_arn",
    ("flex_start",): "remove flex_start",
    ("fallback",): "remove fallback (one cluster per config)",
    ("network",): "remove network",
    ("service_account",): "use kubernetes.service_account",
}


def cluster_of(context: str) -> str:
    """What history records as a Kubernetes job's ``region``: the context, or ``current``."""
    return context or "current"


def fill_kubernetes_keys(data: dict[str, Any]) -> list[tuple[tuple[str, ...], str, str]]:
    """A ``backend: kubernetes`` document before validation: ``region`` (the context) and ``machine.type``
    filled in, one ``(path, message, hint)`` per key written that a Kubernetes job does not take."""
    section = data.get("kubernetes")
    context = section.get("context") if isinstance(section, dict) else None
    return fill_cluster_keys(
        data, NOT_FOR_KUBERNETES, "Kubernetes", cluster_of(context if isinstance(context, str) else ""), POD_TYPE
    )
