"""Learning rate per epoch: optional linear warmup, then a decay schedule.

Per epoch rather than per step so a run resumed from an epoch checkpoint gets
exactly the rate it would have had. Warmup matters with linear LR scaling: a
rate multiplied by 8 replicas can diverge in the first epoch (Goyal et al.,
"Accurate, Large Minibatch SGD", 2017). No TensorFlow here.
"""

from __future__ import annotations

import math

from trainer.errors import TrainerError

SCHEDULES = ("constant", "step", "cosine")


def learning_rate(epoch: int, epochs: int, peak: float, schedule: str = "cosine", warmup_epochs: int = 0) -> float:
    """Rate for 1-based ``epoch`` of ``epochs``.

    ``step`` is the source tutorial's decay: x0.1 after the first 1/4 of the run
    and again after 7/12 (epochs 3 and 7 of its 12). ``cosine`` decays to 1 % of
    the peak at the last epoch.
    """
    if schedule not in SCHEDULES:
        raise TrainerError(f"--lr-schedule {schedule!r} is not one of {', '.join(SCHEDULES)}")
    if not 1 <= epoch <= max(epochs, 1):
        raise ValueError(f"epoch {epoch} outside 1..{epochs}")
    if warmup_epochs and epoch <= warmup_epochs:
        return peak * epoch / (warmup_epochs + 1)
    if schedule == "constant":
        return peak
    if schedule == "step":
        if epoch > math.ceil(epochs * 7 / 12):
            return peak * 0.01
        if epoch > math.ceil(epochs / 4):
            return peak * 0.1
        return peak
    span = max(epochs - warmup_epochs - 1, 1)
    progress = min(max(epoch - warmup_epochs - 1, 0) / span, 1.0)
    floor = 0.01 * peak
    return floor + (peak - floor) * 0.5 * (1 + math.cos(math.pi * progress))
