"""A job's start-up and run as phases (queued, provisioning, pulling image, installing package, starting TensorFlow,
training, uploading): one vocabulary for the summary, history, the status line and the report. A phase lasts until the
next mark; training starts at the first line that says the user's code runs (:func:`training_start`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cloudtrain.following import setup_lines as setup_output
from cloudtrain.following.events import parse as parse_event
from cloudtrain.text.numbers import human_seconds

PHASES = (
    "queued",
    "provisioning",
    "pulling image",
    "installing package",
    "starting TensorFlow",
    "training",
    "uploading",
)
#: The phases before the user's code runs: the first line that is not the set-up's ends them.
SETUP_PHASES = PHASES[: PHASES.index("training")]

#: The marks that say the user's code runs (its first event, the launcher starting its module, its first own
#: line): training starts at the earliest, unless a caller's ``training`` mark wins.
TRAINING_STARTS = ("first event", "user code launched", "first output")


@dataclass(frozen=True)
class Phase:
    name: str
    start: dt.datetime
    end: dt.datetime

    @property
    def seconds(self) -> float:
        return max(0.0, (self.end - self.start).total_seconds())

    def to_dict(self) -> dict[str, Any]:
        return {
            "phase": self.name,
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "seconds": round(self.seconds, 3),
        }


def build(marks: Mapping[str, dt.datetime], end: dt.datetime | None) -> list[Phase]:
    """Phases from their marks in :data:`PHASES` order; a mark before the previous one (clock skew) moves up to it."""
    every: dict[str, dt.datetime | None] = {**marks, "training": training_start(marks)}
    known = [(name, mark) for name in PHASES if (mark := every.get(name)) is not None]
    if not known:
        return []
    fixed: list[tuple[str, dt.datetime]] = []
    for name, at in known:
        if fixed and at < fixed[-1][1]:
            at = fixed[-1][1]
        fixed.append((name, at))
    end = max(end or fixed[-1][1], fixed[-1][1])
    return [Phase(name, at, fixed[i + 1][1] if i + 1 < len(fixed) else end) for i, (name, at) in enumerate(fixed)]


def training_start(marks: Mapping[str, dt.datetime]) -> dt.datetime | None:
    """When training started: a caller's ``training`` mark, else the earliest of :data:`TRAINING_STARTS` (None while
    setting up): one rule for the timeline, report and status line."""
    if marks.get("training") is not None:
        return marks["training"]
    found = [marks[k] for k in TRAINING_STARTS if marks.get(k) is not None]
    return min(found) if found else None


def log_marks(lines: Iterable[Any]) -> dict[str, dt.datetime]:
    """Marks from log lines (``LogLine``): the first line of any replica, the plan and done events."""
    marks: dict[str, dt.datetime] = {}
    for line in lines:
        mark_line(marks, line)
    return marks


def mark_line(marks: dict[str, dt.datetime], line: Any) -> None:
    """Add what one line says: any first line starts the install, done the upload; the first event,
    the launch and the first own line are where training may start (see :data:`TRAINING_STARTS`)."""
    marks.setdefault("installing package", line.timestamp)
    kind = event_kind(line.message)
    if kind in ("done", "worker_done"):
        marks.setdefault("uploading", line.timestamp)
    if kind is not None:
        marks.setdefault("first event", line.timestamp)
    elif setup_output.launches_user_code(line.message):
        marks.setdefault("user code launched", line.timestamp)
    elif not setup_output.is_setup(line.replica, line.message):
        marks.setdefault("first output", line.timestamp)


def event_kind(message: str) -> str | None:
    event = parse_event(message)
    return None if event is None else event.get("event")


def merge(*sources: Mapping[str, dt.datetime]) -> dict[str, dt.datetime]:
    """The first source that knows a phase wins (pass the most exact first)."""
    out: dict[str, dt.datetime] = {}
    for source in sources:
        for name, at in source.items():
            out.setdefault(name, at)
    return out


def cost_shares(phases: list[Phase], cost_per_hour: float | None) -> list[dict[str, Any]]:
    """Each phase with its seconds, share of the run and cost (machines bill from provisioning on)."""
    total = sum(p.seconds for p in phases) or 1.0
    rows = []
    for p in phases:
        billed = p.name != "queued"
        cost = None if cost_per_hour is None or not billed else cost_per_hour * p.seconds / 3600
        rows.append(p.to_dict() | {"share": round(p.seconds / total, 4), "cost_usd": cost})
    return rows


def describe(phases: list[Phase]) -> str:
    """One line: ``queued 12 s · provisioning 1 min 40 s · …``."""
    return " · ".join(f"{p.name} {human_seconds(p.seconds)}" for p in phases)


def status_marks(status: Any) -> dict[str, dt.datetime]:
    """Marks a :class:`~cloudtrain.backends.base.JobStatus` knows: its ``phase_marks``, else its creation (starting
    ``first_phase``, the backend's) and ``started`` (Vertex AI's ``start_time``: the image is being pulled)."""
    phase_marks = status.detail("phase_marks")
    if phase_marks:
        return dict(phase_marks)
    marks: dict[str, dt.datetime] = {}
    if status.created is not None:
        marks[status.first_phase] = status.created
    started = status.detail("started")
    if started:
        marks["pulling image"] = started
    return marks


def of_run(status: Any, lines_marks: Mapping[str, dt.datetime]) -> list[Phase]:
    """A job's phases: its status's marks refined by its log's (one uploading nothing trains until its end)."""
    own = status_marks(status)
    marks = merge(own, lines_marks)
    if status.first_phase in PHASES:  # the log's "installing package" is no phase of a job that starts later
        for earlier in PHASES[: PHASES.index(status.first_phase)]:
            if earlier not in own:
                marks.pop(earlier, None)
    if status.detail("uploads_outputs") is False:
        marks.pop("uploading", None)
    return build(marks, status.ended)
