"""bench/_stats.py: a ratio carries its spread and says when it is noise."""

from __future__ import annotations

import pytest

from bench._stats import NO_DIFFERENCE, fmt_ratio, fmt_spread, ratio, spread, verdict


def test_spread_is_median_min_max():
    assert spread([3.0, 1.0, 2.0]) == {"median": 2.0, "min": 1.0, "max": 3.0, "runs": [3.0, 1.0, 2.0]}


def test_ratio_is_the_median_of_paired_runs():
    r = ratio([200.0, 220.0, 180.0], [100.0, 100.0, 100.0])
    assert (r["median"], r["min"], r["max"], r["repeats"]) == (2.0, 1.8, 2.2, 3)
    assert r["verdict"] == "faster" and fmt_ratio(r) == "2.00× (1.80–2.20, 3 runs)"
    assert ratio([50.0, 55.0, 45.0], [100.0, 101.0, 99.0])["verdict"] == "slower"


def test_overlapping_ranges_are_no_measurable_difference():
    # the paired ratios all say "faster", but the two sides' ranges overlap: noise
    assert ratio([101.0, 120.0, 110.0], [100.0, 119.0, 109.0])["verdict"] == NO_DIFFERENCE


@pytest.mark.parametrize("n", [1, 2])
def test_too_few_runs_get_no_verdict(n):
    assert ratio([200.0] * n, [100.0] * n)["verdict"] == f"{n} run(s): too few for a verdict"


def test_a_bare_float_says_it_has_no_spread():
    assert fmt_ratio(1.5) == "1.50× (single figure, no spread)"


def test_a_verdict_compares_two_sets_of_runs_where_a_ratio_cannot():
    """Steps redone: 0 with the notice save, so no ratio; the ranges still say which is fewer."""
    assert verdict([0.0, 0.0, 0.0], [12.0, 36.0, 50.0], "more", "fewer") == "fewer"
    assert verdict([40.0, 60.0, 50.0], [12.0, 36.0, 30.0], "more", "fewer") == "more"
    assert verdict([0.0, 20.0, 0.0], [12.0, 36.0, 50.0], "more", "fewer") == NO_DIFFERENCE
    assert verdict([0.0, 0.0], [12.0, 36.0], "more", "fewer") == "2 run(s): too few for a verdict"
    assert fmt_spread(spread([2.5, 2.1, 2.9])) == "2.50 (2.10–2.90)"
