"""Medians with their spread, and ratios that say when they are noise.

Every figure the report publishes is the median of repeated runs with its min–max. A ratio
A / B is the median of the per-repeat ratios (the cases run interleaved, so repeat i of A and of
B saw the same load), with their min–max; when the min–max ranges of A and of B overlap, the
two cannot be told apart on this machine and the ratio is reported as "no measurable
difference". A ratio from fewer than ``MIN_REPEATS`` runs gets no verdict at all.
"""

from __future__ import annotations

import statistics

MIN_REPEATS = 3
NO_DIFFERENCE = "no measurable difference"


def spread(values: list[float]) -> dict:
    """Median, min and max of repeated measurements."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": list(values)}


def ratio(numerator: list[float], denominator: list[float]) -> dict:
    """A / B over interleaved repeats: median of the paired ratios, their min–max and a verdict."""
    pairs = [a / b for a, b in zip(numerator, denominator)]
    out = spread(pairs)
    out["repeats"] = len(pairs)
    if len(pairs) < MIN_REPEATS:
        out["verdict"] = f"{len(pairs)} run(s): too few for a verdict"
    elif max(min(numerator), min(denominator)) <= min(max(numerator), max(denominator)):
        out["verdict"] = NO_DIFFERENCE
    else:
        out["verdict"] = "faster" if out["median"] > 1 else "slower"
    return out


def fmt_ratio(r: dict | float) -> str:
    """``1.23× (1.10–1.31, 5 runs)``; a bare float (an old results file) says it has no spread."""
    if not isinstance(r, dict):
        return f"{r:.2f}× (single figure, no spread)"
    return f"{r['median']:.2f}× ({r['min']:.2f}–{r['max']:.2f}, {r['repeats']} runs)"
