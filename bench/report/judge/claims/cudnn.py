"""The claims about cudnn.benchmark: static shapes, cycled shapes, reproducibility, and choosing
an algorithm by hand (what the installed torch answers when asked for ``algo=``)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import pandas as pd

from bench import schema
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
from bench.report.judge.selection import benchmark_off_partner, counted_benchmark
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
    judged = pairs.loc[pairs["verdict"] != Verdict.INSUFFICIENT]
    summary = "; ".join(
        f"on {_where(judged, str(page))}: {counts_text(group, name, tight=split)} of "
        f"{plural(len(group), 'configurations with one input shape')}"
        f" ({name_list(sorted(set(group['model'].astype(str))))})"
        for page, group in judged.groupby("page"))
    return decide(claim, findings, summary or "no sufficient comparison", GPU_RUN)


def _where(frame: pd.DataFrame, page: str) -> str:
    """A page's machine, with its fingerprint where the machine has two pages in ``frame``
    (as its page's title says), so two fingerprints never read as one machine's verdict."""
    mine = frame.loc[frame["page"] == page]
    machine = str(mine["machine"].iloc[0])
    pages = frame.loc[frame["machine"] == machine, "page"].nunique()
    return f"{machine} {page[-8:]}" if pages > 1 else machine


def _static_text(r: Any, name: Callable[[Any], str]) -> str:
    cold = (f"; its first pass costs up to {fmt.seconds(r.extra_cold_pass_max_s)} more "
            "(slowest replicate)" if fmt.present(r.extra_cold_pass_max_s) else "")
    return f"{name(r)}: {interval(r)}, {said(r.verdict, r.ci_low, r.ci_high)}{cold}"


def counts_text(pairs: pd.DataFrame, name: Callable[[Any], str] | None = None,
                   tight: bool = False) -> str:
    """``faster in 2 (resnet50 · fp32-strict 1.10×, …), no clear difference in 12 (3 of them
    too wide to tell), slower in 0``: with ``name``, the regimes that moved are named, the
    largest changes first, so "it depends" says where; with ``tight`` too, so are the "no clear
    difference" ones whose interval lies within 1 ± δ (they contradict a claim of "faster"):
    ``(9 within 1 ± 3%: …; the other 3 too wide to tell)``, the wide ones never counted among
    those named."""
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
            named = name if tight and len(inside) else None
            listed = named is not None
            said = []
            if named is not None:
                said.append((f"{len(inside)} " if wide else "") + "within 1 ± "
                            + fmt.pct(DELTA) + ": " + name_list(
                                [f"{named(r)} {fmt.ratio(r.speedup)}" for r in rows(inside)]))
            if wide:  # those listed lie within the band: the wide ones are the others
                said.append(f"the other {wide} too wide to tell" if listed else
                            f"{wide} of them too wide to tell")
            if said:
                text += f" ({'; '.join(said)})"
        elif name is not None and n:
            moved = pairs.loc[pairs["verdict"] == v].astype({"speedup": float}).sort_values(
                "speedup", ascending=v == Verdict.SLOWER, kind="stable")
            text += " (" + name_list(
                [f"{name(r)} {fmt.ratio(r.speedup)}" for r in rows(moved.head(NAMED))], n) + ")"
        parts.append(text)
    return ", ".join(parts)


#: What a changing-shapes pair is matched on to find its one-shape partner: every setting but
#: the shapes and cudnn.benchmark itself.
_PARTNER = ("fingerprint_id", *(c for c in schema.AXIS_COLUMNS
                                if c not in ("shapes", "cudnn_benchmark")))

#: What would tell where benchmark on is no faster with one input shape either.
_HELPS_STATIC = ("a workload on which cudnn.benchmark is clearly faster with one input shape, "
                 "measured with changing shapes as well")


def benchmark_dynamic(claim: Claim, a: Any) -> ClaimAnswer:
    """Supported where changing shapes (cycled resolutions, or a smaller last batch: ragged)
    make each new shape's first pass dearer with benchmark on (it searches again) and either
    cost over the cycle, or take away a gain that the same workload with one input shape
    shows: only then is it the changing shapes that benchmark fails on. Contradicted where it
    is faster over the cycle even so (it repays its searches); where it is no faster with one
    shape either, the changing shapes cannot be told apart from a workload benchmark does not
    help."""
    pairs = _benchmark_pairs(a, "dynamic", "ragged")
    static = _benchmark_pairs(a, "static")
    partners = {_partner_key(r): r for r in rows(static)} if len(static) else {}
    pairs = pairs.loc[pairs["verdict"] != Verdict.INSUFFICIENT]
    counts = a.cells.set_index(["fingerprint_id", "cell_id"])["shape_count"].reindex(
        pd.MultiIndex.from_arrays([pairs["fingerprint_id"], pairs["variant_cell_id"]]))
    name = labeller(pairs, keep=("batch_size", "precision", "shapes"))
    findings: list[Finding] = []
    for r, count in zip(rows(pairs), counts.to_numpy(float)):
        base = partners.get(_partner_key(r))
        shapes = max(int(count) if fmt.present(count) else 1, 1)
        told, remedy, reason = _dynamic_stance(r, base)
        evidence = pair_evidence(r) + (pair_evidence(base) if base is not None else ())
        findings.append(Finding(told, str(r.page), str(r.machine),
                                functools.partial(_dynamic_text, r, name, shapes, base),
                                evidence, str(r.model), name(r), remedy, reason))
    summary = tally(findings, "configurations with changing shapes",
                    "dearer new shapes, and benchmark on slower over the cycle or faster only "
                    "with one input shape", "faster with benchmark on",
                    "too wide an interval")
    return decide(claim, findings, summary or "no sufficient comparison of changing shapes",
                  GPU_RUN + ", whose shapes study cycles input resolutions")


def _partner_key(r: Any) -> tuple[str, ...]:
    return tuple(str(getattr(r, c, "")) for c in _PARTNER)


def _searches(r: Any, base: Any) -> bool:
    """Whether benchmark on made the cycle's first passes dearer than it makes one shape's
    (or than nothing, without a one-shape pair): it searched again."""
    extra = num(r.extra_cold_pass_s)
    floor = num(base.extra_cold_pass_s) if base is not None else math.nan
    return fmt.present(extra) and extra > max(0.0 if math.isnan(floor) else floor, 0.0)


def _dynamic_stance(r: Any, base: Any) -> tuple[Stance, str, str]:
    """The finding's stance, its remedy where it cannot tell, and why it cannot, in a few
    words for the summary (see ``benchmark_dynamic``)."""
    if r.verdict == Verdict.FASTER:
        return Stance.CONTRADICTS, "", ""
    if too_wide(r.verdict, r.ci_low, r.ci_high):
        return Stance.CANNOT_TELL, MORE_REPLICATES, "too wide an interval"
    if not _searches(r, base):
        return Stance.CANNOT_TELL, "", "no dearer new shapes"
    if r.verdict == Verdict.SLOWER:
        return Stance.SUPPORTS, "", ""
    if base is None:
        return Stance.CANNOT_TELL, ("the same workload with one input shape, cudnn.benchmark "
                                    "on and off, on that machine"), "no one-shape pair"
    if base.verdict == Verdict.FASTER:
        return Stance.SUPPORTS, "", ""
    if base.verdict == Verdict.INSUFFICIENT or too_wide(base.verdict, base.ci_low,
                                                         base.ci_high):
        return Stance.CANNOT_TELL, MORE_REPLICATES, "too wide an interval with one input shape"
    return Stance.CANNOT_TELL, _HELPS_STATIC, "no faster with one input shape either"


def _dynamic_text(r: Any, name: Callable[[Any], str], shapes: int, base: Any) -> str:
    """The extra first-pass cost per shape in the median replicate, and the range over every
    replicate with benchmark on (each against the median one off), so the figure holds for
    each of them; then what the same workload with one input shape says."""
    first = float(num(r.base_cold_pass_s))
    median, low, high = ((num(v) - first) / shapes for v in (
        r.var_cold_pass_s, r.var_cold_pass_min_s, r.var_cold_pass_max_s))
    spread = (f" ({fmt.seconds(low)} to {fmt.seconds(high)} over its replicates, each against "
              "the median one with it off)"
              if fmt.present(low) and fmt.present(high)
              and fmt.seconds(low) != fmt.seconds(high) else "")
    text = (f"{name(r)}: with benchmark on, each of its {shapes} shapes' first pass costs "
            f"{fmt.seconds(median)} more on average in the median replicate{spread}; over the "
            f"cycle {interval(r)}, {said(r.verdict, r.ci_low, r.ci_high)}")
    if r.verdict == Verdict.FASTER:
        return text + " (it repays its searches in a long enough job)"
    return text + _one_shape_text(r, base)


def _one_shape_text(r: Any, base: Any) -> str:
    """What the same workload with one input shape says of benchmark on, and so whether the
    changing shapes are what keeps it from being faster."""
    if base is None:
        return ("; the same workload was not compared with one input shape, so whether the "
                "changing shapes are what keeps benchmark from being faster cannot be told")
    if base.verdict == Verdict.INSUFFICIENT:
        return "; with one input shape, too few ok replicates to compare"
    there = (f"; with one input shape, {interval(base)}, "
             f"{said(base.verdict, base.ci_low, base.ci_high)}")
    if r.verdict == Verdict.SLOWER or not _searches(r, base):
        return there
    if base.verdict == Verdict.FASTER:
        return there + ": the changing shapes take its gain away"
    return there + (": benchmark is no faster with one shape either, so the changing shapes "
                    "are not what keeps it from being faster")


def benchmark_reproducibility(claim: Claim, a: Any) -> ClaimAnswer:
    """Pairs each re-run check with benchmark on (deterministic off) with the check with it off
    of the same fingerprint, model and mode that differs in the fewest other settings. Only a
    partner that differs in nothing else can tell what benchmark did; one that differs in
    another setting too (a kernel cache, a batch size) is confounded, and says so."""
    rep = current(a.repro, a)
    if not rep.empty:
        rep = rep.loc[(rep["device"] == "cuda") & (rep["cudnn_deterministic"] == "off")
                      & (rep["n_ok_checks"] > 0)]
    findings: list[Finding] = []
    confounded = 0  # checks compared only with a partner that differs in more than benchmark
    on = rep.loc[rep["cudnn_benchmark"] == "on"] if not rep.empty else rep
    if len(on):
        off = list(rows(rep.loc[rep["cudnn_benchmark"] == "off"]))
        name = labeller(rep)
        for r in rows(on):
            base, differs = benchmark_off_partner(r, off)
            findings.append(_repro_finding(r, base, differs, name))
            confounded += bool(differs) and not bool(r.bitwise_equal)
    return decide(claim, findings, _repro_summary(on, findings, confounded),
                  GPU_RUN + ", whose re-run study checks benchmark on")


def _setting(column: str, value: Any) -> str:
    return f"{column.replace('_', ' ')} {value}"


def _repro_finding(r: Any, base: Any, differs: list[str],
                   name: Callable[[Any], str]) -> Finding:
    """One check with benchmark on, against its partner with it off (see
    ``benchmark_reproducibility``)."""
    evidence: tuple[tuple[str, str], ...] = ((str(r.page), str(r.anchor)),)
    remedy = ""
    if bool(r.bitwise_equal):
        stance, what = Stance.CONTRADICTS, "bitwise equal with benchmark on"
    else:
        stance = Stance.CANNOT_TELL
        what = f"not bitwise equal with benchmark on{_diff_text(r)}"
        if base is None:
            what += "; no check with it off to compare"
            remedy = "the same re-run check with benchmark off on that machine"
        elif differs:
            evidence += ((str(base.page), str(base.anchor)),)
            what += _confounded_text(r, base, differs)
            remedy = (f"the same re-run check with benchmark off on that machine, with "
                      f"{', '.join(_setting(c, getattr(r, c)) for c in differs)} as with it on "
                      f"({name(r)} on {r.machine})")
        else:
            evidence += ((str(base.page), str(base.anchor)),)
            if bool(base.bitwise_equal):
                stance = Stance.SUPPORTS
                what += ", bitwise equal with it off, every other setting the same"
            else:  # unequal with it off too: nothing more on that machine would tell
                what += (f", and not with it off either{_diff_text(base)}, so benchmark's part "
                         "cannot be told apart")
    return Finding(stance, str(r.page), str(r.machine), f"{name(r)}: two fresh processes {what}",
                   evidence, str(r.model), f"{name(r)} on {r.machine}", remedy)


def _confounded_text(r: Any, base: Any, differs: list[str]) -> str:
    """Why a partner that differs in another setting too cannot tell: it names each."""
    outcome = "bitwise equal" if bool(base.bitwise_equal) else "not bitwise equal"
    settings = " and ".join(f"{c.replace('_', ' ')} ({getattr(base, c)} with it off, "
                            f"{getattr(r, c)} with it on)" for c in differs)
    return (f"; the only check with it off ({outcome}) differs in {settings} as well, so the "
            "two differ in more than benchmark and its part cannot be told apart")


def _diff_text(r: Any) -> str:
    """`` (largest absolute difference 0.351 in an element of the last step's output and
    gradients)``: what ``max_abs_diff`` measures (``bench.run.child.worker.repro_cell``)."""
    if not fmt.present(r.max_abs_diff):
        return ""
    of = "output and gradients" if str(r.mode) == "train" else "output"
    return (f" (largest absolute difference {fmt.num(r.max_abs_diff)} in an element of the "
            f"last step's {of})")


def _repro_summary(on: pd.DataFrame, findings: list[Finding], confounded: int) -> str:
    """How many checks with benchmark on were equal, on which machines and models; how many
    had only a confounded partner; and, where it depends, where benchmark made the
    difference."""
    if on.empty:
        return "no re-run check with benchmark on"
    machines = ", ".join(sorted(set(on["machine"].astype(str))))
    models = name_list(sorted(set(on["model"].astype(str))))
    summary = (f"bitwise re-run with benchmark on (deterministic off) on {machines} ({models}): "
               f"equal in {int(on['bitwise_equal'].astype(bool).sum())} of "
               f"{fmt.count(len(on), 'check')}")
    if confounded:
        summary += (f"; {confounded} of them compared only with a check with it off that differs "
                    "in another setting too, which cannot tell")
    if depends(findings):  # say where benchmark made the difference and where it did not
        summary += "; " + ", ".join(
            f"{word} in {name_list([label_of(f) for f in findings if f.stance == side])}"
            for side, word in ((Stance.SUPPORTS, "unequal with it on but equal with it off"),
                               (Stance.CONTRADICTS, "equal with it on")))
    return summary


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
    machines = ", ".join(sorted({f.machine for f in findings}))
    summary = (f"asked of the installed torch on {fmt.count(len(findings), 'fingerprint')} "
               f"of {machines} ({', '.join(versions)}): an algo argument is accepted by "
               f"{sum(f.stance == Stance.SUPPORTS for f in findings)}" if findings else
               "no run has asked its torch yet")
    if depends(findings):
        summary += " (" + "; ".join(
            f"{word}: {name_list([label_of(f) for f in findings if f.stance == side])}"
            for side, word in ((Stance.SUPPORTS, "accepted by"),
                               (Stance.CONTRADICTS, "refused by"))) + ")"
    return decide(claim, findings, summary,
                  "any run of this version of the runner (python -m bench run): its probe asks")
