"""A small rule engine: per regime, what to do with each setting, derived only from the data.

A regime is (machine fingerprint, device, model family, mode, precision, memory format, shape
variability, batch size; CPU vs GPU leaves the batch out, since its curves span batches, and
the memory-format switch leaves the format out, since it is the switch), plus a job length
in iterations where a one-off cost matters (cudnn.benchmark's autotuning). Each rule reads the
comparison rows of that regime and yields a ``Recommendation``: structured fields only, no
prose — the templates turn them into sentences and links. Fed other data, the same rules give
other advice; "no clear difference — leave the default" is a normal outcome.

How a regime's pairs are combined: the pairs that are not "insufficient" must agree. All
"faster" → the faster rule, all "slower" → the slower rule, all "no clear difference" → leave the
default; a mix → "depends on model" (measure your own). The figures are the median speedup and
the envelope of the CIs (lowest ci_low, highest ci_high), so a sentence never overstates.

Rules (``Recommendation.rule``):

- ``bm-insufficient``, ``bm-faster-pays-back`` (enable: the job is longer than the worst-case
  break-even), ``bm-cold-cost-not-repaid`` (keep off: faster per step but the job is too short to
  repay the autotuning), ``bm-slower`` (keep off), ``bm-no-clear-difference`` (leave default),
  ``bm-mixed``. Only pairs with cudnn.deterministic off (the default) are used.
- ``det-insufficient``, ``det-does-not-reproduce`` (keep off: deterministic on still failed the
  bitwise re-run), ``det-default-reproduces`` (leave default: off already re-ran bitwise equal),
  ``det-unchecked`` (enable only if needed: no re-run check ran with it on, so only its cost
  is known, not whether it makes re-runs equal here), and, where the check with it on re-ran
  bitwise equal: ``det-costs`` (enable only if needed: it is slower),
  ``det-no-measurable-cost`` (enable: the interval rules out a cost above δ),
  ``det-cost-unclear`` (enable only if needed: no clear difference, but the interval allows a
  cost above δ), ``det-mixed``.
- ``precision-*`` and ``memory_format-*``: ``-insufficient``, ``-faster`` (enable), ``-slower``
  (keep off), ``-no-clear-difference`` (leave default), ``-mixed``.
- ``device-insufficient``, ``device-gpu-from-batch`` (enable: the GPU is faster from
  ``from_batch`` up), ``device-cpu-wins`` (keep off: the GPU never wins at every larger batch),
  ``device-mixed`` (models of the family cross over at different batches or never).

Caveat codes (``Recommendation.caveats``): ``changes-numerics`` (AMP or strict FP32 change the
arithmetic, check accuracy), ``tf32-default`` (the fp32 baseline on CUDA runs cuDNN convolutions
in TF32), ``variant-failed`` (the variant failed outright in some pair, e.g. an OOM with the
setting on), ``extra-memory`` (the setting raised the peak memory of a whole replicate, cold
pass included, by more than 10 %; the record carries the bytes and the share),
``smaller-batches-insufficient`` (device: a batch below ``from_batch`` had too few ok
replicates to judge, so the GPU may already win there), ``steady-drift`` (a cell it cites has
replicates whose steady state drifted; see ``analysis.cells.replicate_drift``).

cudnn.benchmark's cold cost and break-even come from the pairs whose cold passes met an empty
kernel cache (or, in rows from before per-replicate caches, the machine's shared one), with the
warm-cache figures beside them; "up to" figures are the slowest replicate's.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

import numpy as np
import pandas as pd

from bench.report.analysis import MIN_OK_REPLICATES, Analysis, analyse
from bench.report.analysis.cells import model_family
from bench.report.analysis.pairs import not_slower
from bench.report.load import Dataset

#: Job lengths (iterations) at which cudnn.benchmark is judged: a smoke test, a fine-tune, a
#: long training run.
JOB_LENGTHS = (100, 10_000, 1_000_000)

ENABLE = "enable"
KEEP_OFF = "keep off"
LEAVE_DEFAULT = "leave default"
INSUFFICIENT = "insufficient data"
DEPENDS = "depends on model"
ENABLE_IF_NEEDED = "enable only if needed"
ACTIONS = (ENABLE, KEEP_OFF, LEAVE_DEFAULT, INSUFFICIENT, DEPENDS, ENABLE_IF_NEEDED)

#: Settings in the order the decision table lists them.
SETTINGS = ("cudnn.benchmark", "cudnn.deterministic", "precision", "memory_format", "device")
#: Peak memory growth above this share is flagged with the ``extra-memory`` caveat.
MEMORY_CAVEAT_SHARE = 0.10

_REGIME = [
    "fingerprint_id",
    "machine",
    "page",
    "device",
    "model_family",
    "mode",
    "precision",
    "memory_format",
    "shapes",
    "batch_size",
]


#: What makes two recommendations the same regime (one row of the decision table).
REGIME_KEY = (
    "setting",
    "page",
    "device",
    "model_family",
    "mode",
    "precision",
    "memory_format",
    "shapes",
    "batch_size",
    "baseline_value",
    "variant_value",
)

@dataclass(frozen=True)
class Recommendation:
    """One piece of advice for one regime; every number traceable through ``evidence``."""

    rule: str
    setting: str
    action: str
    baseline_value: str
    variant_value: str
    machine: str
    fingerprint_id: str
    page: str
    device: str
    model_family: str
    mode: str
    precision: str
    shapes: str
    job_length: int | None  # iterations; None where there is no one-off cost to repay
    verdict: str  # faster / slower / no clear difference / insufficient / mixed
    n_pairs: int
    n_sufficient: int
    speedup: float | None  # median over the regime's sufficient pairs (> 1: variant faster)
    ci_low: float | None  # lowest ci_low among them
    ci_high: float | None  # highest ci_high among them
    break_even_iters: float | None = None  # worst case over pairs; inf = never
    #: benchmark's cold cost, true of every replicate: the slowest variant replicate's cold
    #: pass minus the baseline's median (largest over pairs), and the median replicate's
    extra_cold_s: float | None = None
    extra_cold_median_s: float | None = None
    cold_pass_max_s: float | None = None  # the slowest variant replicate's whole cold pass
    base_cold_pass_s: float | None = None  # the baseline's median cold pass, beside it
    #: the kernel-cache state(s) those cold passes met ("fresh", "shared", "warm")
    kernel_cache: str = ""
    warm_extra_cold_s: float | None = None  # the same with a warm cache, where measured
    warm_break_even_iters: float | None = None
    #: peak memory of the whole replicate (cold pass included): variant − baseline, and as a
    #: share of the baseline's; and the workspace the variant's cold pass held beyond its
    #: steady peak
    extra_peak_mem_bytes: float | None = None
    extra_peak_mem_share: float | None = None
    workspace_bytes: float | None = None
    from_batch: int | None = None  # device: GPU faster from this batch up
    bitwise_equal_default: bool | None = None  # determinism: re-run with the setting off
    bitwise_equal_variant: bool | None = None  # and on
    max_abs_diff_default: float | None = None
    caveats: tuple[str, ...] = ()
    evidence: tuple[tuple[str, str], ...] = ()  # (page, anchor) of every row used
    models: tuple[str, ...] = ()  # the family's models that were measured (sorted)
    batch_size: str = ""  # part of the regime; empty for device, whose curves span batches
    #: part of the regime (the gain from AMP or benchmark depends on the layout); empty for the
    #: memory_format setting, whose baseline and variant are the layouts
    memory_format: str = ""


def recommend(
    data: Union[Dataset, Analysis], *, job_lengths: Sequence[int] = JOB_LENGTHS
) -> list[Recommendation]:
    """All recommendations, sorted by setting then regime (then job length)."""
    analysis = analyse(data) if isinstance(data, Dataset) else data
    recs: list[Recommendation] = []
    recs += _benchmark(analysis.benchmark, job_lengths)
    recs += _determinism(analysis.determinism)
    for axis in ("precision", "memory_format"):
        recs += _switch(analysis.comparisons[axis], axis)
    recs += _device(analysis.crossovers, analysis.cpu_gpu)
    cells = analysis.cells
    drifting = set(zip(cells.loc[cells["n_drift"] > 0, "page"],
                       cells.loc[cells["n_drift"] > 0, "anchor"]))
    recs = [
        dataclasses.replace(r, caveats=(*r.caveats, "steady-drift"))
        if drifting.intersection(r.evidence)
        else r
        for r in recs
    ]
    order = {s: i for i, s in enumerate(SETTINGS)}
    recs.sort(
        key=lambda r: (
            order[r.setting],
            r.machine,
            r.page,
            r.device,
            r.model_family,
            r.mode,
            r.precision,
            r.memory_format,
            r.shapes,
            int(r.batch_size or 0),
            r.variant_value,
            r.job_length or 0,
        )
    )
    return recs


def decision_table(
    recs: Iterable[Recommendation], *, job_lengths: Sequence[int] = JOB_LENGTHS
) -> pd.DataFrame:
    """One row per regime (job lengths folded into columns), for the home page.

    Columns: setting, machine, page, fingerprint_id, device, model_family, models (the
    measured ones, space-separated), mode, precision, memory_format ("" for memory_format),
    shapes, batch_size ("" for device), baseline_value, variant_value, verdict, action (at the
    longest job length for cudnn.benchmark), ``action_<n>`` for each job length n
    (``job_lengths``, plus any the recommendations carry; equal to ``action`` for settings
    without one), rule, speedup, ci_low, ci_high, break_even_iters, kernel_cache,
    extra_cold_s, warm_extra_cold_s, warm_break_even_iters, extra_peak_mem_bytes,
    extra_peak_mem_share (cudnn.benchmark; empty for the others), from_batch, n_pairs,
    n_sufficient, caveats, evidence, and evidence_page / evidence_anchor (the first row, a link
    target).
    """
    recs = list(recs)
    lengths = sorted(set(job_lengths) | {r.job_length for r in recs if r.job_length is not None})
    key_fields = REGIME_KEY
    rows: dict[tuple[Any, ...], dict[str, Any]] = {}
    longest: dict[tuple[Any, ...], int] = {}
    for r in recs:
        key = tuple(getattr(r, f) for f in key_fields)
        row = rows.get(key)
        if row is None:
            row = {
                "setting": r.setting,
                "machine": r.machine,
                "page": r.page,
                "fingerprint_id": r.fingerprint_id,
                "device": r.device,
                "model_family": r.model_family,
                "models": " ".join(r.models),
                "mode": r.mode,
                "precision": r.precision,
                "memory_format": r.memory_format,
                "shapes": r.shapes,
                "batch_size": r.batch_size,
                "baseline_value": r.baseline_value,
                "variant_value": r.variant_value,
                "verdict": r.verdict,
                "action": r.action,
                **{f"action_{n}": r.action for n in lengths},
                "rule": r.rule,
                "speedup": r.speedup,
                "ci_low": r.ci_low,
                "ci_high": r.ci_high,
                "break_even_iters": r.break_even_iters,
                "kernel_cache": r.kernel_cache,
                "extra_cold_s": r.extra_cold_s,
                "warm_extra_cold_s": r.warm_extra_cold_s,
                "warm_break_even_iters": r.warm_break_even_iters,
                "extra_peak_mem_bytes": r.extra_peak_mem_bytes,
                "extra_peak_mem_share": r.extra_peak_mem_share,
                "from_batch": r.from_batch,
                "n_pairs": r.n_pairs,
                "n_sufficient": r.n_sufficient,
                "caveats": r.caveats,
                "evidence": r.evidence,
                "evidence_page": r.evidence[0][0] if r.evidence else "",
                "evidence_anchor": r.evidence[0][1] if r.evidence else "",
            }
            rows[key] = row
        if r.job_length is not None:
            row[f"action_{r.job_length}"] = r.action
            if r.job_length >= longest.get(key, 0):  # the headline: the longest job
                longest[key] = r.job_length
                row["action"], row["rule"] = r.action, r.rule
    columns = [
        "setting",
        "machine",
        "page",
        "fingerprint_id",
        "device",
        "model_family",
        "models",
        "mode",
        "precision",
        "memory_format",
        "shapes",
        "batch_size",
        "baseline_value",
        "variant_value",
        "verdict",
        "action",
        *(f"action_{n}" for n in lengths),
        "rule",
        "speedup",
        "ci_low",
        "ci_high",
        "break_even_iters",
        "kernel_cache",
        "extra_cold_s",
        "warm_extra_cold_s",
        "warm_break_even_iters",
        "extra_peak_mem_bytes",
        "extra_peak_mem_share",
        "from_batch",
        "n_pairs",
        "n_sufficient",
        "caveats",
        "evidence",
        "evidence_page",
        "evidence_anchor",
    ]
    table = pd.DataFrame(list(rows.values()), columns=columns)
    table["from_batch"] = table["from_batch"].astype("Int64")
    return table


# ---------------------------------------------------------------------------------------------
# Shared pieces: one vectorised summary per regime (groupby), then a cheap loop over regimes.


def _summaries(
    pairs: pd.DataFrame,
    by: list[str],
    extra: dict[str, tuple[str, str]] | None = None,
    extra_all: dict[str, tuple[str, str]] | None = None,
    anchors: Sequence[str] = (),
) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Per regime (sorted): n_pairs, n_sufficient, verdict (agreed, "mixed" or "insufficient"),
    median speedup and the CI envelope, evidence, models; ``extra`` = {name: (column, agg)} over the
    sufficient pairs, ``extra_all`` over all pairs, ``anchors`` = more anchor columns to cite."""
    suff = (pairs["verdict"] != "insufficient").to_numpy()
    work = pd.DataFrame({c: pairs[c] for c in by})
    work["_suff"] = suff
    work["_v"] = pairs["verdict"].where(suff)
    work["_speedup"] = pairs["speedup"].astype(float).where(suff)
    work["_lo"] = pairs["ci_low"].astype(float).where(suff)
    work["_hi"] = pairs["ci_high"].astype(float).where(suff)
    aggs: dict[str, tuple[str, str]] = {
        "n_pairs": ("_suff", "size"),
        "n_sufficient": ("_suff", "sum"),
        "n_verdicts": ("_v", "nunique"),
        "first_verdict": ("_v", "first"),
        "speedup": ("_speedup", "median"),
        "ci_low": ("_lo", "min"),
        "ci_high": ("_hi", "max"),
    }
    for name, (col, how) in (extra or {}).items():
        work[f"_{name}"] = pd.to_numeric(pairs[col], errors="coerce").astype(float).where(suff)
        aggs[name] = (f"_{name}", how)
    for name, (col, how) in (extra_all or {}).items():
        work[f"_{name}"] = pd.to_numeric(pairs[col], errors="coerce").astype(float)
        aggs[name] = (f"_{name}", how)
    grouped = work.groupby(by, sort=True, dropna=False)
    out = grouped.agg(**aggs)  # type: ignore[call-overload]
    out["verdict"] = np.select(
        [out["n_sufficient"] == 0, out["n_verdicts"] == 1],
        ["insufficient", out["first_verdict"].astype(object)],
        "mixed",
    )
    page = pairs["page"].to_numpy(dtype=object)
    cited = [
        pairs[c].to_numpy(dtype=object) for c in ("baseline_anchor", "variant_anchor", *anchors)
    ]
    model = pairs["model"].to_numpy(dtype=object)
    evidence, models = {}, {}
    for key, idx in grouped.indices.items():
        found = ((page[i], col[i]) for i in np.sort(idx) for col in cited if col[i])
        evidence[key] = tuple(dict.fromkeys(found))
        models[key] = tuple(sorted({str(model[i]) for i in idx}))
    out["evidence"] = [evidence[k] for k in out.index]
    out["models"] = [models[k] for k in out.index]
    keys = [k if isinstance(k, tuple) else (k,) for k in out.index]
    return list(zip(keys, out.to_dict("records")))


def _num(value: Any) -> float | None:
    if value is None or value is pd.NA:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _key_dict(by: list[str], key: Any) -> dict[str, Any]:
    return {c: str(v) for c, v in zip(by, key if isinstance(key, tuple) else (key,))}


def _variant_failed(pairs: pd.DataFrame) -> pd.Series:
    return (pairs["n_var"] == 0) & (pairs["n_base"] >= MIN_OK_REPLICATES)


def _common(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "verdict": str(row["verdict"]),
        "n_pairs": int(row["n_pairs"]),
        "n_sufficient": int(row["n_sufficient"]),
        "speedup": _num(row["speedup"]),
        "ci_low": _num(row["ci_low"]),
        "ci_high": _num(row["ci_high"]),
        "models": tuple(row["models"]),
    }


# ---------------------------------------------------------------------------------------------
# Rules per setting.


def _benchmark(costs: pd.DataFrame, job_lengths: Sequence[int]) -> list[Recommendation]:
    if costs.empty:
        return []
    pairs = costs.loc[costs["cudnn_deterministic"] == "off"]
    if pairs.empty:
        return []
    pairs = _cold_cache_pairs(pairs)
    pairs = pairs.assign(_failed=_variant_failed(pairs).astype(float))
    summary = _summaries(
        pairs,
        _REGIME,
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
        {"failed": ("_failed", "max")},
    )
    caches = {
        k if isinstance(k, tuple) else (k,): ", ".join(sorted(set(g)))
        for k, g in pairs.groupby(_REGIME, sort=True, dropna=False)["kernel_cache"]
    }
    out: list[Recommendation] = []
    for key, row in summary:
        verdict = row["verdict"]
        break_even = _num(row["break_even"])
        caveats = ["variant-failed"] if row["failed"] > 0 else []
        share = _num(row["mem_share"])
        if share is not None and share > MEMORY_CAVEAT_SHARE:
            caveats.append("extra-memory")
        for n in job_lengths:
            if verdict == "insufficient":
                rule, action = "bm-insufficient", INSUFFICIENT
            elif verdict == "faster":
                pays = break_even is not None and n >= break_even
                rule, action = (
                    ("bm-faster-pays-back", ENABLE)
                    if pays
                    else ("bm-cold-cost-not-repaid", KEEP_OFF)
                )
            elif verdict == "slower":
                rule, action = "bm-slower", KEEP_OFF
            elif verdict == "no clear difference":
                rule, action = "bm-no-clear-difference", LEAVE_DEFAULT
            else:
                rule, action = "bm-mixed", DEPENDS
            out.append(
                Recommendation(
                    rule=rule,
                    setting="cudnn.benchmark",
                    action=action,
                    baseline_value="off",
                    variant_value="on",
                    **_key_dict(_REGIME, key),
                    job_length=int(n),
                    **_common(row),
                    break_even_iters=break_even,
                    extra_cold_s=_num(row["extra_cold"]),
                    extra_cold_median_s=_num(row["extra_cold_median"]),
                    cold_pass_max_s=_num(row["cold_max"]),
                    base_cold_pass_s=_num(row["base_cold"]),
                    kernel_cache=caches.get(key, ""),
                    warm_extra_cold_s=_num(row["warm_extra"]),
                    warm_break_even_iters=_num(row["warm_break_even"]),
                    extra_peak_mem_bytes=_num(row["extra_mem"]),
                    extra_peak_mem_share=share,
                    workspace_bytes=_num(row["workspace"]),
                    caveats=tuple(caveats),
                    evidence=row["evidence"],
                )
            )
    return out


def _cold_cache_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    """The pairs a cudnn.benchmark decision rests on: those whose cold passes met an empty
    cache (or, in rows from before per-replicate caches, the machine's shared one). What a
    fresh machine pays decides; the warm figures ride along on those rows (``warm_*``). A
    regime measured only with a warm cache answers from its warm pairs, and says so."""
    warm = (pairs["kernel_cache"] == "warm").to_numpy()
    regime = pd.util.hash_pandas_object(pairs[_REGIME], index=False).to_numpy()
    cold_regimes = set(regime[~warm].tolist())
    keep = ~warm | ~np.isin(regime, list(cold_regimes))
    return pairs.loc[keep]


def _agreement(lo: Any, hi: Any) -> bool | None:
    """From the min and max of 0/1 check results: all equal → True, none → False, else None."""
    lo, hi = _num(lo), _num(hi)
    if lo is None or hi is None:
        return None
    if lo == 1.0:
        return True
    if hi == 0.0:
        return False
    return None


def _determinism(pairs: pd.DataFrame) -> list[Recommendation]:
    if pairs.empty:
        return []
    checks = {}
    for side in ("base", "var"):
        known = pairs[f"{side}_n_checks"] > 0
        checks[side] = pairs[f"{side}_bitwise_equal"].astype("Float64").astype(float).where(known)
    work = pairs.assign(
        _b=checks["base"], _v_eq=checks["var"], _failed=_variant_failed(pairs).astype(float)
    )
    summary = _summaries(
        work,
        _REGIME,
        extra_all={
            "b_lo": ("_b", "min"),
            "b_hi": ("_b", "max"),
            "v_lo": ("_v_eq", "min"),
            "v_hi": ("_v_eq", "max"),
            "failed": ("_failed", "max"),
            "max_diff": ("base_max_abs_diff", "max"),
        },
        anchors=("base_repro_anchor", "var_repro_anchor"),
    )
    out: list[Recommendation] = []
    for key, row in summary:
        default_eq = _agreement(row["b_lo"], row["b_hi"])
        variant_eq = _agreement(row["v_lo"], row["v_hi"])
        verdict = row["verdict"]
        if verdict == "insufficient":
            rule, action = "det-insufficient", INSUFFICIENT
        elif variant_eq is False:
            rule, action = "det-does-not-reproduce", KEEP_OFF
        elif default_eq is True:
            rule, action = "det-default-reproduces", LEAVE_DEFAULT
        elif variant_eq is None:  # no re-run check with it on: its cost, but nothing it buys
            rule, action = "det-unchecked", ENABLE_IF_NEEDED
        elif verdict == "slower":
            rule, action = "det-costs", ENABLE_IF_NEEDED
        elif verdict == "faster" or (
            verdict == "no clear difference" and not_slower(_num(row["ci_low"]))
        ):
            rule, action = "det-no-measurable-cost", ENABLE
        elif verdict == "no clear difference":
            rule, action = "det-cost-unclear", ENABLE_IF_NEEDED
        else:
            rule, action = "det-mixed", DEPENDS
        out.append(
            Recommendation(
                rule=rule,
                setting="cudnn.deterministic",
                action=action,
                baseline_value="off",
                variant_value="on",
                **_key_dict(_REGIME, key),
                job_length=None,
                **_common(row),
                bitwise_equal_default=default_eq,
                bitwise_equal_variant=variant_eq,
                max_abs_diff_default=_num(row["max_diff"]),
                caveats=("variant-failed",) if row["failed"] > 0 else (),
                evidence=row["evidence"],
            )
        )
    return out


_SWITCH_RULES = {
    "insufficient": ("insufficient", INSUFFICIENT),
    "faster": ("faster", ENABLE),
    "slower": ("slower", KEEP_OFF),
    "no clear difference": ("no-clear-difference", LEAVE_DEFAULT),
}


def _switch(pairs: pd.DataFrame, axis: str) -> list[Recommendation]:
    """precision and memory_format: switch to the variant when it is clearly faster."""
    if pairs.empty:
        return []
    regime = [c for c in _REGIME if c != axis]
    by = [*regime, "baseline_value", "variant_value"]
    work = pairs.assign(_failed=_variant_failed(pairs).astype(float))
    out: list[Recommendation] = []
    for key, row in _summaries(work, by, extra_all={"failed": ("_failed", "max")}):
        fields = _key_dict(by, key)
        baseline, variant = str(fields.pop("baseline_value")), str(fields.pop("variant_value"))
        if axis == "precision":
            fields["precision"] = baseline
        rule, action = _SWITCH_RULES.get(row["verdict"], ("mixed", DEPENDS))
        caveats = []
        if axis == "precision":
            caveats.append("changes-numerics")
            if fields["device"] == "cuda" and baseline == "fp32":
                caveats.append("tf32-default")
        if row["failed"] > 0:
            caveats.append("variant-failed")
        out.append(
            Recommendation(
                rule=f"{axis}-{rule}",
                setting=axis,
                action=action,
                baseline_value=baseline,
                variant_value=variant,
                **fields,
                job_length=None,
                **_common(row),
                caveats=tuple(caveats),
                evidence=row["evidence"],
            )
        )
    return out


def _device(curves: pd.DataFrame, cpu_gpu: pd.DataFrame) -> list[Recommendation]:
    """CPU → GPU per family: from which batch the GPU wins, if it does."""
    if curves.empty or cpu_gpu.empty:
        return []
    regime = [c for c in _REGIME if c not in ("device", "batch_size")]
    curves = curves.assign(
        model_family=curves["model"].map(model_family),
        _measured=[any(v != "insufficient" for v in vs) for vs in curves["verdicts"]],
    )
    crossings = {
        k if isinstance(k, tuple) else (k,): g["crossover_batch"].loc[g["_measured"]]
        for k, g in curves.groupby(regime, sort=True, dropna=False)
    }
    thin = cpu_gpu.loc[cpu_gpu["verdict"] == "insufficient"]
    smallest_thin = {  # per regime, the smallest batch with too few ok replicates
        k if isinstance(k, tuple) else (k,): float(b)
        for k, b in thin.groupby(regime, sort=True, dropna=False)["batch_size"].min().items()
    }
    sufficient = cpu_gpu.loc[cpu_gpu["verdict"] != "insufficient"]
    at_batch = sufficient.groupby([*regime, "batch_size"], sort=True, dropna=False).agg(
        speedup=("speedup", "median"), ci_low=("ci_low", "min"), ci_high=("ci_high", "max")
    )
    out: list[Recommendation] = []
    for key, row in _summaries(cpu_gpu, regime):
        fields = _key_dict(regime, key)
        crossing = crossings.get(key, pd.Series(dtype="Int64"))
        from_batch: int | None = None
        caveats: list[str] = []
        numbers = _common(row)
        if crossing.empty:
            rule, action = "device-insufficient", INSUFFICIENT
        elif crossing.isna().all():
            rule, action = "device-cpu-wins", KEEP_OFF
        elif crossing.notna().all() and crossing.nunique() == 1:
            from_batch = int(crossing.iloc[0])
            rule, action = "device-gpu-from-batch", ENABLE
            at = at_batch.loc[(*key, from_batch)]
            if smallest_thin.get(key, math.inf) < from_batch:
                caveats.append("smaller-batches-insufficient")
            numbers.update(
                verdict="faster",
                speedup=_num(at["speedup"]),
                ci_low=_num(at["ci_low"]),
                ci_high=_num(at["ci_high"]),
            )
        else:
            rule, action = "device-mixed", DEPENDS
        out.append(
            Recommendation(
                rule=rule,
                setting="device",
                action=action,
                baseline_value="cpu",
                variant_value="cuda",
                **fields,
                device="cuda",
                job_length=None,
                **numbers,
                from_batch=from_batch,
                caveats=tuple(caveats),
                evidence=row["evidence"],
            )
        )
    return out
