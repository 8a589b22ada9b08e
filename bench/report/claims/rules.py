"""One rule per claim: read the analysis, file findings, and let :func:`model.decide` judge.

Each rule answers from the fingerprints the home page answers from (a fingerprint that a newer
step definition superseded is left out), with the analysis' own verdicts: a comparison is
*faster* only when its whole 95% interval clears 1 + δ, and one with too few ok replicates is
*insufficient* and tells nothing. The figures in a finding's text are the ones its rows carry;
a summary never claims more than its findings show.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

from bench.report import fmt
from bench.report.analysis.bootstrap import ratio_ci
from bench.report.analysis.pairs import DELTA, within_band
from bench.report.analysis.pairs import verdict as pair_verdict
from bench.report.claims.model import (
    CANNOT_TELL,
    CONTRADICTS,
    SUPPORTS,
    Claim,
    Finding,
    Verdict,
    decide,
)
from bench.schema import USER_MODEL_AXES

Rule = Callable[[Claim, Any], Verdict]

#: What a configuration is called in a finding, in this order (values that do not vary among a
#: rule's rows are left out).
_LABEL = ("model", "mode", "batch_size", "precision", "memory_format", "shapes", "kernel_cache")
_WORDS = {"batch_size": "batch {}", "kernel_cache": "{} kernel cache", "shapes": "{} shapes"}

GPU_RUN = "a run of the gpu profile on a CUDA machine (python -m bench run --profile gpu)"


# ---------------------------------------------------------------------------------------------
# Shared pieces.


def current(frame: pd.DataFrame, a: Any) -> pd.DataFrame:
    """``frame`` without the fingerprints a newer step definition superseded."""
    if frame.empty:
        return frame
    old = set(a.machines.loc[a.machines["superseded"].astype(bool), "page"])
    return frame.loc[~frame["page"].isin(old)] if old else frame


def labeller(frame: pd.DataFrame, omit: tuple[str, ...] = (),
             keep: tuple[str, ...] = ()) -> Callable[[Any], str]:
    """A function naming one row of ``frame`` by the label columns that vary in it (the model
    and mode always, ``keep`` too; ``omit`` never): ``resnet50 · train · fp32-strict``."""
    shown = [c for c in _LABEL if c in frame.columns and c not in omit and (
        c in ("model", "mode", *keep) or frame[c].astype(str).nunique() > 1)]

    def name(row: Any) -> str:
        parts = []
        for c in shown:
            value = getattr(row, c)
            if value is None or value is pd.NA or str(value) in ("", "nan"):
                continue
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            parts.append(_WORDS.get(c, "{}").format(value))
        return " · ".join(parts)

    return name


def rows(frame: pd.DataFrame) -> Iterable[Any]:
    """``frame``'s rows as tuples with plain values (nullable columns as objects)."""
    return frame.astype(object).itertuples(index=False)


def pair_evidence(r: Any) -> tuple[tuple[str, str], ...]:
    return ((str(r.page), str(r.baseline_anchor)), (str(r.page), str(r.variant_anchor)))


def interval(r: Any) -> str:
    """``1.21× (95% CI 1.18–1.25×)``, or the speedup alone without an interval."""
    ci = fmt.ci(r.ci_low, r.ci_high)
    return fmt.ratio(r.speedup) + (f" (95% CI {ci})" if ci != fmt.MISSING else "")


def per_machine(findings: list[Finding]) -> dict[tuple[str, str], list[Finding]]:
    out: dict[tuple[str, str], list[Finding]] = {}
    for f in findings:
        out.setdefault((f.machine, f.page), []).append(f)
    return out


def plural(n: int, what: str) -> str:
    """``1 configuration``, ``3 configurations`` (``what`` is the plural; the first word is
    made singular for one)."""
    if n != 1:
        return f"{n} {what}"
    first, _, rest = what.partition(" ")
    return f"1 {first[:-1] if first.endswith('s') else first}" + (f" {rest}" if rest else "")


def tally(findings: list[Finding], what: str, yes: str, no: str,
          unknown: str = "too few ok replicates to tell") -> str:
    """Per machine, ``on m: of 4 configurations, faster in 1, not in 2, too few … in 1``."""
    parts = []
    grouped = per_machine(findings)
    names = [machine for machine, _ in grouped]
    for (machine, page), fs in grouped.items():
        if names.count(machine) > 1:  # one machine under two fingerprints: say which
            machine = page
        counts = {s: sum(f.stance == s for f in fs) for s in (SUPPORTS, CONTRADICTS, CANNOT_TELL)}
        said = [f"{yes} in {counts[SUPPORTS]}", f"{no} in {counts[CONTRADICTS]}"]
        if counts[CANNOT_TELL]:
            said.append(f"{unknown} in {counts[CANNOT_TELL]}")
        parts.append(f"on {machine}, of {plural(len(fs), what)}: {', '.join(said)}")
    return "; ".join(parts)


#: What a finding says of a "no clear difference" whose interval reaches beyond 1 ± δ.
TOO_WIDE = f"an interval too wide to tell (it reaches beyond 1 ± {fmt.pct(DELTA)})"


def too_wide(verdict: str, ci_low: Any, ci_high: Any) -> bool:
    """Whether a "no clear difference" only fails to show a change (its interval reaches beyond
    1 ± δ) rather than showing there is none: no evidence either way."""
    return verdict == "no clear difference" and not within_band(_num(ci_low), _num(ci_high))


def stance(verdict: str, ci_low: Any, ci_high: Any, yes: str = "faster") -> str:
    """What one comparison says of a claim that predicts ``yes``: it supports it with that
    verdict, tells nothing when it is a too-wide "no clear difference", and contradicts it
    otherwise (the other direction, or a tight interval inside 1 ± δ)."""
    if verdict == yes:
        return SUPPORTS
    return CANNOT_TELL if too_wide(verdict, ci_low, ci_high) else CONTRADICTS


def _said(verdict: str, ci_low: Any, ci_high: Any) -> str:
    """The verdict word, qualified when its interval is too wide to tell."""
    return f"{verdict}, {TOO_WIDE}" if too_wide(verdict, ci_low, ci_high) else verdict


def _num(value: Any) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return math.nan
    return x


# ---------------------------------------------------------------------------------------------
# cudnn.benchmark.


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
    return f"{name(r)}: {interval(r)}, {_said(r.verdict, r.ci_low, r.ci_high)}{cold}"


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
        extra = _num(r.extra_cold_pass_s)
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
            f"{_said(r.verdict, r.ci_low, r.ci_high)}")
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


# ---------------------------------------------------------------------------------------------
# CPU against GPU.

def _cpu_gpu(a: Any) -> pd.DataFrame:
    cvg = current(a.cpu_gpu, a)
    return cvg.loc[cvg["verdict"] != "insufficient"] if len(cvg) else cvg


def gpu_speedup_magnitude(claim: Claim, a: Any, target: float = 50.0) -> Verdict:
    """Per machine: the largest measured GPU-over-CPU speedup; supported where its interval
    contains ``target``, contradicted where it lies above (the claim understates) or where
    every speedup's interval lies below (it overstates)."""
    cvg = _cpu_gpu(a)
    findings: list[Finding] = []
    for page, group in (cvg.groupby("page", sort=True) if len(cvg) else ()):
        ordered = list(rows(group.sort_values("speedup", kind="stable")))
        low, top = ordered[0], ordered[-1]
        name = labeller(group, keep=("batch_size",))  # the batch, even where only one had enough
        hi, lo = _num(top.ci_high), _num(top.ci_low)
        if lo > target:
            stance, how = CONTRADICTS, f"more than {target:g}× at its largest"
        elif hi < target:
            stance, how = CONTRADICTS, f"never {target:g}×"
        else:
            stance, how = SUPPORTS, f"about {target:g}× at its largest"
        models = ", ".join(sorted(set(group["model"].astype(str))))
        text = (f"GPU over CPU, where both sides have enough ok replicates: "
                f"{fmt.ratio(low.speedup)} ({name(low)}) to {fmt.ratio(top.speedup)} "
                f"({name(top)}, 95% CI {fmt.ci(top.ci_low, top.ci_high)}) for {models}: {how}")
        evidence = tuple(e for r in ordered for e in pair_evidence(r))
        findings.append(Finding(stance, str(page), str(top.machine), text, evidence, models))
    summary = "; ".join(f"on {f.machine}: {f.text}" for f in findings)
    return decide(claim, findings, summary or "no sufficient CPU-against-GPU comparison",
                  GPU_RUN + ", whose cpu_vs_gpu study runs both on one machine")


def cpu_for_small_batches(claim: Claim, a: Any) -> Verdict:
    """Per curve (machine, model, mode, …): the smallest batch measured. The CPU is the better
    choice there only when the GPU is clearly slower; too few replicates there tell nothing."""
    cvg = current(a.cpu_gpu, a)
    findings: list[Finding] = []
    if len(cvg):
        curve = [c for c in ("fingerprint_id", "model", "mode", "resolution", "precision",
                             "memory_format", "shapes") if c in cvg.columns]
        smallest = cvg.sort_values("batch_size", kind="stable").drop_duplicates(curve)
        name = labeller(smallest, omit=("batch_size",))
        for r in rows(smallest):
            where = f"{name(r)} at batch {int(_num(r.batch_size))}, the smallest measured"
            if r.verdict == "insufficient":  # a thin small batch answers nothing
                findings.append(Finding(CANNOT_TELL, str(r.page), str(r.machine),
                                        f"{where}: too few ok replicates to judge",
                                        pair_evidence(r), str(r.model)))
                continue
            who = {"slower": "the CPU is faster", "faster": "the GPU is faster"}.get(
                r.verdict, "neither is clearly faster")
            if too_wide(r.verdict, r.ci_low, r.ci_high):
                who = f"{who}, {TOO_WIDE}"
            findings.append(Finding(stance(r.verdict, r.ci_low, r.ci_high, yes="slower"),
                                    str(r.page), str(r.machine),
                                    f"{where}: {who} (GPU {interval(r)})", pair_evidence(r),
                                    str(r.model)))
    summary = tally(findings, "curves at their smallest batch", "the CPU clearly faster",
                    "the GPU faster or neither", "too few ok replicates or too wide an interval")
    return decide(claim, findings, summary or "no CPU-against-GPU comparison", GPU_RUN)


def memory_limit(claim: Claim, a: Any) -> Verdict:
    """For each CPU/GPU pair of one workload: the whole run's peak as a share of each device's
    own memory (the GPU's total, the host's installed memory). Supported where the GPU's share
    is the larger (its memory fills first as the batch grows)."""
    cvg = current(a.cpu_gpu, a)
    findings: list[Finding] = []
    if len(cvg):
        cells = a.cells.set_index(["fingerprint_id", "cell_id"])
        caps = a.machines.set_index("fingerprint_id")
        fp = cvg["fingerprint_id"]
        on = pd.DataFrame({
            "cpu_peak": cells["peak_rss_bytes"].reindex(
                pd.MultiIndex.from_arrays([fp, cvg["baseline_cell_id"]])).to_numpy(float),
            "gpu_peak": cells["whole_peak_mem_allocated_bytes"].reindex(
                pd.MultiIndex.from_arrays([fp, cvg["variant_cell_id"]])).to_numpy(float),
            "gpu_total": pd.to_numeric(caps["gpu_memory_bytes"], errors="coerce").reindex(
                fp).to_numpy(float),
            "host_total": pd.to_numeric(caps["memory_bytes"], errors="coerce").reindex(
                fp).to_numpy(float),
        }, index=cvg.index)
        known = on.notna().all(axis=1) & (on["gpu_total"] > 0) & (on["host_total"] > 0)
        cvg, on = cvg.loc[known], on.loc[known]
        name = labeller(cvg, omit=("batch_size",))
        for r, m in zip(rows(cvg), on.itertuples(index=False)):
            findings.append(Finding(
                SUPPORTS if m.gpu_peak / m.gpu_total > m.cpu_peak / m.host_total else
                CONTRADICTS, str(r.page), str(r.machine),
                functools.partial(_memory_text, r, m, name), pair_evidence(r), str(r.model)))
    summary = tally(findings, "workloads measured on both", "the GPU's memory the fuller",
                    "the host's the fuller")
    if findings:
        summary += "; a CPU's memory is finite too (the host's installed memory above)"
    return decide(claim, findings, summary or "no workload measured on both with its memory",
                  GPU_RUN)


def _memory_text(r: Any, m: Any, name: Callable[[Any], str]) -> str:
    return (f"{name(r)} at batch {int(_num(r.batch_size))}: the GPU run peaked at "
            f"{fmt.bytes_(m.gpu_peak)} of {fmt.bytes_(m.gpu_total)} "
            f"({fmt.pct(m.gpu_peak / m.gpu_total)}), the CPU run at {fmt.bytes_(m.cpu_peak)} of "
            f"{fmt.bytes_(m.host_total)} ({fmt.pct(m.cpu_peak / m.host_total)})")


def cpu_threads(claim: Claim, a: Any) -> Verdict:
    """One thread against every core the process may use, same cell otherwise; the same
    interval and verdict rules as every comparison."""
    cells = current(a.cells, a)
    findings: list[Finding] = []
    if len(cells):
        cpu = cells.loc[(cells["kind"] == "model") & (cells["device"] == "cpu")]
        one = cpu.loc[cpu["cpu_threads"].astype("Float64") == 1]
        every = cpu.loc[cpu["cpu_threads"].isna()]
        key = [c for c in ("fingerprint_id", "model", *USER_MODEL_AXES, "mode", "batch_size",
                           "resolution", "precision", "memory_format", "shapes", "kernel_cache",
                           "compile", "compile_dynamic") if c in cpu.columns]
        pairs = one.merge(every, on=key, suffixes=("", "_all"))
        if len(pairs):
            est, lo, hi = ratio_ci(pairs["replicate_medians"].tolist(),
                                   pairs["replicate_medians_all"].tolist())
            name = labeller(pairs)
            for r, s, l_, h in zip(rows(pairs), est, lo, hi):
                word = pair_verdict(l_, h, int(r.n_ok), int(r.n_ok_all))
                if word == "insufficient":
                    continue
                findings.append(Finding(
                    stance(word, l_, h), str(r.page), str(r.machine),
                    f"{name(r)}: every core against one thread {fmt.ratio(s)} (95% CI "
                    f"{fmt.ci(l_, h)}), {_said(word, l_, h)}",
                    ((str(r.page), str(r.anchor)), (str(r.page), str(r.anchor_all))),
                    str(r.model)))
    summary = tally(findings, "configurations", "every core clearly faster than one thread",
                    "not clearly faster", "too wide an interval to tell")
    return decide(claim, findings, summary or "no one-thread against all-cores comparison",
                  "a run of the cpu profile (python -m bench run --profile cpu), whose threads "
                  "study runs one thread against every core")


def memory_bandwidth(claim: Claim, a: Any, factor: float = 10.0) -> Verdict:
    """Per machine: the device copy's sustained rate over the host's, with the bounds their
    intervals allow; supported when even the lowest ratio reaches ``factor``."""
    ceil = current(a.ceilings, a)
    findings: list[Finding] = []
    if len(ceil):
        copy = ceil.loc[(ceil["op"] == "copy") & ceil["achieved"].notna()]
        for page, group in copy.groupby("page", sort=True):
            by = {str(r.device): r for r in rows(group)}
            gpu, cpu = by.get("cuda"), by.get("cpu")
            if gpu is None or cpu is None:
                continue
            ratio = _num(gpu.achieved) / _num(cpu.achieved)
            lowest = _num(gpu.ci_low) / _num(cpu.ci_high)
            highest = _num(gpu.ci_high) / _num(cpu.ci_low)
            if fmt.present(lowest) and lowest >= factor:
                stance = SUPPORTS
            elif fmt.present(highest) and highest < factor:
                stance = CONTRADICTS
            else:
                stance = CANNOT_TELL  # too few replicates for an interval, or it straddles
            why = ("" if stance != CANNOT_TELL else
                   "; too few ok replicates for an interval" if not fmt.present(lowest) else
                   f"; the intervals allow {fmt.ratio(lowest)} to {fmt.ratio(highest)}")
            findings.append(Finding(
                stance, str(page), str(gpu.machine),
                f"device copy {fmt.num(gpu.achieved)} GB/s against the host's "
                f"{fmt.num(cpu.achieved)} GB/s (sustained): {fmt.ratio(ratio)}{why}",
                ((str(page), str(gpu.anchor)), (str(page), str(cpu.anchor)))))
    summary = "; ".join(f"on {f.machine}: {f.text}" for f in findings)
    return decide(claim, findings, summary or "no machine measured both copies",
                  GPU_RUN + ", whose copy studies measure the device and the host")


def upgrade_vs_settings(claim: Claim, a: Any) -> Verdict:
    """For each workload measured on two or more machines: the fastest machine's best
    throughput over the slowest's (the upgrade, with a bootstrap interval over both cells'
    replicates), against the best setting change measured on the slowest one (that
    fingerprint) for that model, mode and batch size. The upgrade buys more only when its
    whole interval clears the setting's by δ; it buys no more when its whole interval stays
    under the setting's low end plus δ; otherwise the intervals cannot tell them apart."""
    best = current(a.best, a)
    findings: list[Finding] = []
    if len(best):
        best = best.loc[~best["insufficient"].astype(bool)]  # the site's replicate minimum
        key = ["model", "mode", "batch_size", "resolution", "precision", "shapes"]
        # machines, not fingerprints: two torch versions on one box are no upgrade
        best = best.sort_values([*key, "samples_per_s"], kind="stable").reset_index(drop=True)
        slowest = best.drop_duplicates(key, keep="first")
        merged = best.merge(slowest[[*key, "machine"]], on=key, suffixes=("", "_slow"))
        others = merged.loc[merged["machine"] != merged["machine_slow"]]
        fastest = others.drop_duplicates(key, keep="last")[
            [*key, "machine", "page", "anchor", "fingerprint_id", "cell_id", "samples_per_s"]]
        pairs = slowest.merge(fastest, on=key, suffixes=("", "_fast"))
        medians = a.cells.set_index(["fingerprint_id", "cell_id"])["replicate_medians"]

        def reps(fp: str, cell: str) -> list[float]:
            return list(medians.get((fp, cell), ()))

        ups, ups_lo, ups_hi = ratio_ci(  # slow step ÷ fast step = fast throughput ÷ slow's
            [reps(r.fingerprint_id, r.cell_id) for r in rows(pairs)],
            [reps(r.fingerprint_id_fast, r.cell_id_fast) for r in rows(pairs)])
        gains = _setting_gains(a)
        for slow, upgrade, u_lo, u_hi in zip(rows(pairs), ups, ups_lo, ups_hi):
            found = gains.get((str(slow.page), str(slow.model), str(slow.mode),
                               int(_num(slow.batch_size))))
            evidence: tuple[Any, ...] = ()
            if found is None:
                said, how = CANNOT_TELL, "none was measured there for this model, mode and batch"
            else:
                s_lo, s_hi, how, evidence = found
                said, how = _upgrade_stance(u_lo, u_hi, s_lo, s_hi, how)
            text = (f"{slow.model} · {slow.mode} · batch {int(_num(slow.batch_size))}: "
                    f"{slow.machine_fast} is {fmt.ratio(upgrade)} the throughput of "
                    f"{slow.machine} (95% CI {fmt.ci(u_lo, u_hi)}); the best setting change on "
                    f"{slow.machine}: {how}")
            findings.append(Finding(
                said, str(slow.page), str(slow.machine), text,
                ((str(slow.page), str(slow.anchor)), (str(slow.page_fast), str(slow.anchor_fast)),
                 *evidence), str(slow.model)))
    summary = tally(findings, "workloads measured on two machines", "the upgrade buys more",
                    "a setting change buys as much",
                    "no setting change measured on the slower, or intervals too close to tell")
    return decide(claim, findings, summary or "no workload measured on two machines with "
                  "enough ok replicates on both",
                  "the same workload on two machines: the cpu and gpu profiles share ResNet-50 "
                  "inference at batch 1, so a cpu-profile run on one machine and a gpu-profile "
                  "run on another measure it")


def _upgrade_stance(u_lo: float, u_hi: float, s_lo: float, s_hi: float,
                    how: str) -> tuple[str, str]:
    """The finding's stance and the setting's description with its interval and the outcome."""
    shown = f"{how} (95% CI {fmt.ci(s_lo, s_hi)})"
    if not all(fmt.present(x) for x in (u_lo, u_hi, s_lo, s_hi)):
        return CANNOT_TELL, f"{shown}; too few ok replicates for both intervals"
    if u_lo > s_hi * (1 + DELTA):
        return SUPPORTS, f"{shown}, clearly less"
    if u_hi < s_lo * (1 + DELTA):
        return CONTRADICTS, f"{shown}, as much or more"
    return CANNOT_TELL, f"{shown}; the intervals are too close to tell"


def _setting_gains(a: Any) -> dict[tuple[str, str, str, int],
                                   tuple[float, float, str, tuple[Any, ...]]]:
    """(page, model, mode, batch) → the best setting change measured there (with enough ok
    replicates on both sides): its interval, what it was with its speedup, and its rows. A best
    below 1 means no setting change measured there was faster."""
    cols = ["page", "model", "mode", "batch_size", "baseline_value", "variant_value", "speedup",
            "ci_low", "ci_high", "baseline_anchor", "variant_anchor"]
    frames = [current(f, a).loc[lambda f: f["verdict"] != "insufficient", cols]
              for axis, f in a.comparisons.items() if axis not in ("device", "shapes") and len(f)]
    known = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols)
    if known.empty:
        return {}
    known["speedup"] = known["speedup"].astype(float)
    known["batch"] = pd.to_numeric(known["batch_size"], errors="coerce")
    known = known.loc[known["batch"].notna()]
    top = known.sort_values("speedup", ascending=False, kind="stable").drop_duplicates(
        ["page", "model", "mode", "batch"])
    return {
        (str(r.page), str(r.model), str(r.mode), int(r.batch)): (
            _num(r.ci_low), _num(r.ci_high),
            f"{r.baseline_value} → {r.variant_value} {fmt.ratio(r.speedup)}",
            pair_evidence(r),
        )
        for r in rows(top)
    }


RULES: dict[str, Rule] = {
    "benchmark_static": benchmark_static,
    "benchmark_dynamic": benchmark_dynamic,
    "benchmark_reproducibility": benchmark_reproducibility,
    "conv_algo_argument": conv_algo_argument,
    "gpu_speedup_magnitude": gpu_speedup_magnitude,
    "cpu_for_small_batches": cpu_for_small_batches,
    "memory_limit": memory_limit,
    "cpu_threads": cpu_threads,
    "memory_bandwidth": memory_bandwidth,
    "upgrade_vs_settings": upgrade_vs_settings,
}

