"""A Job's or a JobSet's conditions, and its pods' states, as cloudtrain's :class:`JobState`: one table each."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cloudtrain.job_states import JobState

#: A finished workload's condition (type, reason) → cloudtrain's state; reason None: any other.
ENDED: Mapping[tuple[str, str | None], JobState] = {
    ("Complete", None): JobState.SUCCEEDED,  # batch/v1 Job
    ("Completed", None): JobState.SUCCEEDED,  # JobSet
    ("Failed", "DeadlineExceeded"): JobState.TIMED_OUT,
    # a Job counts only disruptions (its pod failure policy fails it at once on any other exit): out of retries
    ("Failed", "BackoffLimitExceeded"): JobState.PREEMPTED,
    ("Failed", None): JobState.FAILED,
}
#: A pod's waiting reasons that never resolve by waiting: the job cannot run as asked.
STUCK = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError")


def ended(conditions: list[Any]) -> tuple[JobState, str, str | None] | None:
    """``(state, native state, message)`` from a finished workload's conditions; None: still running."""
    for c in conditions or []:
        kind, status, why = _get(c, "type"), _get(c, "status"), _get(c, "reason")
        if status != "True":
            continue
        state = ENDED.get((kind, why)) or ENDED.get((kind, None))
        if state is not None:
            return state, f"{kind}{f' ({why})' if why else ''}", _get(c, "message")
    return None


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)
