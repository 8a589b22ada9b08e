"""The claims about cudnn.benchmark: static shapes, cycled shapes, reproducibility, and choosing
an algorithm by hand (what the installed torch answers when asked for ``algo=``)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import pandas as pd

from bench.report import fmt
from bench.report.claims.findings import (
    GPU_RUN,
    current,
    interval,
    labeller,
    num,
    pair_evidence,
    plural,
    rows,
    said,
    stance,
    tally,
    too_wide,
)
from bench.report.claims.model import (
    CANNOT_TELL,
    CONTRADICTS,
    SUPPORTS,
    Claim,
    Finding,
    Verdict,
    decide,
)


def _benchmark_pairs(a: Any, shapes: str) -> pd.DataFrame:
    """benchmark off → on pairs with deterministic off, decided from cold (not warm) caches."""
    bm = current(a.benchmark, a)
    if bm.empty:
        return bm
    keep = (bm["shapes"] == shapes) & (bm["cudnn_deterministic"] == "off") & (
        bm["kernel_cache"] != "warm")
    return bm.loc[keep]


def benchmark_static(claim: Claim, a: Any) -> Verdict:
    pairs = _benchmark_pairs(a, "static")
    name = labeller(pairs)
    findings: list[Finding] = []
    for r in rows(pairs):
        if r.verdict == "insufficient":
            continue
        findings.append(Finding(
            stance(r.verdict, r.ci_low, r.ci_high), str(r.page), str(r.machine),
            functools.partial(_static_text, r, name), pair_evidence(r), str(r.model)))
    summary = "; ".join(
        f"on {group['machine'].iloc[0]}: {verdict_counts(group, name)} of "
        f"{plural(len(group), 'configurations with one input shape')}"
        for _, group in pairs.loc[pairs["verdict"] != "insufficient"].groupby("page"))
    return decide(claim, findings, summary or "no sufficient comparison", GPU_RUN)


def _static_text(r: Any, name: Callable[[Any], str]) -> str:
    cold = (f"; its first pass costs up to {fmt.seconds(r.extra_cold_pass_max_s)} more "
            "(slowest replicate)" if fmt.present(r.extra_cold_pass_max_s) else "")
    return f"{name(r)}: {interval(r)}, {said(r.verdict, r.ci_low, r.ci_high)}{cold}"


#: Regimes a summary names per direction before it says "…".
NAMED = 3


def verdict_counts(pairs: pd.DataFrame, name: Callable[[Any], str] | None = None) -> str:
    """``faster in 2 (resnet50 · fp32-strict 1.10×, …), no clear difference in 12 (3 of them
    too wide to tell), slower in 0``: with ``name``, the regimes that moved are named, the
    largest changes first, so "it depends" says where."""
    counts = pairs["verdict"].value_counts()
    wide = sum(too_wide(v, lo, hi) for v, lo, hi in zip(
        pairs["verdict"], pairs["ci_low"], pairs["ci_high"]))
    parts = []
    for v in ("faster", "no clear difference", "slower"):
        n = int(counts.get(v, 0))
        text = f"{v} in {n}"
        if v == "no clear difference" and wide:
            text += f" ({wide} of them too wide to tell)"
        elif name is not None and n:
            moved = pairs.loc[pairs["verdict"] == v].astype({"speedup": float}).sort_values(
                "speedup", ascending=v == "slower", kind="stable")
            named = [f"{name(r)} {fmt.ratio(r.speedup)}" for r in rows(moved.head(NAMED))]
            text += f" ({', '.join(named)}{', …' if n > NAMED else ''})"
        parts.append(text)
    return ", ".join(parts)


def benchmark_dynamic(claim: Claim, a: Any) -> Verdict:
    """Supported where cycled shapes make each new shape's first pass dearer with benchmark on
    (it searches again) and benchmark on is not faster over the cycle; contradicted where it
    is faster even so (it repays its searches)."""
    pairs = _benchmark_pairs(a, "dynamic")
    static = _benchmark_pairs(a, "static")
    key = [c for c in ("fingerprint_id", "model", "mode", "batch_size", "precision",
                       "memory_format", "kernel_cache") if c in pairs.columns]
    static_extra = (static.drop_duplicates(key).set_index(key)["extra_cold_pass_s"]
                    if len(static) else pd.Series(dtype=float))
    pairs = pairs.loc[pairs["verdict"] != "insufficient"]
    counts = a.cells.set_index(["fingerprint_id", "cell_id"])["shape_count"].reindex(
        pd.MultiIndex.from_arrays([pairs["fingerprint_id"], pairs["variant_cell_id"]]))
    bases = static_extra.reindex(pd.MultiIndex.from_frame(pairs[key])) if len(pairs) and len(
        static_extra) else pd.Series(0.0, index=pairs.index)
    name = labeller(pairs)
    findings: list[Finding] = []
    for r, base, count in zip(rows(pairs), bases.to_numpy(float), counts.to_numpy(float)):
        extra = num(r.extra_cold_pass_s)
        searches = fmt.present(extra) and extra > max(0.0 if math.isnan(base) else base, 0.0)
        shapes = max(int(count) if fmt.present(count) else 1, 1)
        said = (CONTRADICTS if r.verdict == "faster" else
                CANNOT_TELL if too_wide(r.verdict, r.ci_low, r.ci_high) else
                SUPPORTS if searches else CANNOT_TELL)
        findings.append(Finding(said, str(r.page), str(r.machine),
                                functools.partial(_dynamic_text, r, name, shapes, extra / shapes),
                                pair_evidence(r), str(r.model)))
    summary = tally(findings, "configurations with cycled shapes",
                    "dearer new shapes and no faster with benchmark on",
                    "faster with benchmark on", "no dearer new shapes or too wide an interval")
    return decide(claim, findings, summary or "no sufficient comparison of cycled shapes",
                  GPU_RUN + ", whose shapes study cycles input resolutions")


def _dynamic_text(r: Any, name: Callable[[Any], str], shapes: int, per_shape: float) -> str:
    text = (f"{name(r)}: with benchmark on, each of its {shapes} shapes' first pass costs "
            f"{fmt.seconds(per_shape)} more on average; over the cycle {interval(r)}, "
            f"{said(r.verdict, r.ci_low, r.ci_high)}")
    return text + (" (it repays its searches in a long enough job)"
                   if r.verdict == "faster" else "")


def benchmark_reproducibility(claim: Claim, a: Any) -> Verdict:
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
                stance, what = CONTRADICTS, "bitwise equal with benchmark on"
            elif base is not None and bool(base["bitwise_equal"]):
                stance, what = SUPPORTS, ("not bitwise equal with benchmark on, bitwise equal "
                                          "with it off")
            else:
                stance = CANNOT_TELL
                what = ("not bitwise equal with benchmark on, and not with it off either, so "
                        "benchmark's part cannot be told apart" if base is not None else
                        "not bitwise equal with benchmark on; no check with it off to compare")
            findings.append(Finding(stance, str(r.page), str(r.machine),
                                    f"{name(r)}: two fresh processes {what}", tuple(evidence),
                                    str(r.model)))
    summary = (f"bitwise re-run with benchmark on (deterministic off): equal in {on_equal} of "
               f"{on_total} checks" if on_total else "no re-run check with benchmark on")
    return decide(claim, findings, summary, GPU_RUN + ", whose re-run study checks benchmark on")


def conv_algo_argument(claim: Claim, a: Any) -> Verdict:
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
        findings.append(Finding(SUPPORTS if took_any else CONTRADICTS, str(m.page),
                                str(m.machine), f"torch {m.torch_version}: {said}",
                                ((str(m.page), "environment"),)))  # env.json, on its page
    versions = sorted({f.text.split(":", 1)[0] for f in findings})
    summary = (f"asked of the installed torch on {len(findings)} fingerprint(s) "
               f"({', '.join(versions)}): an algo argument is accepted by "
               f"{sum(f.stance == SUPPORTS for f in findings)}" if findings else
               "no run has asked its torch yet")
    return decide(claim, findings, summary,
                  "any run of this version of the runner (python -m bench run): its probe asks")
