"""How often a watcher asks the Slurm controller about a job: backoff while nothing changes, slower on a slow cluster.

Each ``scontrol``/``squeue`` is an RPC to slurmctld, shared by every user of the cluster: a watcher starts at
:data:`FIRST_S` after a change, doubles up to :data:`STEADY_S` (≈ 9.4 calls a minute in steady state), waits at
least :data:`SLOW_FACTOR` times the controller's answer time, and asks at once when the run folder says the job
ended. Delays come from :class:`cloudtrain.backoff.Backoff`."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from cloudtrain.backoff import Backoff

FIRST_S = 1.0
STEADY_S = 8.0
SLOW_FACTOR = 10.0  # a controller that took 2 s to answer is asked again after 20 s at the soonest


@dataclass
class ControllerPoll:
    """Whether it is time to ask the controller again; :meth:`asked` after each call, with what it said."""

    clock: Callable[[], float] = time.monotonic
    backoff: Backoff = field(
        default_factory=lambda: Backoff(initial=FIRST_S, cap=STEADY_S, factor=2.0, spread=(0.8, 1.0))
    )
    _unchanged: int = 0
    _last: object = None
    _next: float = 0.0

    def due(self) -> bool:
        return self.clock() >= self._next

    def asked(self, answer: object, took_s: float) -> None:
        """After a call that took ``took_s`` and said ``answer`` (a state): when to ask next."""
        self._unchanged = self._unchanged + 1 if answer == self._last else 1
        self._last = answer
        wait = max(self.backoff.delay(self._unchanged), SLOW_FACTOR * took_s)
        self._next = self.clock() + wait

    def wait_s(self) -> float:
        return self._next - self.clock()

    def now(self) -> None:
        """Ask at the next chance (the run folder says the job ended)."""
        self._next = 0.0
