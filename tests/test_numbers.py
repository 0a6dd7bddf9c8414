"""Numbers for people: measured values to 4 significant digits, money to cents, counts exact."""

from __future__ import annotations

import pytest

from cloudtrain.text.numbers import count, measured, money


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (0.0001694044709524275, "0.0001694"),  # a sweep's learning rate
        (0.98112345, "0.9811"),
        (123.456, "123.5"),
        (1234.56, "1,235"),
        (12345.6, "12,350"),
        (999.96, "1,000"),
        (2.0, "2"),
        (1.694e-07, "1.694e-07"),
        (-0.5, "-0.5"),
        (0.0, "0"),
        (64, "64"),  # an int parameter (a batch size) is exact
        (123456789, "123,456,789"),
        ("adam", "adam"),
        (None, ""),
    ],
)
def test_measured_values_have_four_significant_digits(value, shown):
    assert measured(value) == shown


def test_money_is_to_the_cent_and_counts_are_exact():
    assert money(0.1149) == "$0.11" and money(1234.5) == "$1,234.50" and money(None) is None
    assert count(19446) == "19,446"


def test_sizes_have_binary_units_and_four_significant_digits():
    from cloudtrain.text.numbers import size

    assert [size(n) for n in (512, 18_637, 432_345_678, 2_077_000_000)] == [
        "512 bytes",
        "18.2 KiB",
        "412.3 MiB",
        "1.934 GiB",
    ]
