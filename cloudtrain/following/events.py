"""The trainer's event lines (``{"event": …}``, see trainer/events.py) as they arrive in a job's log."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

PREFIX = '{"event"'


def parse(message: str) -> dict[str, Any] | None:
    """The event of one log line, or None for any other line (and for a torn or invalid one)."""
    if not message.startswith(PREFIX):
        return None
    try:
        event = json.loads(message)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None


_EPOCHS_ARG = re.compile(r"--?epochs(?:=(\d+))?")


def epochs_in_args(args: Sequence[str]) -> int | None:
    """The epoch total a job was given: ``--epochs=N`` or ``--epochs N`` in its args (a hyperparameter
    ``epochs`` becomes ``--epochs=N`` there too); the last one wins, as with argparse. None if absent."""
    total = None
    for i, arg in enumerate(args):
        m = _EPOCHS_ARG.fullmatch(arg)
        if not m:
            continue
        value = m[1] if m[1] is not None else (args[i + 1] if i + 1 < len(args) else "")
        total = int(value) if value.isdigit() else total
    return total


#: The main metric of a job, the first of these it has (as the live line's; loss when it has none of them).
MAIN_METRICS = ("val_accuracy", "accuracy", "val_loss", "loss")


def main_metric(metrics: dict[str, Any] | None) -> tuple[str, float] | None:
    """The job's main metric and its value, the first of :data:`MAIN_METRICS` it has; None when it has none."""
    for name in MAIN_METRICS:
        value = (metrics or {}).get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return name, float(value)
    return None
