"""One verdict per named pair of cells: what ``bench advise`` prints, read off the report.

The caller names, for each knob, the baseline and the variant cell it measured; everything
else is the report's own, computed once for the run's rows: the pair's speedup, interval and
verdict are its row of ``analysis.comparisons``, the recommendation is the record
``advice.recommend`` gives that pair's regime (the CPU-thread switch, which the site does not
advise on, goes through the same rule as precision and layout), and the up-front cost and the
break-even are ``studies.one_off_costs`` of that row. Nothing here judges anything, so
``bench advise`` and ``bench report`` cannot disagree about the same rows.

A pair may be asked the other way round from the report's (TF32: the report compares fp32,
PyTorch's default, against fp32-strict, while ``advise`` asks what turning TF32 on buys). Then
the report's row is read from the other side (``reverse``): the speedup and its interval
inverted, the verdict and the switch advice mirrored, and the costs recomputed by the same
``one_off_costs`` with the sides swapped, so the line says what the knob's name says.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from bench.report.analysis import MIN_OK_REPLICATES, Analysis, analyse
from bench.report.analysis.numerics import NUMERIC_AXES, numeric_take
from bench.report.analysis.studies import one_off_costs
from bench.report.input.load import Dataset
from bench.report.judge import advice
from bench.report.judge.advice import Recommendation
from bench.report.judge.advice.codes import Caveat, Setting
from bench.report.judge.advice.rules import one_off, switch_rules
from bench.report.judge.breaks import Breaks, breaks, explain
from bench.report.judge.numerics import NumericCheck, NumericPair
from bench.report.judge.rows import typed_row
from bench.report.vocabulary import Action, KnobStatus, Verdict

#: The setting a comparison axis's recommendations are filed under.
SETTING_OF = {"cudnn_benchmark": Setting.CUDNN_BENCHMARK,
              "cudnn_deterministic": Setting.CUDNN_DETERMINISTIC,
              "precision": Setting.PRECISION, "memory_format": Setting.MEMORY_FORMAT,
              "cpu_threads": Setting.CPU_THREADS, "compile": Setting.COMPILE}


#: The report's pair read from its variant's side: its verdict and its advice mirrored.
_MIRRORED_VERDICT = {Verdict.FASTER: Verdict.SLOWER, Verdict.SLOWER: Verdict.FASTER}
_MIRRORED_ACTION = {Action.ENABLE: Action.KEEP_OFF, Action.KEEP_OFF: Action.ENABLE}
#: Caveats that speak of one side of the report's pair, as they read from the other side.
_MIRRORED_CAVEATS = {Caveat.TF32_DEFAULT: Caveat.TF32_IS_THE_DEFAULT,
                     Caveat.VARIANT_FAILED: Caveat.BASELINE_FAILED}


@dataclass(frozen=True)
class Ask:
    """A knob to judge: the comparison axis and the two cells that differ in it (either way
    round from the report's pair: see ``reverse``)."""

    knob: str
    axis: str
    baseline_cell_id: str
    variant_cell_id: str


@dataclass(frozen=True)
class KnobAnswer:
    """One knob, judged: every figure as the report has it (None where it has none)."""

    knob: str
    axis: str
    status: KnobStatus
    reason: str  # why too few ("too few replicates: 2 of 3 ok"), else empty
    baseline: str
    variant: str
    recommendation: Action  # the report's action
    rule: str
    verdict: Verdict
    speedup: float | None  # > 1: the variant is faster
    ci_low: float | None
    ci_high: float | None
    n_base: int
    n_var: int
    cold_cost_s: float | None  # the variant's slowest first pass − the baseline's median one
    break_even_steps: float | None  # worst case; inf: it never pays back
    steps: int
    pays_back: bool | None  # within ``steps``
    memory_change_bytes: float | None
    memory_change_share: float | None
    memory: str  # which peak: the GPU's allocated memory, or the process's resident set
    caveats: tuple[str, ...]
    baseline_cell_id: str
    variant_cell_id: str
    #: the report holds the pair the other way round: these figures are its row, reversed
    reversed: bool = False
    #: a compiled variant's graph breaks, cold pass included (None: not compiled, or this
    #: torch did not count them), its graphs, torch's reasons ("2x reason") and hints in words
    graph_breaks: int | None = None
    graphs: int | None = None
    graph_break_reasons: tuple[str, ...] = ()
    break_hints: tuple[str, ...] = ()
    #: the breaks are the likely reason it gained little (``breaks.explain``)
    breaks_explain: bool = False
    #: the knob's side's outputs against the strict reference (``judge.numerics``), judged by
    #: the tolerance of the arithmetic it ran; None off the axes the check judges
    numerics: NumericCheck | None = None


def _number(value: Any) -> float | None:
    if value is None or value is pd.NA:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def recommendations(a: Analysis, steps: int, axes: Sequence[str]) -> list[Recommendation]:
    """The report's recommendations for a job of ``steps`` steps, with the CPU-thread switch's
    where one of ``axes`` asks for it."""
    recs = advice.recommend(a, job_lengths=(steps,))
    if "cpu_threads" in axes:
        recs += switch_rules(a.comparisons["cpu_threads"], "cpu_threads")
    return recs


def _recommendation(recs: Sequence[Recommendation], axis: str, page: str, variant_anchor: str,
                    steps: int) -> Recommendation | None:
    anchor = (page, variant_anchor)  # the row the advice files it under
    for r in recs:
        if r.setting == SETTING_OF[axis] and anchor in r.evidence and (
                r.job_length in (None, steps)):
            return r
    return None


def _cell(cells: pd.DataFrame, row: Any, cell_id: str) -> pd.Series:
    """One cell of the pair's fingerprint (the same cell id on another machine is another)."""
    return cells.loc[(cells["fingerprint_id"] == row.fingerprint_id)
                     & (cells["cell_id"] == cell_id)].iloc[0]


def thin_text(n_ok: int) -> str:
    """``too few replicates: 2 of 3 ok``: how many of the replicates a verdict needs."""
    return f"{Verdict.INSUFFICIENT}: {n_ok} of {MIN_OK_REPLICATES} ok"


def _why(cells: pd.DataFrame, row: Any) -> str:
    """``too few replicates: 2 of 3 ok`` and, where a side failed, how (its first reason)."""
    n = min(int(row.n_base), int(row.n_var))
    text = thin_text(n)
    for side, cid in (("variant", row.variant_cell_id), ("baseline", row.baseline_cell_id)):
        cell = _cell(cells, row, cid)
        if int(cell["n_failed"]):
            first = f": {cell['reasons'][0]}" if cell["reasons"] else ""
            return f"{text} ({side}: {cell['status_summary']}{first})"
        if int(cell.get("n_left_out", 0) or 0):
            return (f"{text} ({side}: {cell['status_summary']}; `bench run --resume` measures "
                    "them again in a new sitting)")
    return text


def _memory(cells: pd.DataFrame, cost: Any) -> tuple[float | None, float | None, str]:
    """The whole replicate's GPU peak where there is one, else the process's peak RSS."""
    gpu = _number(cost.extra_whole_peak_mem_allocated_bytes)
    if gpu is not None:
        return gpu, _number(cost.extra_whole_peak_mem_share), "GPU memory allocated"
    base = _number(_cell(cells, cost, cost.baseline_cell_id)["peak_rss_bytes"])
    var = _number(_cell(cells, cost, cost.variant_cell_id)["peak_rss_bytes"])
    if base is None or var is None:
        return None, None, ""
    return var - base, (var - base) / base if base else None, "process peak resident memory"


def judge(ds: Dataset, asks: Sequence[Ask], steps: int) -> list[KnobAnswer]:
    """The verdict of each asked pair in ``ds`` (one run's rows), in the order asked."""
    a = analyse(ds)
    recs = recommendations(a, steps, [x.axis for x in asks])
    cells = a.cells.loc[a.cells["kind"] == "model"]
    out = []
    for ask in asks:
        pairs = a.comparisons[ask.axis]
        found, backwards = _pair(pairs, ask), False
        if found.empty:  # the report may hold it the other way round
            found = reverse(_pair(pairs, ask, backwards=True))
            backwards = not found.empty
        if found.empty:
            out.append(_unmeasured(ask, steps))
            continue
        cost = next(one_off_costs(a.cells, found).itertuples(index=False))
        # the report files its advice under its own variant
        filed = ask.baseline_cell_id if backwards else ask.variant_cell_id
        rec = _recommendation(recs, ask.axis, str(cost.page),
                              str(_cell(cells, cost, filed)["anchor"]), steps)
        out.append(_verdict(ask, cost, rec, cells, steps, backwards))
    return out


def _pair(pairs: pd.DataFrame, ask: Ask, backwards: bool = False) -> pd.DataFrame:
    base, var = ask.baseline_cell_id, ask.variant_cell_id
    if backwards:
        base, var = var, base
    return pairs.loc[(pairs["baseline_cell_id"] == base) & (pairs["variant_cell_id"] == var)]


def reverse(pairs: pd.DataFrame) -> pd.DataFrame:
    """Comparison rows read from the variant's side: every base/variant column swapped, the
    speedup and its interval inverted (``1 / speedup``, the ends swapped), the verdict
    mirrored. The bootstrap's interval of the inverse is the inverse of its interval, so this
    is the report's own statistic; only the verdict's band is the report's ±δ around the
    other side's ratio."""
    out = pairs.copy()
    names = set(pairs.columns)
    for col in pairs.columns:
        for mine, theirs in (("baseline_", "variant_"), ("base_", "var_")):
            other = theirs + col[len(mine):]
            if col.startswith(mine) and other in names:
                out[col], out[other] = pairs[other].to_numpy(), pairs[col].to_numpy()
    out["n_base"], out["n_var"] = pairs["n_var"].to_numpy(), pairs["n_base"].to_numpy()
    with np.errstate(divide="ignore"):
        out["speedup"] = 1 / pairs["speedup"].astype(float)
        out["ci_low"] = 1 / pairs["ci_high"].astype(float)
        out["ci_high"] = 1 / pairs["ci_low"].astype(float)
    out["verdict"] = pairs["verdict"].map(lambda v: _MIRRORED_VERDICT.get(v, v))
    return out


def _mirrored(rec: Recommendation) -> tuple[Action, tuple[Caveat, ...]]:
    """The report's advice on its variant, as advice on the other side: turning to the
    default's side is keeping the variant off, and the other way round."""
    return (_MIRRORED_ACTION.get(rec.action, rec.action),
            tuple(_MIRRORED_CAVEATS.get(c, c) for c in rec.caveats))


def _compiled_breaks(cells: pd.DataFrame, cost: Any) -> Breaks | None:
    """The compiled side's graph breaks (None for a pair that compiles nothing)."""
    if cost.axis != "compile":
        return None
    c = _cell(cells, cost, cost.variant_cell_id)
    return breaks(c.get("graph_breaks_max"), c.get("graphs_max"), c.get("graph_break_reasons"))


def _break_fields(b: Breaks | None, verdict: str) -> dict[str, Any]:
    if b is None:
        return {}
    return {"graph_breaks": b.total, "graphs": b.graphs,
            "graph_break_reasons": tuple(f"{n}x {text}" for n, text, _ in b.reasons),
            "break_hints": b.hints, "breaks_explain": explain(verdict, b)}


def _verdict(ask: Ask, cost: Any, rec: Recommendation | None, cells: pd.DataFrame,
             steps: int, backwards: bool = False) -> KnobAnswer:
    insufficient = cost.verdict == Verdict.INSUFFICIENT
    caveats: tuple[Caveat, ...] = rec.caveats if rec else ()
    action = rec.action if rec else Action.INSUFFICIENT
    if rec and backwards:
        action, caveats = _mirrored(rec)
    break_even = _number(cost.break_even_iters_high)
    rule = rec.rule if rec else ""
    if ask.axis == "compile":  # the site advises per workload; one pair takes the same rule
        rule, action = one_off("compile", str(cost.verdict), break_even, steps)
    mem, share, basis = _memory(cells, cost)
    checked = _numerics(cells, cost, ask)
    return KnobAnswer(
        knob=ask.knob, axis=ask.axis,
        status=KnobStatus.INSUFFICIENT if insufficient else KnobStatus.MEASURED,
        reason=_why(cells, cost) if insufficient else "",
        baseline=str(cost.baseline_value), variant=str(cost.variant_value),
        recommendation=action, rule=rule, verdict=Verdict(cost.verdict),
        speedup=_number(cost.speedup), ci_low=_number(cost.ci_low),
        ci_high=_number(cost.ci_high), n_base=int(cost.n_base), n_var=int(cost.n_var),
        cold_cost_s=_number(cost.extra_cold_pass_max_s), break_even_steps=break_even,
        steps=steps, pays_back=None if break_even is None else steps >= break_even,
        memory_change_bytes=mem, memory_change_share=share, memory=basis,
        caveats=caveats, baseline_cell_id=ask.baseline_cell_id,
        variant_cell_id=ask.variant_cell_id, reversed=backwards, numerics=checked,
        **_break_fields(_compiled_breaks(cells, cost), str(cost.verdict)))


def _numerics(cells: pd.DataFrame, row: Any, ask: Ask) -> NumericCheck | None:
    """The numerics of the side the knob turns on (the report's baseline where it holds the
    pair the other way round: TF32's fp32 cell), judged as the report judges a comparison's
    variant (``NumericPair``); None off the axes the check judges."""
    if ask.axis not in NUMERIC_AXES:
        return None
    cell = _cell(cells, row, ask.variant_cell_id)
    # a CPU runs no TF32: the CUDA and cuDNN switches it reads back (torch 2.9's cudnn.conv
    # fp32_precision reads "tf32" there by default) say nothing of its arithmetic
    take = [c for c in numeric_take(ask.axis)
            if cell.get("device") != "cpu" or c in _CPU_MATH or not c.startswith("eff_")]
    side = {"fingerprint_id": row.fingerprint_id, "precision": cell.get("precision"),
            "mode": cell.get("mode"), **{f"var_{c}": cell.get(c) for c in take}}
    return typed_row(NumericPair, pd.Series(side, dtype=object)).numerics


#: The read-back flag that says a CPU cell's arithmetic (the others are CUDA's and cuDNN's).
_CPU_MATH = ("eff_conv_math",)


def _unmeasured(ask: Ask, steps: int) -> KnobAnswer:
    """A pair with no rows at all (the run stopped before it)."""
    return KnobAnswer(
        knob=ask.knob, axis=ask.axis, status=KnobStatus.INSUFFICIENT,
        reason=f"{thin_text(0)} (no rows)", baseline="", variant="",
        recommendation=Action.INSUFFICIENT, rule="", verdict=Verdict.INSUFFICIENT,
        speedup=None, ci_low=None, ci_high=None, n_base=0, n_var=0, cold_cost_s=None,
        break_even_steps=None, steps=steps, pays_back=None, memory_change_bytes=None,
        memory_change_share=None, memory="", caveats=(),
        baseline_cell_id=ask.baseline_cell_id, variant_cell_id=ask.variant_cell_id)
