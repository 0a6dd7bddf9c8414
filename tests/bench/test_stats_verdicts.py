"""bench/_stats.py: the verdicts the benchmark report prints, at their boundaries on both sides."""

from __future__ import annotations

import pytest

from bench._stats import (
    MIN_REPEATS,
    NO_DIFFERENCE,
    compare,
    fmt_ratio,
    fmt_spread,
    overlap,
    ratio,
    spread,
    summarize,
    verdict,
)


def test_ranges_that_touch_overlap_and_a_hair_apart_do_not() -> None:
    assert overlap([1.0, 2.0], [2.0, 3.0]) and overlap([2.0, 3.0], [1.0, 2.0])
    assert not overlap([1.0, 2.0], [2.001, 3.0]) and not overlap([2.001, 3.0], [1.0, 2.0])
    assert overlap([1.0, 5.0], [2.0, 3.0]) and overlap([2.0, 3.0], [1.0, 5.0])  # one inside the other


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ([3.0, 4.0, 5.0], [1.0, 2.0, 2.9], "faster"),  # every A above every B, by a hair
        ([3.0, 4.0, 5.0], [1.0, 2.0, 3.0], NO_DIFFERENCE),  # touching: cannot be told apart
        ([1.0, 2.0, 2.9], [3.0, 4.0, 5.0], "slower"),
        ([1.0, 2.0, 3.0], [3.0, 4.0, 5.0], NO_DIFFERENCE),
    ],
)
def test_verdict_at_the_edge_of_the_ranges(a, b, expected) -> None:
    assert verdict(a, b, "faster", "slower") == expected


def test_three_repeats_is_the_least_that_gets_a_verdict_on_the_shorter_side() -> None:
    assert MIN_REPEATS == 3
    assert verdict([5.0, 6.0, 7.0], [1.0, 2.0, 3.0], "faster", "slower") == "faster"
    assert verdict([5.0, 6.0, 7.0], [1.0, 2.0], "faster", "slower") == "2 run(s): too few for a verdict"
    assert verdict([5.0, 6.0], [1.0, 2.0, 3.0], "faster", "slower") == "2 run(s): too few for a verdict"


def test_a_ratio_pairs_repeat_i_of_a_with_repeat_i_of_b() -> None:
    r = ratio([10.0, 30.0, 60.0], [5.0, 10.0, 20.0])  # pairs 2, 3, 3 — not 10/20 or 60/5
    assert (r["median"], r["min"], r["max"], r["runs"]) == (3.0, 2.0, 3.0, [2.0, 3.0, 3.0])
    assert fmt_ratio(r) == "3.00× (2.00–3.00, 3 runs)"


def test_spread_formats_with_the_given_format() -> None:
    assert fmt_spread(spread([1.0, 4.0, 2.0]), "{:.0f}") == "2 (1–4)"
    assert spread([4.0, 1.0, 2.0, 3.0])["median"] == 2.5


@pytest.mark.parametrize(
    ("ours", "theirs", "expected"),
    [
        ([1.0, 2.0, 2.9], [3.0, 4.0, 5.0], "lower"),
        ([3.1, 4.0, 5.0], [1.0, 2.0, 3.0], "higher"),
        ([1.0, 2.0, 3.0], [3.0, 4.0, 5.0], NO_DIFFERENCE),  # touching ranges
        ([3.0, 4.0, 5.0], [1.0, 2.0, 3.0], NO_DIFFERENCE),
        ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], NO_DIFFERENCE),  # counts that are 0 on both sides
    ],
)
def test_compare_says_lower_higher_or_no_difference(ours, theirs, expected) -> None:
    assert compare(ours, theirs) == expected


def test_compare_needs_three_runs_on_each_side() -> None:
    assert compare([1.0, 1.0, 1.0], [9.0, 9.0, 9.0]) == "lower"
    assert compare([1.0, 1.0], [9.0, 9.0, 9.0]) == "2 run(s): too few for a verdict"
    assert compare([1.0, 1.0, 1.0], [9.0]) == "1 run(s): too few for a verdict"


def test_summarize_gives_each_other_tool_a_verdict_against_ours_in_its_group() -> None:
    runs = [
        {"follower": who, "size": size, "lost": lost, "seconds": s}
        for who, size, lost, s in [
            ("cloudtrain", 1, 0, 1.0),
            ("cloudtrain", 1, 0, 2.0),
            ("cloudtrain", 1, 0, 3.0),
            ("gcloud", 1, 5, 1.5),
            ("gcloud", 1, 6, 2.5),
            ("gcloud", 1, 7, None),
            ("cloudtrain", 2, 9, 1.0),
            ("cloudtrain", 2, 9, 1.0),
            ("cloudtrain", 2, 9, 1.0),
            ("gcloud", 2, 1, 1.0),
            ("gcloud", 2, 1, 1.0),
            ("gcloud", 2, 2, 1.0),
        ]
    ]
    rows = summarize(runs, ("follower", "size"), ("lost", "seconds"), ("lost",))
    by = {(r["follower"], r["size"]): r for r in rows}
    assert list(by) == [("cloudtrain", 1), ("gcloud", 1), ("cloudtrain", 2), ("gcloud", 2)]
    assert by[("gcloud", 1)]["runs"] == 3
    assert by[("gcloud", 1)]["lost"] == {"median": 6, "min": 5, "max": 7, "runs": [5, 6, 7]}
    assert by[("gcloud", 1)]["seconds"]["runs"] == [1.5, 2.5]  # a missing figure is left out, not 0
    # the verdict is ours against theirs, in the same size: we lose fewer lines at size 1, more at 2
    assert by[("gcloud", 1)]["verdicts"] == {"lost": "lower"}
    assert by[("gcloud", 2)]["verdicts"] == {"lost": "higher"}
    assert "verdicts" not in by[("cloudtrain", 1)] and "verdicts" not in by[("cloudtrain", 2)]
