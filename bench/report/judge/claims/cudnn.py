"""The claims about cudnn.benchmark: static shapes, cycled shapes, reproducibility, and choosing
an algorithm by hand (what the installed torch answers when asked for ``algo=``)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import pandas as pd

from bench.report import fmt
from bench.report.analysis.pairs import DELTA
from bench.report.judge.claims.findings import (
    GPU_RUN,
    NAMED,
    current,
    depends,
    interval,
    label_of,
    labeller,
    name_list,
    num,
    pair_evidence,
    plural,
    rows,
    said,
    stance,
    tally,
    too_wide,
)
from bench.report.judge.claims.model import (
    MORE_REPLICATES,
    Claim,
    ClaimAnswer,
    Finding,
    decide,
    replicates_remedy,
)
from bench.report.judge.selection import counted_benchmark
from bench.report.vocabulary import Stance, Verdict


def _benchmark_pairs(a: Any, *shapes: str) -> pd.DataFrame:
    """The benchmark off → on pairs that count (``selection.counted_benchmark``) of these
    input shapes."""
    bm = counted_benchmark(current(a.benchmark, a))
    return bm.loc[bm["shapes"].isin(shapes)] if len(bm) else bm


def benchmark_static(claim: Claim, a: Any) -> ClaimAnswer:
    pairs = _benchmark_pairs(a, "static")
    name = labeller(pairs)
    findings: list[Finding] = []
    for r in rows(pairs):
        if r.verdict == Verdict.INSUFFICIENT:
            continue
        said = stance(r.verdict, r.ci_low, r.ci_high)
        findings.append(Finding(
            said, str(r.page), str(r.machine), functools.partial(_static_text, r, name),
            pair_evidence(r), str(r.model), remedy=replicates_remedy(said)))
    split = depends(findings)
    summary = "; ".join(
        f"on {group['machine'].iloc[0]}: {counts_text(group, name, tight=split)} of "
        f"{plural(len(group), 'configurations with one input shape')}"
        for _, group in pairs.loc[pairs["verdict"] != Verdict.INSUFFICIENT].groupby("page"))
    return decide(claim, findings, summary or "no sufficient comparison", GPU_RUN)


def _static_text(r: Any, name: Callable[[Any], str]) -> str:
    cold = (f"; its first pass costs up to {fmt.seconds(r.extra_cold_pass_max_s)} more "
            "(slowest replicate)" if fmt.present(r.extra_cold_pass_max_s) else "")
    return f"{name(r)}: {interval(r)}, {said(r.verdict, r.ci_low, r.ci_high)}{cold}"


def counts_text(pairs: pd.DataFrame, name: Callable[[Any], str] | None = None,
                   tight: bool = False) -> str:
    """``faster in 2 (resnet50 · fp32-strict 1.10×, …), no clear difference in 12 (3 of them
    too wide to tell), slower in 0``: with ``name``, the regimes that moved are named, the
    largest changes first, so "it depends" says where; with ``tight`` too, so are the "no clear
    difference" ones whose interval lies within 1 ± δ (they contradict a claim of "faster")."""
    counts = pairs["verdict"].value_counts()
    wide_mask = [too_wide(v, lo, hi) for v, lo, hi in zip(
        pairs["verdict"], pairs["ci_low"], pairs["ci_high"])]
    wide = sum(wide_mask)
    parts = []
    for v in (Verdict.FASTER, Verdict.NO_CLEAR_DIFFERENCE, Verdict.SLOWER):
        n = int(counts.get(v, 0))
        text = f"{v} in {n}"
        if v == Verdict.NO_CLEAR_DIFFERENCE:
            inside = pairs.loc[(pairs["verdict"] == v).to_numpy() & ~pd.Series(
                wide_mask, dtype=bool).to_numpy()]
            said = []
            if name is not None and tight and len(inside):
                said.append("within 1 ± " + fmt.pct(DELTA) + ": " + name_list(
                    [f"{name(r)} {fmt.ratio(r.speedup)}" for r in rows(inside)]))
            if wide:
                said.append(f"{wide} of them too wide to tell")
            if said:
                text += f" ({'; '.join(said)})"
        elif name is not None and n:
            moved = pairs.loc[pairs["verdict"] == v].astype({"speedup": float}).sort_values(
                "speedup", ascending=v == Verdict.SLOWER, kind="stable")
            text += " (" + name_list(
                [f"{name(r)} {fmt.ratio(r.speedup)}" for r in rows(moved.head(NAMED))], n) + ")"
        parts.append(text)
    return ", ".join(parts)


def benchmark_dynamic(claim: Claim, a: Any) -> ClaimAnswer:
    """Supported where changing shapes (cycled resolutions, or a smaller last batch: ragged)
    make each new shape's first pass dearer with benchmark on (it searches again) and
    benchmark on is not faster over the cycle; contradicted where it is faster even so (it
    repays its searches)."""
    pairs = _benchmark_pairs(a, "dynamic", "ragged")
    static = _benchmark_pairs(a, "static")
    key = [c for c in ("fingerprint_id", "model", "mode", "batch_size", "precision",
                       "memory_format", "kernel_cache") if c in pairs.columns]
    static_extra = (static.drop_duplicates(key).set_index(key)["extra_cold_pass_s"]
                    if len(static) else pd.Series(dtype=float))
    pairs = pairs.loc[pairs["verdict"] != Verdict.INSUFFICIENT]
    counts = a.cells.set_index(["fingerprint_id", "cell_id"])["shape_count"].reindex(
        pd.MultiIndex.from_arrays([pairs["fingerprint_id"], pairs["variant_cell_id"]]))
    bases = static_extra.reindex(pd.MultiIndex.from_frame(pairs[key])) if len(pairs) and len(
        static_extra) else pd.Series(0.0, index=pairs.index)
    name = labeller(pairs, keep=("batch_size", "precision", "shapes"))
    findings: list[Finding] = []
    for r, base, count in zip(rows(pairs), bases.to_numpy(float), counts.to_numpy(float)):
        extra = num(r.extra_cold_pass_s)
        searches = fmt.present(extra) and extra > max(0.0 if math.isnan(base) else base, 0.0)
        shapes = max(int(count) if fmt.present(count) else 1, 1)
        wide = r.verdict != Verdict.FASTER and too_wide(r.verdict, r.ci_low, r.ci_high)
        said = (Stance.CONTRADICTS if r.verdict == Verdict.FASTER else
                Stance.CANNOT_TELL if wide else
                Stance.SUPPORTS if searches else Stance.CANNOT_TELL)
        findings.append(Finding(said, str(r.page), str(r.machine),
                                functools.partial(_dynamic_text, r, name, shapes),
                                pair_evidence(r), str(r.model), name(r),
                                MORE_REPLICATES if wide else ""))
    summary = tally(findings, "configurations with changing shapes",
                    "dearer new shapes and no faster with benchmark on",
                    "faster with benchmark on", "no dearer new shapes or too wide an interval")
    return decide(claim, findings, summary or "no sufficient comparison of changing shapes",
                  GPU_RUN + ", whose shapes study cycles input resolutions")


def _dynamic_text(r: Any, name: Callable[[Any], str], shapes: int) -> str:
    """The extra first-pass cost per shape in the median replicate, and the range over every
    replicate with benchmark on (each against the median one off), so the figure holds for
    each of them."""
    base = num(r.base_cold_pass_s)
    median, low, high = ((num(v) - base) / shapes for v in (
        r.var_cold_pass_s, r.var_cold_pass_min_s, r.var_cold_pass_max_s))
    spread = (f" ({fmt.seconds(low)} to {fmt.seconds(high)} over its replicates, each against "
              "the median one with it off)"
              if fmt.present(low) and fmt.present(high)
              and fmt.seconds(low) != fmt.seconds(high) else "")
    text = (f"{name(r)}: with benchmark on, each of its {shapes} shapes' first pass costs "
            f"{fmt.seconds(median)} more on average in the median replicate{spread}; over the "
            f"cycle {interval(r)}, {said(r.verdict, r.ci_low, r.ci_high)}")
    return text + (" (it repays its searches in a long enough job)"
                   if r.verdict == Verdict.FASTER else "")


def benchmark_reproducibility(claim: Claim, a: Any) -> ClaimAnswer:
    """Pairs the re-run checks with deterministic off that differ only in cudnn.benchmark (and
    the kernel cache, which holds the same kernels either way)."""
    rep = current(a.repro, a)
    if not rep.empty:
        rep = rep.loc[(rep["device"] == "cuda") & (rep["cudnn_deterministic"] == "off")
                      & (rep["n_ok_checks"] > 0)]
    key = ["fingerprint_id", "model", "mode", "batch_size", "resolution", "precision",
           "memory_format", "shapes"]
    findings: list[Finding] = []
    on_equal = on_total = 0
    if not rep.empty:
        off = rep.loc[rep["cudnn_benchmark"] == "off"].drop_duplicates(key).set_index(key)
        name = labeller(rep)
        for r in rows(rep.loc[rep["cudnn_benchmark"] == "on"]):
            on_total += 1
            on_equal += bool(r.bitwise_equal)
            k = tuple(getattr(r, c) for c in key)
            base = off.loc[k] if k in off.index else None
            evidence = [(str(r.page), str(r.anchor))]
            if base is not None:
                evidence.append((str(r.page), str(base["anchor"])))
            if bool(r.bitwise_equal):
                stance, what = Stance.CONTRADICTS, "bitwise equal with benchmark on"
            elif base is not None and bool(base["bitwise_equal"]):
                stance = Stance.SUPPORTS
                what = "not bitwise equal with benchmark on, bitwise equal with it off"
            else:
                stance = Stance.CANNOT_TELL
                what = ("not bitwise equal with benchmark on, and not with it off either, so "
                        "benchmark's part cannot be told apart" if base is not None else
                        "not bitwise equal with benchmark on; no check with it off to compare")
            # unequal with it off too: nothing more on that machine would tell
            remedy = ("" if base is not None or stance != Stance.CANNOT_TELL else
                      "the same re-run check with benchmark off on that machine")
            findings.append(Finding(stance, str(r.page), str(r.machine),
                                    f"{name(r)}: two fresh processes {what}", tuple(evidence),
                                    str(r.model), f"{name(r)} on {r.machine}", remedy))
    summary = (f"bitwise re-run with benchmark on (deterministic off): equal in {on_equal} of "
               f"{fmt.count(on_total, 'check')}" if on_total
               else "no re-run check with benchmark on")
    if depends(findings):  # say where benchmark made the difference and where it did not
        summary += "; " + ", ".join(
            f"{word} in {name_list([label_of(f) for f in findings if f.stance == side])}"
            for side, word in ((Stance.SUPPORTS, "unequal with it on but equal with it off"),
                               (Stance.CONTRADICTS, "equal with it on")))
    return decide(claim, findings, summary, GPU_RUN + ", whose re-run study checks benchmark on")


def conv_algo_argument(claim: Claim, a: Any) -> ClaimAnswer:
    machines = current(a.machines, a)
    findings: list[Finding] = []
    for m in rows(machines):
        answers = tuple(m.conv_api) if isinstance(m.conv_api, tuple) else ()
        known = [(entry, took, err) for entry, took, err in answers if took is not None]
        if not known:
            continue
        took_any = any(took for _, took, _ in known)
        said = "; ".join(f"{entry} {'takes it' if took else 'refuses it'}"
                         + (f" ({err})" if err and not took else "") for entry, took, err in known)
        findings.append(Finding(Stance.SUPPORTS if took_any else Stance.CONTRADICTS, str(m.page),
                                str(m.machine), f"torch {m.torch_version}: {said}",
                                ((str(m.page), f"env-{str(m.fingerprint_id)[:8]}"),),
                                label=f"torch {m.torch_version} on {m.page}"))
    versions = sorted({f.text.split(":", 1)[0] for f in findings})
    summary = (f"asked of the installed torch on {fmt.count(len(findings), 'fingerprint')} "
               f"({', '.join(versions)}): an algo argument is accepted by "
               f"{sum(f.stance == Stance.SUPPORTS for f in findings)}" if findings else
               "no run has asked its torch yet")
    if depends(findings):
        summary += " (" + "; ".join(
            f"{word}: {name_list([label_of(f) for f in findings if f.stance == side])}"
            for side, word in ((Stance.SUPPORTS, "accepted by"),
                               (Stance.CONTRADICTS, "refused by"))) + ")"
    return decide(claim, findings, summary,
                  "any run of this version of the runner (python -m bench run): its probe asks")
