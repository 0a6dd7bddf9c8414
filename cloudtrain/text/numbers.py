"""Numbers as people read them, the one place that decides how a number is shown: :func:`measured`, :func:`money`,
:func:`count`, :func:`size`, :func:`duration`; ``-o json`` keeps full precision."""

from __future__ import annotations

import math
from typing import Any, overload

SIGNIFICANT = 4


def measured(value: Any) -> str:
    """``0.0001694044709524275`` → ``0.0001694``; ``12345.6`` → ``12,350``; ints exact; else ``str()``."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):
        return count(value)
    if not math.isfinite(value):
        return str(value)
    rounded = float(f"{value:.{SIGNIFICANT}g}")
    if abs(rounded) >= 10 ** (SIGNIFICANT - 1):  # a whole number once rounded: grouped, no exponent
        return f"{rounded:,.0f}"
    return f"{value:.{SIGNIFICANT}g}"  # 0.0001694, 0.9811, 123.5, 2, 1.694e-07


@overload
def money(value: float) -> str: ...
@overload
def money(value: None) -> None: ...
@overload
def money(value: float | None) -> str | None: ...
def money(value: float | None) -> str | None:
    """``$1,234.56``; None stays None (a row that shows nothing)."""
    return None if value is None else f"${value:,.2f}"


def count(value: int) -> str:
    """``19446`` → ``19,446``: counts, bytes and steps are exact."""
    return f"{value:,}"


def size(n: int) -> str:
    """``1.934 GiB``, ``412.3 MiB``, ``18.2 KiB``, ``512 bytes``."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{measured(n / scale)} {unit}"
    return f"{n} bytes"


def duration(seconds: float) -> str:
    """``5400`` → ``1 h 30 min``, ``190800`` → ``2 d 5 h``: the largest two whole units; hours up to ``24 h``."""
    total = round(seconds)
    if total < 60:
        return f"{total} s"
    minutes = round(total / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, rest = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h" + (f" {rest} min" if rest else "")
    days, rest = divmod(round(minutes / 60), 24)
    return f"{days} d" + (f" {rest} h" if rest else "")


def seconds(value: float) -> str:
    """A duration as people read it: ``0.268 s``, ``17.7 s``, ``3 min 5 s``."""
    return f"{value:.3g} s" if value < 100 else human_seconds(value)


def human_seconds(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"
