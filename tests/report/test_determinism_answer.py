"""The determinism answer's word on cudnn.benchmark: where re-runs were bitwise equal with
deterministic off (benchmark off), it says what re-runs did with benchmark on, from the
configurations re-run that way, and nothing where it would only repeat the answer."""

from __future__ import annotations

import pandas as pd

from bench.report.judge.machines import unknown_machine
from bench.report.questions.determinism.model import (
    DeterminismSection,
    Reruns,
    _benchmark_checks,
    reruns,
)
from bench.report.questions.determinism.view import _benchmark_text, rerun_text


def _checks() -> pd.DataFrame:
    return pd.DataFrame({
        "cudnn_benchmark": ["off", "off", "on", "on", "on"],
        "cudnn_deterministic": ["off", "on", "off", "off", "on"],
        "n_ok_checks": [1, 1, 1, 0, 1],
        "bitwise_equal": pd.array([True, True, False, pd.NA, True], dtype="boolean"),
        "max_abs_diff": [0.0, 0.0, 0.351, float("nan"), 0.0],
    })


def _section(equal_off: bool | None, checked: int, differ: int) -> DeterminismSection:
    return DeterminismSection(unknown_machine("box"), equal_off=equal_off,
                              benchmark_checked=checked, benchmark_differ=differ,
                              benchmark_max_diff=0.351)


def test_only_ok_checks_with_benchmark_on_and_deterministic_off_count() -> None:
    got = _benchmark_checks(_checks())
    assert list(got["max_abs_diff"]) == [0.351]  # not the one without an ok check, nor det on
    assert _benchmark_checks(None).empty


def test_benchmark_on_re_runs_that_differ_are_named_where_benchmark_off_was_equal() -> None:
    text = _benchmark_text(_section(True, 1, 1))
    assert "re-runs differed in 1 of 1 configuration checked (largest absolute difference 0.351)" \
        in text
    assert "bitwise re-runs also needed cudnn.benchmark off" in text
    assert "bitwise equal too (2 configurations checked)" in _benchmark_text(_section(True, 2, 0))


def test_nothing_is_added_where_it_would_not_be_true_or_new() -> None:
    assert _benchmark_text(_section(False, 1, 1)) == ""  # benchmark off did not give it either
    assert _benchmark_text(_section(None, 1, 1)) == ""
    assert _benchmark_text(_section(True, 0, 0)) == ""


def test_a_benchmark_rerun_with_no_check_with_it_off_says_so() -> None:
    """No benchmark-off check to hold it against: it read "the check with it off differs in
    no check with it off too"."""
    s = DeterminismSection(unknown_machine("box"), equal_off=True, benchmark_checked=1,
                           benchmark_differ=1, benchmark_max_diff=0.351,
                           benchmark_unpaired=True)
    text = _benchmark_text(s)
    assert "but no check with it off was run beside it, so whether cudnn.benchmark made the " \
           "difference is not told here." in text
    assert "differs in" not in text


def test_the_re_run_checks_are_counted_over_those_that_ended_ok() -> None:
    """The model counts; the view says it (the largest difference where one was not equal)."""
    found = reruns(_checks())
    assert found == Reruns(ok=4, equal=3, max_diff=0.351)
    assert rerun_text(found) == ("two fresh processes gave bitwise-equal results in 3 of 4 "
                                 "configurations checked (the others differed, max |Δ| 0.351)")
    assert rerun_text(Reruns()) == "no re-run check ended ok"
    assert rerun_text(Reruns(ok=1, equal=1, max_diff=0.0)) == (
        "two fresh processes gave bitwise-equal results in the configuration checked")
