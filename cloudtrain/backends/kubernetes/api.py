"""The one place that imports the official ``kubernetes`` client: a cluster's API for a context, and the
API's refusals as one line each (RBAC, quota, admission), with the reason the API server gives."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from cloudtrain.errors import BackendError, UsageError


@dataclass
class Cluster:
    """The APIs of one cluster (one kubeconfig context) that a job uses."""

    core: Any  # CoreV1Api
    batch: Any  # BatchV1Api
    custom: Any  # CustomObjectsApi
    api_client: Any
    context: str

    def has_jobset(self) -> bool:
        """Whether the cluster serves JobSet's API (its CRD is installed)."""
        try:
            self.custom.get_api_resources("jobset.x-k8s.io", "v1alpha2")
        except Exception as err:
            if getattr(err, "status", None) not in (404, 403):
                raise refusal(err, "read the API groups") from err
            return False
        return True


def connect(kubeconfig: str, context: str) -> Cluster:
    """The cluster of ``context`` ("" = the current one) in ``kubeconfig`` ("" = $KUBECONFIG or ~/.kube/config)."""
    from kubernetes import client, config  # the SDK: only when a job talks to a cluster

    try:
        api_client = config.new_client_from_config(  # type: ignore[no-untyped-call]
            config_file=kubeconfig or None, context=context or None
        )
    except (config.ConfigException, OSError, TypeError) as err:
        where = kubeconfig or "$KUBECONFIG / ~/.kube/config"
        raise UsageError(
            f"cannot use the kubeconfig {where}{f' context {context!r}' if context else ''}: {err}",
            "set kubernetes.kubeconfig / kubernetes.context (kubectl config get-contexts)",
        ) from err
    return Cluster(
        client.CoreV1Api(api_client),
        client.BatchV1Api(api_client),
        client.CustomObjectsApi(api_client),
        api_client,
        context,
    )


def reason(err: Exception) -> str:
    """The API server's own words for a refused call (its Status message), else the error's text."""
    body = getattr(err, "body", None)
    if body:
        try:
            return str(json.loads(body).get("message") or body)
        except (ValueError, AttributeError):
            return str(body)
    return str(err).splitlines()[0] if str(err) else type(err).__name__


def refusal(err: Exception, doing: str) -> Exception:
    """One line for a call the cluster refused: RBAC (403), quota and admission (403/422), not there, unreachable."""
    status = getattr(err, "status", None)
    why = reason(err)
    if status == 403 and "exceeded quota" in why:
        return UsageError(
            f"the namespace's quota refused to {doing}: {why}",
            "ask less (replica_count, kubernetes.cpu/memory) or raise the ResourceQuota",
        )
    if status == 403:
        return UsageError(
            f"the cluster's RBAC does not let you {doing}: {why}",
            "see docs/how-to/kubernetes.md for the Role a user needs",
        )
    if status in (400, 422):
        return UsageError(
            f"the API server refused to {doing}: {why}",
            "fix the kubernetes: section (cloudtrain submit --dry-run shows the manifests)",
        )
    if status == 401:
        return UsageError(
            f"the cluster did not accept your credentials to {doing}: {why}",
            "refresh them (gcloud container clusters get-credentials / aws eks update-kubeconfig)",
        )
    if status is None or status >= 500 or status == 0:
        return BackendError(f"cannot {doing}: the cluster's API did not answer ({why})")
    return UsageError(f"cannot {doing}: {why}")
