"""SageMaker's job description as cloudtrain's phases and interruptions: its ``SecondaryStatusTransitions``
read as the start marks of the timeline's phases (:mod:`cloudtrain.following.timeline`) and as the spot interruptions
the run report counts (:mod:`cloudtrain.following.interruptions`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

#: SageMaker SecondaryStatus → phase (statuses not listed end the previous phase without a new one).
SAGEMAKER_PHASES = {
    "Pending": "queued",
    "Starting": "provisioning",
    "LaunchingMLInstances": "provisioning",
    "PreparingTrainingStack": "provisioning",
    "Downloading": "provisioning",  # the input channels: still before the code runs
    "DownloadingTrainingImage": "pulling image",
    "Training": "installing package",  # the launcher pip-installs first; the plan event starts training
    "Uploading": "uploading",
}


def sagemaker_marks(desc: Mapping[str, Any]) -> dict[str, dt.datetime]:
    """The phases' start marks: queued at ``CreationTime``, then each phase at its first transition."""
    marks: dict[str, dt.datetime] = {}
    if desc.get("CreationTime"):
        marks["queued"] = desc["CreationTime"]
    for transition in desc.get("SecondaryStatusTransitions") or []:
        phase = SAGEMAKER_PHASES.get(transition.get("Status", ""))
        if phase and transition.get("StartTime") and phase not in marks:
            marks[phase] = transition["StartTime"]
    return marks


def sagemaker_transitions(transitions: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each ``Interrupted`` transition: when, and when ``Training`` started again (None if not yet)."""
    found: list[dict[str, Any]] = []
    pending: dict[str, Any] | None = None
    for t in transitions:
        status, start = t.get("Status"), t.get("StartTime")
        if status == "Interrupted":
            pending = {"at": _iso(start), "resumed_at": None, "source": "SageMaker SecondaryStatus Interrupted"}
            found.append(pending)
        elif status == "Training" and pending is not None:
            pending["resumed_at"] = _iso(start)
            pending = None
    return found


def _iso(value: Any) -> str | None:
    return value.isoformat() if isinstance(value, dt.datetime) else value
