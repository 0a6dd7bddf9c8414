"""A sweep's trials as one table, whichever engine ran them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class TrialRow:
    trial: str  # the engine's trial id ("0", "1", … locally and on Vertex; the training job on SageMaker)
    state: str  # COMPLETE | RUNNING | PRUNED | FAIL | STOPPED | …
    value: float | None
    params: dict[str, Any] = field(default_factory=dict)
    job_id: str | None = None
    message: str | None = None


@dataclass(frozen=True)
class SweepResults:
    sweep_id: str
    metric: str
    goal: str  # maximize | minimize
    state: str
    trials: tuple[TrialRow, ...]
    max_trials: int | None = None
    scales: dict[str, str] = field(default_factory=dict)  # parameter → linear | log | reverse_log, where known

    @property
    def best(self) -> TrialRow | None:
        scored = [(t.value, t) for t in self.trials if t.value is not None and t.state == "COMPLETE"]
        if not scored:
            return None
        pick = max if self.goal == "maximize" else min
        return pick(scored, key=lambda pair: pair[0])[1]  # the first of equal values, as before

    def to_dict(self) -> dict[str, Any]:
        best = self.best
        return {
            "sweep_id": self.sweep_id,
            "metric": self.metric,
            "goal": self.goal,
            "state": self.state,
            "max_trials": self.max_trials,
            "best_trial": best.trial if best else None,
            "best_value": best.value if best else None,
            "trials": [asdict(t) for t in self.trials],
        }

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in self.trials:
            out[t.state] = out.get(t.state, 0) + 1
        return out


def from_study(sweep_id: str, study: Any, metric: str, goal: str, max_trials: int | None, state: str) -> SweepResults:
    rows = []
    for t in study.trials:
        name = t.state.name
        if t.user_attrs.get("interrupted"):
            name = "INTERRUPTED"
        rows.append(
            TrialRow(
                str(t.number),
                name,
                t.value if t.values else None,
                dict(t.params),
                t.user_attrs.get("job_id"),
                t.user_attrs.get("message"),
            )
        )
    return SweepResults(sweep_id, metric, goal, state, tuple(rows), max_trials)
