"""The environment variables the Kubernetes backend reads or sets: its section of docs/reference/environment.md
(gathered by :func:`cloudtrain.environment_vars.every_variable`)."""

from __future__ import annotations

from cloudtrain.environment_vars import Variable

ABOUT = "What the Kubernetes backend reads on your machine, and its launcher in the pods."
VARIABLES = (
    Variable(
        "KUBECONFIG", "kubernetes", "the kubernetes client", "the kubeconfig files (contexts) a job is submitted to"
    ),
    Variable(
        "JOB_COMPLETION_INDEX",
        "kubernetes",
        "Kubernetes (an indexed Job's pods); the launcher in the pods",
        "the pod's index: its replica (0 is the chief)",
    ),
    Variable("PYTHONPATH", "kubernetes", "the launcher in the pods", "the unpacked package goes first on it"),
    Variable(
        "CLOUDTRAIN_NODE", "kubernetes", "the launcher in the pods", "the node the pod runs on, for its first line"
    ),
    Variable(
        "CLOUDTRAIN_SUBDOMAIN",
        "kubernetes",
        "the launcher in the pods",
        "the headless Service the replicas' names are under, for TF_CONFIG",
    ),
    Variable(
        "CLOUDTRAIN_SDIST_URL",
        "kubernetes",
        "the launcher in the pods (from the job's Secret)",
        "a package too big for the ConfigMap: its signed URL in the staging bucket, fetched and sha256-checked",
    ),
)
