"""Numbers as printed: the unit and the decimals follow the value as rounded, not the raw one."""

from __future__ import annotations

import pytest

from bench.report import fmt


@pytest.mark.parametrize(("value", "text"), [
    (0.0009996, "1.00 ms"),  # not "1,000 µs"
    (-0.0009996, "-1.00 ms"),
    (0.9999996e-6 * 1000, "1.00 ms"),
    (0.9996, "1.00 s"),  # not "1,000 ms"
    (0.000999, "999 µs"),
    (0.0412, "41.2 ms"),
    (2.134, "2.13 s"),
    (1234.5, "1,234 s"),
    (0.0, "0 µs"),
])
def test_a_duration_takes_the_unit_of_its_rounded_value(value, text) -> None:
    assert fmt.seconds(value) == text


@pytest.mark.parametrize(("value", "text"), [
    (9.999, "10.0×"),  # not "10.00×"
    (99.96, "100×"),  # not "100.0×"
    (9.994, "9.99×"),
    (99.94, "99.9×"),
])
def test_a_ratio_takes_the_decimals_of_its_rounded_value(value, text) -> None:
    assert fmt.ratio(value) == text


def test_an_interval_takes_its_larger_ends_decimals_unless_the_smaller_would_lose_them() -> None:
    assert fmt.ci(9.2, 9.999) == "9.2–10.0×"
    assert fmt.ci(0.508, 243.2) == "0.51–243×"  # not "1–243×", which excludes 0.87×
    assert fmt.ci(0.0053, 190.9) == "0.0053–191×"
    assert fmt.ratio(0.0053) == "0.0053×" and fmt.ratio(0.05) == "0.050×"


@pytest.mark.parametrize(("value", "text"), [
    (99.96, "100"), (9.996, "10.0"), (0.09996, "0.100"), (12.345, "12.3"), (1234.5, "1,234"),
])
def test_a_number_keeps_three_significant_digits_after_rounding(value, text) -> None:
    assert fmt.num(value) == text


@pytest.mark.parametrize(("value", "text"), [
    (1023.7, "1.00 KiB"), (1023.4, "1,023 B"), (1024.0**3 * 0.99999, "1.00 GiB"),
])
def test_bytes_move_up_a_unit_when_they_round_to_1024(value, text) -> None:
    assert fmt.bytes_(value) == text



def test_a_count_agrees_with_its_noun() -> None:
    assert fmt.count(1, "run") == "1 run"
    assert fmt.count(2, "run") == "2 runs"
    assert fmt.count(0, "machine fingerprint") == "0 machine fingerprints"
    assert fmt.count(1200, "row") == "1,200 rows"
    assert fmt.count(1, "bad row or file", "bad rows or files") == "1 bad row or file"
    assert fmt.count(3, "bad row or file", "bad rows or files") == "3 bad rows or files"


@pytest.mark.parametrize(
    ("low", "high", "text"),
    [
        (1.141, 1.1449, "1.141–1.145×"),  # 1.14–1.14× would be no interval at all
        (1.1401, 1.1403, "1.1401–1.1403×"),
        (237.6, 238.3, "237.6–238.3×"),
        (0.00531, 0.00532, "0.00531–0.00532×"),  # below 0.1×: two decimals more than its own
        (1.14, 1.14000001, "within 0.0001× of 1.1400×"),  # apart, but not at 4 decimals
        (1.14, 1.14, fmt.IDENTICAL),  # identical replicates: no fake interval
        (1.18, 1.29, "1.18–1.29×"),  # as before where two decimals tell the ends apart
    ],
)
def test_an_intervals_ends_never_read_the_same(low, high, text) -> None:
    assert fmt.ci(low, high) == text
    assert fmt.IDENTICAL == "replicates identical"


def test_a_ratio_beside_its_interval_takes_the_intervals_decimals() -> None:
    assert fmt.ratio(1.1402, 1.1401, 1.1403) == "1.1402×"
    assert fmt.ratio(1.1447, 1.1441, 1.1449) == "1.145×"  # beside 1.144–1.145×, not 1.14×
    assert fmt.ratio(1.23, 1.18, 1.29) == "1.23×"
    assert fmt.ratio(1.04, 1.04, 1.04) == "1.04×"  # identical replicates: its own digits
    assert fmt.ratio(1.04, None, None) == fmt.ratio(1.04) == "1.04×"
    assert fmt.estimate(1.1402, 1.1401, 1.1403) == "1.1402× (1.1401–1.1403×)"
    assert fmt.estimate(1.04, 1.04, 1.04) == "1.04× (replicates identical)"
    assert fmt.estimate(1.23, None, None) == "1.23× (—)"
