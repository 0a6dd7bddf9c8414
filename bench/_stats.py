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


def overlap(a: list[float], b: list[float]) -> bool:
    """Whether the min–max ranges of two sets of runs overlap (then they cannot be told apart)."""
    return max(min(a), min(b)) <= min(max(a), max(b))


def verdict(a: list[float], b: list[float], higher: str, lower: str) -> str:
    """``higher`` / ``lower`` when every run of A is above / below every run of B, else no difference."""
    runs = min(len(a), len(b))
    if runs < MIN_REPEATS:
        return f"{runs} run(s): too few for a verdict"
    if overlap(a, b):
        return NO_DIFFERENCE
    return higher if min(a) > max(b) else lower


def ratio(numerator: list[float], denominator: list[float]) -> dict:
    """A / B over interleaved repeats: median of the paired ratios, their min–max and a verdict."""
    pairs = [a / b for a, b in zip(numerator, denominator, strict=True)]
    out = spread(pairs)
    out["repeats"] = len(pairs)
    out["verdict"] = verdict(numerator, denominator, "faster", "slower")
    return out


def fmt_spread(s: dict, fmt: str = "{:.2f}") -> str:
    """``1.23 (1.10–1.31)``: a median with its min–max."""
    return f"{fmt.format(s['median'])} ({fmt.format(s['min'])}–{fmt.format(s['max'])})"


def fmt_ratio(r: dict | float) -> str:
    """``1.23× (1.10–1.31, 5 runs)``; a bare float (an old results file) says it has no spread."""
    if not isinstance(r, dict):
        return f"{r:.2f}× (single figure, no spread)"
    return f"{r['median']:.2f}× ({r['min']:.2f}–{r['max']:.2f}, {r['repeats']} runs)"


def compare(ours: list[float], theirs: list[float]) -> str:
    """A figure of ours against another tool's over repeats (seeds), where a ratio means nothing
    (counts that may be 0): "lower" or "higher" for ours, or "no measurable difference" when
    the two min–max ranges overlap; fewer than ``MIN_REPEATS`` on either side: no verdict."""
    if min(len(ours), len(theirs)) < MIN_REPEATS:
        return f"{min(len(ours), len(theirs))} run(s): too few for a verdict"
    if max(min(ours), min(theirs)) <= min(max(ours), max(theirs)):
        return NO_DIFFERENCE
    return "lower" if statistics.median(ours) < statistics.median(theirs) else "higher"


def summarize(
    runs: list[dict],
    group: tuple[str, ...],
    figures: tuple[str, ...],
    verdict_figures: tuple[str, ...],
    who: str = "follower",
    ours: str = "cloudtrain",
) -> list[dict]:
    """Repeated runs (one dict of figures each) → one row per ``group`` key: each figure's
    :func:`spread` over the runs, and for every ``who`` other than ``ours`` a verdict per
    ``verdict_figures`` from :func:`compare` against ``ours`` in the same group."""
    groups: dict[tuple, list[dict]] = {}
    for run in runs:
        groups.setdefault(tuple(run[k] for k in group), []).append(run)
    rows = []
    for key, rs in groups.items():
        row = dict(zip(group, key, strict=True), runs=len(rs))
        for fig in figures:
            values = [r[fig] for r in rs if r.get(fig) is not None]
            if values:
                row[fig] = spread(values)
        mine = groups.get(tuple(ours if k == who else v for k, v in zip(group, key, strict=True)))
        if mine and row.get(who) != ours:
            row["verdicts"] = {
                fig: compare(
                    [r[fig] for r in mine if r.get(fig) is not None], [r[fig] for r in rs if r.get(fig) is not None]
                )
                for fig in verdict_figures
            }
        rows.append(row)
    return rows
