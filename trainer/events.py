"""Machine-readable progress: one JSON object per line on stdout.

Every line starts with ``{"event": `` so the CLI can pick them out of mixed
logs. Events: ``plan`` (once, the resolved plan), ``epoch`` (after each epoch's
checkpoint is written), ``benchmark`` (``--benchmark`` only), ``done`` (last,
from the chief), ``worker_done`` (last, from each non-chief worker) and
``preempted`` (instead of ``done`` when a notice stopped the run: the step and
checkpoint saved, exit status 5). No
TensorFlow here.
"""

from __future__ import annotations

import json
import math
import sys
from typing import TextIO

PREFIX = '{"event"'


def _clean(value: object) -> object:
    """JSON has no NaN/inf: report them as null rather than emit invalid JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def format_event(event: str, **fields: object) -> str:
    return json.dumps({"event": event, **{k: _clean(v) for k, v in fields.items()}}, allow_nan=False, default=str)


def emit(event: str, stream: TextIO | None = None, **fields: object) -> None:
    print(format_event(event, **fields), file=stream or sys.stdout, flush=True)


def parse_events(text: str) -> list[dict]:
    """The inverse, for tests and the CLI: every event line in ``text``, in order."""
    return [json.loads(line) for line in text.splitlines() if line.startswith(PREFIX)]
