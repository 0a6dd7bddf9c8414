"""A job's interruptions (spot preemptions, platform restarts) and the work each one cost, from the clouds' own
transitions and the trainer's ``preempted``, ``epoch`` and ``plan`` events: steps redone = step reached − step resumed
from; a restart with no ``preempted`` line (a SIGKILL) is a lower bound, ``exact: false``. Pure: lines in, dicts out."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cloudtrain.following.events import parse as parse_event
from cloudtrain.text.numbers import human_seconds

_CKPT_STEP = re.compile(r"ckpt-(\d+)")


@dataclass
class Interruption:
    at: dt.datetime | None  # training stopped (the notice; else the last line the log showed)
    source: str
    step: int | None = None  # the step training had reached
    checkpoint_step: int | None = None  # the newest checkpoint when it stopped
    resumed_at: dt.datetime | None = None  # the restart's plan event (training continues)
    resume_step: int | None = None  # the step the restart continued from
    seconds_per_step: float | None = None
    exact: bool = True

    @property
    def steps_redone(self) -> int | None:
        base = self.resume_step if self.resume_step is not None else self.checkpoint_step
        return None if self.step is None or base is None else max(0, self.step - base)

    @property
    def down_s(self) -> float | None:
        if self.at is None or self.resumed_at is None:
            return None
        return max(0.0, (self.resumed_at - self.at).total_seconds())

    @property
    def redo_s(self) -> float | None:
        steps = self.steps_redone
        return None if steps is None or self.seconds_per_step is None else steps * self.seconds_per_step

    @property
    def seconds_lost(self) -> float | None:
        parts = [p for p in (self.down_s, self.redo_s) if p is not None]
        return round(sum(parts), 3) if parts else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": self.at.isoformat() if self.at else None,
            "source": self.source,
            "step": self.step,
            "checkpoint_step": self.checkpoint_step,
            "resumed_at": self.resumed_at.isoformat() if self.resumed_at else None,
            "resume_step": self.resume_step,
            "steps_redone": self.steps_redone,
            "down_s": _round(self.down_s),
            "redo_s": _round(self.redo_s),
            "seconds_lost": self.seconds_lost,
            "exact": self.exact,
        }


@dataclass
class Tracker:
    """Fed one log line at a time (a live follow, or a finished job's log): the interruptions seen."""

    items: list[Interruption] = field(default_factory=list)
    resumed_from_step: int | None = None  # the first start continued another run's checkpoints (--resume)
    _pending: Interruption | None = None
    _starts: int = 0
    _steps_per_epoch: int | None = None
    _step: int | None = None
    _checkpoint: int | None = None
    _per_step: float | None = None
    _last_at: dt.datetime | None = None

    def __call__(self, line: Any) -> None:
        event = parse_event(line.message)
        if event is None or event.get("replica"):  # the chief's own events only
            return
        kind = event.get("event")
        if kind == "plan":
            self._start(event, line.timestamp)
        elif kind == "epoch":
            self._epoch(event)
        elif kind == "preempted":
            self._preempted(event, line.timestamp)
        if kind in ("plan", "epoch", "preempted"):
            self._last_at = line.timestamp

    def _start(self, event: Mapping[str, Any], at: dt.datetime) -> None:
        resume = _int(event.get("resume_step")) or 0
        self._steps_per_epoch = _int((event.get("batch") or {}).get("steps_per_epoch")) or self._steps_per_epoch
        if self._starts:
            stopped = self._pending or Interruption(
                self._last_at, "restart with no notice in the log", self._step, self._checkpoint, exact=False
            )
            stopped.resumed_at, stopped.resume_step = at, resume
            stopped.seconds_per_step = stopped.seconds_per_step or self._per_step
            if stopped is not self._pending:
                self.items.append(stopped)
        elif resume:
            self.resumed_from_step = resume
        self._pending = None
        self._starts += 1
        self._step = self._checkpoint = resume

    def _epoch(self, event: Mapping[str, Any]) -> None:
        epoch, steps, seconds = _int(event.get("epoch")), _int(event.get("steps")), event.get("epoch_time_s")
        if epoch is not None and self._steps_per_epoch:
            self._step = epoch * self._steps_per_epoch
            if event.get("checkpoint"):
                self._checkpoint = self._step
        if steps and isinstance(seconds, (int, float)) and seconds > 0:
            self._per_step = seconds / steps

    def _preempted(self, event: Mapping[str, Any], at: dt.datetime) -> None:
        step = _int(event.get("step"))
        saved = _CKPT_STEP.search(str(event.get("checkpoint") or ""))
        notice_at = event.get("notice_at")
        when = dt.datetime.fromtimestamp(notice_at, dt.timezone.utc) if isinstance(notice_at, (int, float)) else at
        self._pending = Interruption(
            when,
            f"notice ({event.get('notice') or 'unknown'})",
            step,
            int(saved[1]) if saved else self._checkpoint,
            seconds_per_step=self._per_step,
        )
        self.items.append(self._pending)
        self._step = step

    def feed(self, lines: Iterable[Any]) -> Tracker:
        for line in lines:
            self(line)
        return self


def summarize(
    tracker: Tracker, cloud: Iterable[Mapping[str, Any]] | None = None, *, state: str | None = None
) -> dict[str, Any] | None:
    """``{"count", "steps_redone", "seconds_lost", "items", …}`` or None; ``cloud``: its own record, matched in order
    with the log's; a CANCELLED job's last save is the user's stop."""
    items = list(tracker.items)
    if state == "CANCELLED" and items and items[-1].resumed_at is None:
        items.pop()
    for i, record in enumerate(cloud or []):
        at, resumed = _time(record.get("at")), _time(record.get("resumed_at"))
        if i < len(items):
            item = items[i]
            item.at = item.at or at
            item.resumed_at = item.resumed_at or resumed
            item.source = f"{record.get('source', 'cloud')}; {item.source}"
        else:
            items.append(Interruption(at, str(record.get("source", "cloud")), resumed_at=resumed, exact=False))
    if not items and tracker.resumed_from_step is None:
        return None
    redone = [i.steps_redone for i in items if i.steps_redone is not None]
    lost = [i.seconds_lost for i in items if i.seconds_lost is not None]
    out: dict[str, Any] = {
        "count": len(items),
        "steps_redone": sum(redone) if redone else None,
        "seconds_lost": round(sum(lost), 3) if lost else None,
        "items": [i.to_dict() for i in items],
    }
    if tracker.resumed_from_step is not None:
        out["resumed_from_step"] = tracker.resumed_from_step
    return out


def describe(summary: Mapping[str, Any] | None) -> str | None:
    """One line: ``1 (spot); 12 steps redone, 1 min 4 s lost`` / ``none``."""
    if not summary:
        return None
    parts = []
    if summary.get("count"):
        items = summary["items"]
        resumed = any(i.get("resumed_at") for i in items)  # else: stopped here, continued (if at all) elsewhere
        parts.append(f"{summary['count']}" + ("" if resumed else ", not resumed in this job"))
        if summary.get("steps_redone") is not None:
            approx = "" if all(i.get("exact", True) for i in items) else "at least "
            parts.append(f"{approx}{summary['steps_redone']:,} steps " + ("redone" if resumed else "to redo"))
        if summary.get("seconds_lost") is not None and resumed:
            parts.append(f"{human_seconds(summary['seconds_lost'])} lost")
    else:
        parts.append("none in this job")
    if summary.get("resumed_from_step"):
        parts.append(f"started from a checkpoint at step {summary['resumed_from_step']:,}")
    return "; ".join(parts)


def _time(value: Any) -> dt.datetime | None:
    if isinstance(value, dt.datetime):
        return value
    try:
        return dt.datetime.fromisoformat(value) if value else None
    except (TypeError, ValueError):
        return None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def of_status(status: Any, lines: Iterable[Any]) -> dict[str, Any] | None:
    """A job's interruptions from its status (a ``JobStatus``) and its log lines."""
    return summarize(Tracker().feed(lines), status.detail("interruptions"), state=status.state.value)
