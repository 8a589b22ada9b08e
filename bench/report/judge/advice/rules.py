"""The rules, one function per setting: each reads its comparison rows and yields one
``Recommendation`` per regime (and job length, for cudnn.benchmark).

Rules (``Recommendation.rule``):

- ``bm-insufficient``, ``bm-faster-pays-back`` (enable: the job is longer than the worst-case
  break-even), ``bm-cold-cost-not-repaid`` (keep off: faster per step but the job is too short to
  repay the autotuning), ``bm-slower`` (keep off), ``bm-no-clear-difference`` (leave default),
  ``bm-mixed``. Only pairs with cudnn.deterministic off (the default) are used.
- ``compile-*`` (``bench advise``'s one pair, compiled against eager): the same five as
  cudnn.benchmark's, by the same rule (``one_off``).
- ``det-insufficient``, ``det-does-not-reproduce`` (keep off: deterministic on still failed the
  bitwise re-run in every configuration checked), ``det-default-reproduces`` (leave default: off
  already re-ran bitwise equal), ``det-reproduces-in-some`` (enable only if needed: with it on,
  re-runs were bitwise equal in some configurations and not in others, which the record's
  ``variant_checks`` name, e.g. equal with cudnn.benchmark off and not with it on),
  ``det-unchecked`` (enable only if needed: no re-run check ran with it on, or it ran in only
  some of the regime's configurations, so only its cost is known, not whether it makes re-runs
  equal here), and, where the check with it on re-ran bitwise equal in every configuration:
  ``det-costs`` (enable only if needed: it is slower),
  ``det-no-measurable-cost`` (enable: the interval rules out a cost above δ),
  ``det-cost-unclear`` (enable only if needed: no clear difference, but the interval allows a
  cost above δ), ``det-mixed``.
- ``precision-*``, ``memory_format-*`` (and, in ``bench advise``, ``cpu_threads-*``):
  ``-insufficient``, ``-faster`` (enable), ``-slower`` (keep off), ``-no-clear-difference``
  (leave default), ``-mixed``.
- ``device-insufficient``, ``device-gpu-from-batch`` (enable: the GPU is faster from
  ``from_batch`` up), ``device-cpu-wins`` (keep off: the GPU never wins at every larger batch),
  ``device-mixed`` (models of the family cross over at different batches or never).

Caveat codes (``Recommendation.caveats``): ``changes-numerics`` (AMP or strict FP32 change the
arithmetic, check accuracy), ``tf32-default`` (the fp32 baseline on CUDA runs cuDNN convolutions
in TF32), ``variant-failed`` (the variant failed outright in some pair, e.g. an OOM with the
setting on), ``extra-memory`` (the setting raised the peak memory of a whole replicate, cold
pass included, by more than 10 %; the record carries the bytes and the share),
``smaller-batches-insufficient`` (device: a batch below ``from_batch`` had too few ok
replicates to judge, so the GPU may already win there), ``largest-batch-only`` (device:
``from_batch`` is the largest batch measured, so nothing is known above it), ``one-batch-only``
(device: and the smallest, the only batch measured),
``steady-drift`` (a cell it cites has replicates whose steady state drifted; see
``analysis.cells.replicate_drift``).

cudnn.benchmark's cold cost and break-even come from the pairs whose cold passes met an empty
kernel cache (or, in rows from before per-replicate caches, the machine's shared one), with the
warm-cache figures beside them; "up to" figures are the slowest replicate's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from bench.report.analysis.cells import model_family
from bench.report.analysis.pairs import not_slower
from bench.report.judge.advice.codes import Caveat, Rule, Setting
from bench.report.judge.advice.record import (
    MEMORY_CAVEAT_SHARE,
    REGIME_COLUMNS,
    Recommendation,
)
from bench.report.judge.advice.summaries import (
    as_key,
    figures,
    key_fields,
    number,
    summarise,
)
from bench.report.judge.selection import counted_benchmark
from bench.report.vocabulary import Action, Verdict


def one_off(prefix: str, verdict: str, break_even: float | None, steps: int
            ) -> tuple[Rule, Action]:
    """The rule for a setting that costs once, up front, for a faster steady state
    (cudnn.benchmark; torch.compile in ``bench advise``): on only where it is faster and a job
    of ``steps`` steps repays the first pass in the worst case the interval allows."""
    if verdict == Verdict.INSUFFICIENT:
        return Rule(f"{prefix}-insufficient"), Action.INSUFFICIENT
    if verdict == Verdict.FASTER:
        if break_even is not None and steps >= break_even:
            return Rule(f"{prefix}-faster-pays-back"), Action.ENABLE
        return Rule(f"{prefix}-cold-cost-not-repaid"), Action.KEEP_OFF
    if verdict == Verdict.SLOWER:
        return Rule(f"{prefix}-slower"), Action.KEEP_OFF
    if verdict == Verdict.NO_CLEAR_DIFFERENCE:
        return Rule(f"{prefix}-no-clear-difference"), Action.LEAVE_DEFAULT
    return Rule(f"{prefix}-mixed"), Action.DEPENDS


def _recommend(
    row: Mapping[str, Any],
    rule: Rule,
    setting: Setting,
    action: Action,
    values: tuple[str, str],
    fields: Mapping[str, Any],
    caveats: Iterable[Caveat] = (),
    **extra: Any,
) -> Recommendation:
    """A regime's recommendation, built the same way by every rule: the regime's ``fields``,
    the baseline and variant ``values``, and the summary ``row``'s figures and evidence;
    ``extra`` holds what only this setting carries (a figure in it replaces the row's)."""
    return Recommendation(
        rule=rule,
        setting=setting,
        action=action,
        baseline_value=values[0],
        variant_value=values[1],
        **{"job_length": None, **fields, **figures(row), **extra},
        caveats=tuple(caveats),
        evidence=row["evidence"],
    )


def _per_regime(values: pd.Series) -> dict[tuple[Any, ...], float]:
    """A per-regime aggregate (a grouped min or max) as numbers keyed by regime tuple."""
    return {as_key(k): float(v) for k, v in values.items()}


def benchmark_rules(costs: pd.DataFrame, job_lengths: Sequence[int]) -> list[Recommendation]:
    if costs.empty:
        return []
    pairs = counted_benchmark(costs)
    if pairs.empty:
        return []
    summary = summarise(
        pairs,
        REGIME_COLUMNS,
        {
            "break_even": ("break_even_iters_high", "max"),
            "extra_cold": ("extra_cold_pass_max_s", "max"),
            "extra_cold_median": ("extra_cold_pass_s", "max"),
            "cold_max": ("var_cold_pass_max_s", "max"),
            "base_cold": ("base_cold_pass_s", "max"),
            "warm_extra": ("warm_extra_cold_pass_max_s", "max"),
            "warm_break_even": ("warm_break_even_iters_high", "max"),
            "extra_mem": ("extra_whole_peak_mem_allocated_bytes", "max"),
            "mem_share": ("extra_whole_peak_mem_share", "max"),
            "workspace": ("var_workspace_mem_allocated_bytes", "max"),
        },
        failures=True,
    )
    caches = {
        as_key(k): ", ".join(sorted(set(g)))
        for k, g in pairs.groupby(REGIME_COLUMNS, sort=True, dropna=False)["kernel_cache"]
    }
    out: list[Recommendation] = []
    for key, row in summary:
        verdict = row["verdict"]
        break_even = number(row["break_even"])
        caveats = [Caveat.VARIANT_FAILED] if row["failed"] > 0 else []
        share = number(row["mem_share"])
        if share is not None and share > MEMORY_CAVEAT_SHARE:
            caveats.append(Caveat.EXTRA_MEMORY)
        for n in job_lengths:
            rule, action = one_off("bm", verdict, break_even, n)
            out.append(
                _recommend(
                    row, rule, Setting.CUDNN_BENCHMARK, action, ("off", "on"),
                    key_fields(REGIME_COLUMNS, key), caveats,
                    job_length=int(n),
                    break_even_iters=break_even,
                    extra_cold_s=number(row["extra_cold"]),
                    extra_cold_median_s=number(row["extra_cold_median"]),
                    cold_pass_max_s=number(row["cold_max"]),
                    base_cold_pass_s=number(row["base_cold"]),
                    kernel_cache=caches.get(key, ""),
                    warm_extra_cold_s=number(row["warm_extra"]),
                    warm_break_even_iters=number(row["warm_break_even"]),
                    extra_peak_mem_bytes=number(row["extra_mem"]),
                    extra_peak_mem_share=share,
                    workspace_bytes=number(row["workspace"]),
                )
            )
    return out


#: A side's re-run checks in a regime where some were bitwise equal and some were not.
MIXED = Verdict.MIXED


def _agreement(checks: Sequence[bool | None]) -> bool | str | None:
    """One side's re-run checks over a regime's pairs (None: that pair had no ok check):
    all checked and all equal → True; every check unequal → False; some equal and some
    unequal → ``MIXED``; no check at all, or equal where checked but unchecked elsewhere →
    None (not known for every configuration)."""
    known = [c for c in checks if c is not None]
    if not known:
        return None
    if not any(known):
        return False
    if not all(known):
        return MIXED
    return True if len(known) == len(checks) else None


def _check_value(value: Any) -> bool | None:
    return None if value is None or value is pd.NA or (
        isinstance(value, float) and math.isnan(value)) else bool(value)


def determinism_rules(pairs: pd.DataFrame) -> list[Recommendation]:
    if pairs.empty:
        return []
    summary = summarise(
        pairs,
        REGIME_COLUMNS,
        extra_all={"max_diff": ("base_max_abs_diff", "max")},
        anchors=("base_repro_anchor", "var_repro_anchor"),
        failures=True,
    )
    # per regime (in summary's order), each pair's re-run checks: (model, cudnn.benchmark,
    # kernel cache, equal or None), in one pass over the rows, each filed under its regime's
    # number (a group at a time is slow with thousands of regimes)
    grouped = pairs.groupby(REGIME_COLUMNS, sort=True, dropna=False)
    side_checks: list[dict[str, list[tuple[str, str, str, bool | None]]]] = [
        {"base": [], "var": []} for _ in range(grouped.ngroups)]
    codes = grouped.ngroup().to_numpy()
    for side in ("base", "var"):
        known = (pairs[f"{side}_n_checks"] > 0).to_numpy()
        for code, m, bm, kc, eq, k in zip(codes, pairs["model"], pairs["cudnn_benchmark"],
                                          pairs["kernel_cache"],
                                          pairs[f"{side}_bitwise_equal"].astype(object), known):
            side_checks[code][side].append(
                (str(m), str(bm), str(kc), _check_value(eq) if k else None))
    out: list[Recommendation] = []
    assert len(side_checks) == len(summary)  # both grouped by REGIME_COLUMNS, sorted
    for (key, row), checks in zip(summary, side_checks):
        default_eq = _agreement([c[3] for c in checks["base"]])
        variant_eq = _agreement([c[3] for c in checks["var"]])
        verdict = row["verdict"]
        if verdict == Verdict.INSUFFICIENT:
            rule, action = Rule.DET_INSUFFICIENT, Action.INSUFFICIENT
        elif variant_eq is False:
            rule, action = Rule.DET_DOES_NOT_REPRODUCE, Action.KEEP_OFF
        elif default_eq is True:
            rule, action = Rule.DET_DEFAULT_REPRODUCES, Action.LEAVE_DEFAULT
        elif variant_eq == MIXED:  # equal in some configurations with it on, not in others
            rule, action = Rule.DET_REPRODUCES_IN_SOME, Action.ENABLE_IF_NEEDED
        elif variant_eq is None:  # not checked with it on everywhere: its cost, not its gain
            rule, action = Rule.DET_UNCHECKED, Action.ENABLE_IF_NEEDED
        elif verdict == Verdict.SLOWER:
            rule, action = Rule.DET_COSTS, Action.ENABLE_IF_NEEDED
        elif verdict == Verdict.FASTER or (
            verdict == Verdict.NO_CLEAR_DIFFERENCE and not_slower(number(row["ci_low"]))
        ):
            rule, action = Rule.DET_NO_MEASURABLE_COST, Action.ENABLE
        elif verdict == Verdict.NO_CLEAR_DIFFERENCE:
            rule, action = Rule.DET_COST_UNCLEAR, Action.ENABLE_IF_NEEDED
        else:
            rule, action = Rule.DET_MIXED, Action.DEPENDS
        out.append(
            _recommend(
                row, rule, Setting.CUDNN_DETERMINISTIC, action, ("off", "on"),
                key_fields(REGIME_COLUMNS, key),
                (Caveat.VARIANT_FAILED,) if row["failed"] > 0 else (),
                bitwise_equal_default=default_eq if isinstance(default_eq, bool) else None,
                bitwise_equal_variant=variant_eq if isinstance(variant_eq, bool) else None,
                max_abs_diff_default=number(row["max_diff"]),
                variant_checks=tuple(checks["var"]),
            )
        )
    return out


#: A switch's rule per verdict, as the name of its ``Rule`` after the axis (``PRECISION_…``).
_SWITCH_RULES = {
    Verdict.INSUFFICIENT: ("INSUFFICIENT", Action.INSUFFICIENT),
    Verdict.FASTER: ("FASTER", Action.ENABLE),
    Verdict.SLOWER: ("SLOWER", Action.KEEP_OFF),
    Verdict.NO_CLEAR_DIFFERENCE: ("NO_CLEAR_DIFFERENCE", Action.LEAVE_DEFAULT),
}


def switch_rules(pairs: pd.DataFrame, axis: str) -> list[Recommendation]:
    """precision and memory_format: switch to the variant when it is clearly faster."""
    if pairs.empty:
        return []
    regime = [c for c in REGIME_COLUMNS if c != axis]
    by = [*regime, "baseline_value", "variant_value"]
    out: list[Recommendation] = []
    for key, row in summarise(pairs, by, failures=True):
        fields = key_fields(by, key)
        baseline, variant = str(fields.pop("baseline_value")), str(fields.pop("variant_value"))
        if axis == "precision":
            fields["precision"] = baseline
        rule, action = _SWITCH_RULES.get(row["verdict"], ("MIXED", Action.DEPENDS))
        caveats: list[Caveat] = []
        if axis == "precision":
            # advice to switch (in some models): check accuracy
            if action in (Action.ENABLE, Action.DEPENDS):
                caveats.append(Caveat.CHANGES_NUMERICS)
            if fields["device"] == "cuda" and baseline == "fp32":
                caveats.append(Caveat.TF32_DEFAULT)
        if row["failed"] > 0:
            caveats.append(Caveat.VARIANT_FAILED)
        out.append(_recommend(row, Rule[f"{axis.upper()}_{rule}"], Setting(axis), action,
                              (baseline, variant), fields, caveats))
    return out


def device_rules(curves: pd.DataFrame, cpu_gpu: pd.DataFrame) -> list[Recommendation]:
    """CPU → GPU per family: from which batch the GPU wins, if it does."""
    if curves.empty or cpu_gpu.empty:
        return []
    regime = [c for c in REGIME_COLUMNS if c not in ("device", "batch_size")]
    curves = curves.assign(
        model_family=[model_family(m, s) for m, s in zip(curves["model"],
                                                         curves["model_source"])],
        _measured=[any(v != Verdict.INSUFFICIENT for v in vs) for vs in curves["verdicts"]],
    )
    crossings = {
        as_key(k): g["crossover_batch"].loc[g["_measured"]]
        for k, g in curves.groupby(regime, sort=True, dropna=False)
    }
    thin = cpu_gpu.loc[cpu_gpu["verdict"] == Verdict.INSUFFICIENT]
    # per regime, the smallest batch with too few ok replicates
    smallest_thin = _per_regime(thin.groupby(regime, sort=True, dropna=False)["batch_size"].min())
    batches = cpu_gpu.groupby(regime, sort=True, dropna=False)["batch_size"]
    largest = _per_regime(batches.max())  # the largest batch measured: "and up" stops there
    smallest = _per_regime(batches.min())  # where both are one batch, only it was measured
    sufficient = cpu_gpu.loc[cpu_gpu["verdict"] != Verdict.INSUFFICIENT]
    at_batch = sufficient.groupby([*regime, "batch_size"], sort=True, dropna=False).agg(
        speedup=("speedup", "median"), ci_low=("ci_low", "min"), ci_high=("ci_high", "max"),
        n=("speedup", "size"),
    )
    out: list[Recommendation] = []
    for key, row in summarise(cpu_gpu, regime):
        fields = key_fields(regime, key)
        crossing = crossings.get(key, pd.Series(dtype="Int64"))
        from_batch: int | None = None
        caveats: list[Caveat] = []
        at_from: dict[str, Any] = {}  # the figures at from_batch, which replace the regime's
        if crossing.empty:
            rule, action = Rule.DEVICE_INSUFFICIENT, Action.INSUFFICIENT
        elif crossing.isna().all():
            rule, action = Rule.DEVICE_CPU_WINS, Action.KEEP_OFF
        elif crossing.notna().all() and crossing.nunique() == 1:
            from_batch = int(crossing.iloc[0])
            rule, action = Rule.DEVICE_GPU_FROM_BATCH, Action.ENABLE
            at = at_batch.loc[(*key, from_batch)]
            if smallest_thin.get(key, math.inf) < from_batch:
                caveats.append(Caveat.SMALLER_BATCHES_INSUFFICIENT)
            if largest.get(key) == from_batch:
                caveats.append(Caveat.LARGEST_BATCH_ONLY)
                if smallest.get(key) == from_batch:
                    caveats.append(Caveat.ONE_BATCH_ONLY)
            at_from = dict(  # the figures quoted are at from_batch: its configurations only
                verdict=Verdict.FASTER,
                n_sufficient=int(at["n"]),
                speedup=number(at["speedup"]),
                ci_low=number(at["ci_low"]),
                ci_high=number(at["ci_high"]),
            )
        else:
            rule, action = Rule.DEVICE_MIXED, Action.DEPENDS
        out.append(_recommend(row, rule, Setting.DEVICE, action, ("cpu", "cuda"), fields,
                              caveats, device="cuda", **at_from, from_batch=from_batch))
    return out
