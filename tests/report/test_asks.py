"""``bench advise``'s verdicts are the report's: each figure of a judged pair is the one the
report's comparisons, costs and recommendations hold for those rows."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from bench.report.analysis import Analysis, analyse
from bench.report.input.load import Dataset, load_reports
from bench.report.judge import advice, asks
from bench.report.judge.advice.rules import switch_rules
from bench.report.vocabulary import Action, KnobStatus, Verdict

from .builders import FIXTURE_REPORTS

STEPS = 10_000


@pytest.fixture(scope="module")
def ds() -> Dataset:
    return load_reports(FIXTURE_REPORTS)


@pytest.fixture(scope="module")
def a(ds: Dataset) -> Analysis:
    return analyse(ds)


def _pair(a: Analysis, axis: str, **where: str) -> pd.Series:
    rows = a.comparisons[axis]
    for col, value in where.items():
        rows = rows.loc[rows[col].astype(str) == value]
    assert len(rows), f"the fixtures have no {axis} pair with {where}"
    return rows.iloc[0]


def _judge(ds: Dataset, knob: str, axis: str, row: pd.Series) -> asks.KnobAnswer:
    ask = asks.Ask(knob, axis, row["baseline_cell_id"], row["variant_cell_id"])
    (out,) = asks.judge(ds, [ask], STEPS)
    return out


def _same(x: float | None, y: object) -> bool:
    if x is None:
        return pd.isna(y)  # type: ignore[call-overload, no-any-return]
    return math.isclose(x, float(y), rel_tol=0, abs_tol=0) or (math.isinf(x) and x == y)


def _rec_for(recs: list[advice.Recommendation], setting: str, row: pd.Series
             ) -> advice.Recommendation:
    anchor = (row["page"], row["variant_anchor"])
    return next(r for r in recs if r.setting == setting and anchor in r.evidence
                and r.job_length in (None, STEPS))


def test_a_precision_pair_is_the_reports_comparison_and_recommendation(ds: Dataset,
                                                                       a: Analysis) -> None:
    row = _pair(a, "precision", variant_value="amp-bf16", device="cpu", verdict="slower")
    v = _judge(ds, "amp-bf16", "precision", row)
    assert (v.verdict, v.baseline, v.variant) == (row["verdict"], "fp32", "amp-bf16")
    assert all(_same(getattr(v, k), row[k]) for k in ("speedup", "ci_low", "ci_high"))
    assert (v.n_base, v.n_var, v.status, v.reason) == (row["n_base"], row["n_var"], "measured", "")
    rec = _rec_for(advice.recommend(a, job_lengths=(STEPS,)), "precision", row)
    assert (v.recommendation, v.rule, v.caveats) == (rec.action, rec.rule, rec.caveats)
    assert v.recommendation == Action.KEEP_OFF
    assert v.pays_back is False and v.break_even_steps == math.inf  # slower: never


def test_the_benchmark_knob_carries_the_reports_cold_cost_and_break_even(ds: Dataset,
                                                                        a: Analysis) -> None:
    costs = a.benchmark.loc[(a.benchmark["verdict"] == "faster")
                            & (a.benchmark["cudnn_deterministic"] == "off")
                            & (a.benchmark["kernel_cache"] == "fresh")]
    row = costs.iloc[0]
    v = _judge(ds, "cudnn.benchmark", "cudnn_benchmark", row)
    assert _same(v.cold_cost_s, row["extra_cold_pass_max_s"])
    assert _same(v.break_even_steps, row["break_even_iters_high"])
    assert v.pays_back == (row["break_even_iters_high"] <= STEPS)
    assert _same(v.memory_change_bytes, row["extra_whole_peak_mem_allocated_bytes"])
    assert v.memory == "GPU memory allocated"
    rec = _rec_for(advice.recommend(a, job_lengths=(STEPS,)), "cudnn.benchmark", row)
    assert (v.recommendation, v.rule) == (rec.action, rec.rule)


def test_cpu_threads_go_through_the_switch_rule_and_memory_is_the_process_peak(
        ds: Dataset, a: Analysis) -> None:
    row = _pair(a, "cpu_threads")
    assert (row["baseline_value"], row["variant_value"]) == ("all", "1")
    v = _judge(ds, "cpu_threads", "cpu_threads", row)
    assert (v.verdict, v.recommendation) == ("slower", Action.KEEP_OFF)
    assert all(_same(getattr(v, k), row[k]) for k in ("speedup", "ci_low", "ci_high"))
    rec = _rec_for(switch_rules(a.comparisons["cpu_threads"], "cpu_threads"), "cpu_threads", row)
    assert v.rule == rec.rule == "cpu_threads-slower"
    rss = a.cells.set_index(["fingerprint_id", "cell_id"])["peak_rss_bytes"]
    fp = row["fingerprint_id"]
    assert _same(v.memory_change_bytes,
                 rss[(fp, row["variant_cell_id"])] - rss[(fp, row["baseline_cell_id"])])
    assert v.memory == "process peak resident memory"


def test_too_few_replicates_say_how_many_and_why(ds: Dataset, a: Analysis) -> None:
    pairs = pd.concat([a.comparisons[x].assign(_axis=x) for x in ("precision", "memory_format",
                                                                 "cudnn_benchmark")])
    thin = pairs.loc[(pairs["verdict"] == Verdict.INSUFFICIENT)
                     & (pairs["n_var"] < pairs["n_base"])]
    row = thin.iloc[0]
    v = _judge(ds, "knob", str(row["_axis"]), row)
    n = int(row["n_var"])
    assert v.status == KnobStatus.INSUFFICIENT and v.recommendation == Action.INSUFFICIENT
    assert v.reason.startswith(f"too few replicates: {n} of 3 ok (variant: ")
    assert v.ci_low is None and v.ci_high is None


def test_a_pair_without_rows_is_insufficient_not_an_error(ds: Dataset) -> None:
    (v,) = asks.judge(ds, [asks.Ask("amp-bf16", "precision", "nope", "none")], STEPS)
    assert (v.status, v.reason) == (KnobStatus.INSUFFICIENT,
                                    "too few replicates: 0 of 3 ok (no rows)")


def test_a_compile_knob_takes_the_one_off_rule_and_carries_its_breaks(ds: Dataset,
                                                                     a: Analysis) -> None:
    """The fixtures' compiled cells met no break: advise says 0 breaks in 1 graph, and the
    recommendation is the one-off cost's rule for the job's length."""
    row = _pair(a, "compile", device="cpu", verdict="faster", kernel_cache="fresh")
    v = _judge(ds, "torch.compile", "compile", row)
    assert (v.graph_breaks, v.graphs, v.graph_break_reasons, v.breaks_explain) == (0, 1, (),
                                                                                    False)
    pays = v.break_even_steps is not None and v.break_even_steps <= STEPS
    assert (v.rule, v.recommendation) == (("compile-faster-pays-back", Action.ENABLE) if pays
                                          else ("compile-cold-cost-not-repaid",
                                                Action.KEEP_OFF))
    other = _judge(ds, "amp-bf16", "precision", _pair(a, "precision", variant_value="amp-bf16"))
    assert other.graph_breaks is None and other.break_hints == ()


def test_breaks_explain_a_small_gain_only_when_there_are_breaks_and_no_clear_gain() -> None:
    from bench.report.judge.breaks import breaks, explain

    two = breaks(2, 3, "1x Unsupported Tensor.item() call with capture_scalar_outputs=False; "
                       "1x Failed to trace builtin operator: `print`")
    assert [h.split(":")[0] for h in two.hints] == ["a data-dependent `.item()`",
                                                    "a Python builtin Dynamo cannot trace "
                                                    "(such as `print`)"]
    assert explain(Verdict.NO_CLEAR_DIFFERENCE, two) and explain(Verdict.SLOWER, two)
    assert not explain(Verdict.FASTER, two) and not explain(Verdict.INSUFFICIENT, two)
    assert not explain(Verdict.SLOWER, breaks(0, 1, "")) and not explain(Verdict.SLOWER, None)
    assert breaks(None, None, "").total is None  # a torch that did not count them
