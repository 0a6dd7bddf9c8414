"""The trainer's event lines (``{"event": …}``, see trainer/events.py) as they arrive in a job's log."""

from __future__ import annotations

import json
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
