"""What the Kubernetes backend reaches beyond rendering: the API client, the job's handle, the staging bucket, the
secrets read here, the creation window. :mod:`.backend` loads it through its one door (``_live()``) when a call
reaches a cluster or a bucket: ``--help`` and ``--dry-run`` never do."""

from __future__ import annotations

from cloudtrain import creation_window
from cloudtrain.backends.kubernetes import staging
from cloudtrain.backends.kubernetes.api import connect, refusal
from cloudtrain.backends.kubernetes.job import JOBSET, KubernetesJob
from cloudtrain.backends.secrets_here import resolve_here


class Live:
    """The names :mod:`.backend` calls, typed as their modules define them."""

    connect = staticmethod(connect)
    refusal = staticmethod(refusal)
    stage = staticmethod(staging.stage)
    hold = staticmethod(creation_window.hold)
    resolve_here = staticmethod(resolve_here)
    KubernetesJob = KubernetesJob
    JOBSET = JOBSET
