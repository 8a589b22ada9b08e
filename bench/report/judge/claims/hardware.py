"""The claims about hardware: how much faster a GPU is, small batches on a CPU, which memory
fills first, CPU threads, memory bandwidth, and whether an upgrade beats a setting change."""

from __future__ import annotations

from typing import Any

import pandas as pd

from bench.report import fmt
from bench.report.analysis.intervals import ratio_ci
from bench.report.analysis.pairs import DELTA
from bench.report.analysis.pairs import verdict as pair_verdict
from bench.report.judge.best import best_against_best
from bench.report.judge.claims.findings import (
    GPU_RUN,
    TOO_WIDE,
    current,
    interval,
    labeller,
    num,
    pair_evidence,
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
from bench.report.vocabulary import Stance, Verdict
from bench.schema import USER_MODEL_AXES


def cpu_gpu(a: Any) -> pd.DataFrame:
    """The current CPU-vs-GPU comparisons with enough replicates to judge."""
    cvg = current(a.cpu_gpu, a)
    return cvg.loc[cvg["verdict"] != Verdict.INSUFFICIENT] if len(cvg) else cvg


def _magnitude(lo: float, hi: float, target: float) -> tuple[Stance, str]:
    if lo > target:
        return Stance.LARGER, f"more than {target:g}× at its largest"
    if hi < target:
        return Stance.SMALLER, f"never {target:g}×"
    return Stance.SUPPORTS, f"about {target:g}× at its largest"


def _best_finding(a: Any, page: str, group: pd.DataFrame, target: float) -> Finding | None:
    """The largest speedup with each side at its best measured setting (``judge.best``), where
    some side was measured at a setting other than the like-for-like one and both have enough
    ok replicates."""
    found = [b for b in best_against_best(a.cells_on(page), group)
             if b.verdict != Verdict.INSUFFICIENT]
    if not found or all(b.same_setting for b in found):
        return None
    top = max(found, key=lambda b: b.speedup)
    stance_, how = _magnitude(num(top.ci_low), num(top.ci_high), target)
    setting = f"{top.cpu.precision}{', channels_last' if top.cpu.memory_format != 'nchw' else ''}"
    text = (f"each side at its best measured setting: {fmt.ratio(top.speedup)} (95% CI "
            f"{fmt.ci(top.ci_low, top.ci_high)}) for {top.gpu.model} {top.gpu.mode} at batch "
            f"{int(num(top.gpu.batch_size))}, the CPU at {setting}: {how}")
    evidence = ((str(top.cpu.page), str(top.cpu.anchor)), (str(top.gpu.page), str(top.gpu.anchor)))
    return Finding(stance_, page, str(top.gpu.machine), text, evidence, str(top.gpu.model),
                   "best against best")


def gpu_speedup_magnitude(claim: Claim, a: Any, target: float = 50.0) -> ClaimAnswer:
    """Per machine: the largest measured GPU-over-CPU speedup, the same setting on both sides
    and, where other settings were measured, each side at its best; supported where its
    interval contains ``target``, larger than claimed where it lies above, smaller where it
    lies below (a machine where the two disagree makes the claim depend on the setting)."""
    cvg = cpu_gpu(a)
    findings: list[Finding] = []
    plain = dict(zip(cvg.index, rows(cvg)))  # every row's plain values at once, not per page
    for page, group in (cvg.groupby("page", sort=True) if len(cvg) else ()):
        ordered = [plain[i] for i in group.sort_values("speedup", kind="stable").index]
        low, top = ordered[0], ordered[-1]
        name = labeller(group, keep=("batch_size",))  # the batch, even where only one had enough
        stance_, how = _magnitude(num(top.ci_low), num(top.ci_high), target)
        models = ", ".join(sorted(set(group["model"].astype(str))))
        text = (f"GPU over CPU, where both sides have enough ok replicates: "
                f"{fmt.ratio(low.speedup)} ({name(low)}) to {fmt.ratio(top.speedup)} "
                f"({name(top)}, 95% CI {fmt.ci(top.ci_low, top.ci_high)}) for {models}: {how}")
        evidence = tuple(e for r in ordered for e in pair_evidence(r))
        findings.append(Finding(stance_, str(page), str(top.machine), text, evidence, models))
        best = _best_finding(a, str(page), group, target)
        if best is not None:
            findings.append(best)
    summary = "; ".join(f"on {f.machine}: {f.text}" for f in findings)
    return decide(claim, findings, summary or "no sufficient CPU-against-GPU comparison",
                  GPU_RUN + ", whose cpu_vs_gpu study runs both on one machine")


def cpu_for_small_batches(claim: Claim, a: Any) -> ClaimAnswer:
    """Per curve (machine, model, mode, …): the smallest batch measured. The CPU is the better
    choice there only when the GPU is clearly slower; too few replicates there tell nothing.
    The models are only those measured on both, so the summary says how small the smallest
    is: a verdict on resnet50 says nothing of a model a tenth its size."""
    cvg = current(a.cpu_gpu, a)
    findings: list[Finding] = []
    if len(cvg):
        curve = [c for c in ("fingerprint_id", "model", "mode", "resolution", "precision",
                             "memory_format", "shapes") if c in cvg.columns]
        smallest = cvg.sort_values("batch_size", kind="stable").drop_duplicates(curve)
        name = labeller(smallest, omit=("batch_size",))
        for r in rows(smallest):
            short = f"{name(r)} at batch {int(num(r.batch_size))}"
            where = f"{short}, the smallest measured"
            if r.verdict == Verdict.INSUFFICIENT:  # a thin small batch answers nothing
                findings.append(Finding(Stance.CANNOT_TELL, str(r.page), str(r.machine),
                                        f"{where}: too few ok replicates to judge",
                                        pair_evidence(r), str(r.model), short,
                                        MORE_REPLICATES))
                continue
            who = {Verdict.SLOWER: "the CPU is faster", Verdict.FASTER: "the GPU is faster"}.get(
                r.verdict, "neither is clearly faster")
            if too_wide(r.verdict, r.ci_low, r.ci_high):
                who = f"{who}, {TOO_WIDE}"
            said = stance(r.verdict, r.ci_low, r.ci_high, yes=Verdict.SLOWER)
            findings.append(Finding(said, str(r.page), str(r.machine),
                                    f"{where}: {who} (GPU {interval(r)})", pair_evidence(r),
                                    str(r.model), short, replicates_remedy(said)))
    summary = tally(findings, "curves at their smallest batch", "the CPU clearly faster",
                    "the GPU faster or neither", "too few ok replicates or too wide an interval")
    if summary:
        summary += _smallest_model(a, cvg)
    return decide(claim, findings, summary or "no CPU-against-GPU comparison", GPU_RUN)


def _smallest_model(a: Any, cvg: pd.DataFrame) -> str:
    """``; the smallest model measured on both is resnet50 (4.11 GFLOP a sample in
    inference): …``, from the CPU cells' counted FLOPs; "" where none was counted."""
    flops = a.cells.set_index(["fingerprint_id", "cell_id"])["flops_per_sample"].reindex(
        pd.MultiIndex.from_arrays([cvg["fingerprint_id"], cvg["baseline_cell_id"]]))
    sized = cvg.assign(_flops=pd.to_numeric(pd.Series(flops.to_numpy(), index=cvg.index),
                                            errors="coerce")).dropna(subset=["_flops"])
    sized = sized.loc[sized["_flops"] > 0]
    if sized.empty:
        return ""
    infer = sized.loc[sized["mode"] == "infer"]
    least = (infer if len(infer) else sized).sort_values("_flops", kind="stable").iloc[0]
    mode = "inference" if least["mode"] == "infer" else "training"
    return (f"; the smallest model measured on both is {least['model']} "
            f"({fmt.num(float(least['_flops']) / 1e9)} GFLOP a sample in {mode}): a smaller "
            f"model is not answered")


def cpu_threads(claim: Claim, a: Any) -> ClaimAnswer:
    """One thread against every core the process may use, same cell otherwise; the same
    interval and verdict rules as every comparison."""
    cells = current(a.cells, a)
    findings: list[Finding] = []
    cores: set[tuple[str, int]] = set()  # (machine, the threads "every core" ran), recorded
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
            name = labeller(pairs, keep=("batch_size",))
            threads = a.machines.set_index("fingerprint_id")["cpu_threads"]  # torch's, all cores
            for r, s, l_, h in zip(rows(pairs), est, lo, hi):
                word = pair_verdict(l_, h, int(r.n_ok), int(r.n_ok_all))
                if word == Verdict.INSUFFICIENT:
                    continue
                n = threads.get(r.fingerprint_id)
                every = f"every core ({int(n)} threads)" if fmt.present(n) else "every core"
                if fmt.present(n):
                    cores.add((str(r.machine), int(n)))
                told = stance(word, l_, h)
                findings.append(Finding(
                    told, str(r.page), str(r.machine),
                    f"{name(r)}: {every} against one thread {fmt.ratio(s)} (95% CI "
                    f"{fmt.ci(l_, h)}), {said(word, l_, h)}",
                    ((str(r.page), str(r.anchor)), (str(r.page), str(r.anchor_all))),
                    str(r.model), name(r), replicates_remedy(told)))
    summary = tally(findings, "configurations", "every core clearly faster than one thread",
                    "not clearly faster", "too wide an interval to tell")
    if summary and cores:  # how many cores "every core" was: a 2-core VM is not every CPU
        summary += "; every core: " + ", ".join(
            f"{n} threads on {machine}" for machine, n in sorted(cores))
    return decide(claim, findings, summary or "no one-thread against all-cores comparison",
                  "a run of the cpu profile (python -m bench run --profile cpu), whose threads "
                  "study runs one thread against every core")


#: How far a point figure measured without an interval (too few ok replicates) must clear a
#: claim's threshold, as a factor either way, before the rule decides on it.
POINT_MARGIN = 2.0


def _bandwidth_stance(ratio: float, lowest: float, highest: float, factor: float
                      ) -> tuple[Stance, str]:
    """The stance of one machine's copy ratio, and what qualifies it: decided on the
    intervals where there are some, else on the measured ratio when it clears the threshold
    by ``POINT_MARGIN`` (a measured figure is never "not measured")."""
    if fmt.present(lowest):
        if lowest >= factor:
            return Stance.SUPPORTS, ""
        if highest < factor:
            return Stance.CONTRADICTS, ""
        return (Stance.CANNOT_TELL,
                f"; the intervals allow {fmt.ratio(lowest)} to {fmt.ratio(highest)}")
    thin = "; too few ok replicates for an interval"
    if fmt.present(ratio) and ratio >= factor * POINT_MARGIN:
        return Stance.SUPPORTS, f"{thin}, but it is over {POINT_MARGIN:g} times the {factor:g}×"
    if fmt.present(ratio) and ratio * POINT_MARGIN <= factor:
        return (Stance.CONTRADICTS,
                f"{thin}, but it is under a {POINT_MARGIN:g}th of the {factor:g}×")
    return Stance.CANNOT_TELL, thin


def memory_bandwidth(claim: Claim, a: Any, factor: float = 10.0) -> ClaimAnswer:
    """Per machine: the device copy's sustained rate over the host's, with the bounds their
    intervals allow; supported when even the lowest ratio reaches ``factor`` (without an
    interval, see ``_bandwidth_stance``)."""
    ceil = current(a.ceilings, a)
    findings: list[Finding] = []
    if len(ceil):
        copy = ceil.loc[(ceil["op"] == "copy") & ceil["achieved"].notna()]
        for page, group in copy.groupby("page", sort=True):
            by = {str(r.device): r for r in rows(group)}
            gpu, cpu = by.get("cuda"), by.get("cpu")
            if gpu is None or cpu is None:
                continue
            ratio = num(gpu.achieved) / num(cpu.achieved)
            lowest = num(gpu.ci_low) / num(cpu.ci_high)
            highest = num(gpu.ci_high) / num(cpu.ci_low)
            stance, why = _bandwidth_stance(ratio, lowest, highest, factor)
            findings.append(Finding(
                stance, str(page), str(gpu.machine),
                f"device copy {fmt.num(gpu.achieved)} GB/s against the host's "
                f"{fmt.num(cpu.achieved)} GB/s (sustained): {fmt.ratio(ratio)}{why}",
                ((str(page), str(gpu.anchor)), (str(page), str(cpu.anchor))),
                remedy=replicates_remedy(stance)))
    summary = "; ".join(f"on {f.machine}: {f.text}" for f in findings)
    return decide(claim, findings, summary or "no machine measured both copies",
                  GPU_RUN + ", whose copy studies measure the device and the host")


#: What a workload is for the upgrade claim: precision and layout are settings, not workload.
_WORKLOAD = ["model", "mode", "batch_size", "resolution", "shapes"]

#: The columns of a pair's faster side (``_fast``).
_FAST = ["machine", "page", "anchor", "fingerprint_id", "cell_id", "samples_per_s", "precision",
         "device"]


def upgrade_vs_settings(claim: Claim, a: Any) -> ClaimAnswer:
    """For each workload and each fingerprint that measured it, where another machine
    measured it faster: the fastest other machine's best throughput over this fingerprint's
    (the upgrade, with a bootstrap interval over both cells' replicates), against the best
    setting change measured on this fingerprint for that model, mode and batch size. So
    every workload measured on two machines is judged on each slower fingerprint, not only
    the slowest. Best against best: each machine at its fastest measured setting, precision
    included (a CPU in bf16 where that is its best), so the faster hardware is the one faster
    at its best. The upgrade buys more only when its whole interval clears the setting's by δ;
    it buys no more when its whole interval stays under the setting's low end plus δ;
    otherwise the intervals cannot tell them apart."""
    best = current(a.best, a)
    findings: list[Finding] = []
    if len(best):
        pairs = _upgrade_pairs(best.loc[~best["too_few_ok"].astype(bool)])  # enough replicates
        medians = a.cells.set_index(["fingerprint_id", "cell_id"])["replicate_medians"]

        def reps(fp: str, cell: str) -> list[float]:
            return list(medians.get((fp, cell), ()))

        ups, ups_lo, ups_hi = ratio_ci(  # slow step ÷ fast step = fast throughput ÷ slow's
            [reps(r.fingerprint_id, r.cell_id) for r in rows(pairs)],
            [reps(r.fingerprint_id_fast, r.cell_id_fast) for r in rows(pairs)])
        gains = _setting_gains(a)
        findings = [_upgrade_finding(slow, up, lo, hi, gains)
                    for slow, up, lo, hi in zip(rows(pairs), ups, ups_lo, ups_hi)]
        findings += _thin_upgrades(best, pairs)
    summary = tally(findings, "workloads measured on two machines", "the upgrade buys more",
                    "a setting change buys as much",
                    "too few ok replicates, no setting change measured on the slower, or "
                    "intervals too close to tell")
    return decide(claim, findings, summary or "no workload measured on two machines with "
                  "enough ok replicates on both",
                  "the same workload on two machines with enough ok replicates on both: "
                  "ResNet-50 inference at batch 1, which a cpu-profile run (its batch-1 "
                  "settings study) on one machine and a gpu-profile run on another measure")


def _upgrade_pairs(best: pd.DataFrame) -> pd.DataFrame:
    """Each fingerprint's best cell of each workload (over precisions and layouts) beside the
    fastest other machine's best (``_fast`` columns), where that one is faster: one row per
    slower fingerprint and workload. Machines, not fingerprints: two torch versions on one box
    are no upgrade."""
    key = _WORKLOAD
    tops = best.sort_values([*key, "samples_per_s"], kind="stable").drop_duplicates(
        ["fingerprint_id", *key], keep="last")
    per_machine = tops.drop_duplicates([*key, "machine"], keep="last")[[*key, *_FAST]]
    merged = tops.merge(per_machine, on=key, suffixes=("", "_fast"))
    merged = merged.loc[merged["machine"] != merged["machine_fast"]]
    merged = merged.sort_values([*key, "fingerprint_id", "samples_per_s_fast"],
                                kind="stable").drop_duplicates(["fingerprint_id", *key],
                                                               keep="last")
    faster = merged["samples_per_s_fast"].astype(float) > merged["samples_per_s"].astype(float)
    return merged.loc[faster].sort_values([*key, "samples_per_s"], kind="stable").reset_index(
        drop=True)


def _upgrade_finding(slow: Any, upgrade: float, u_lo: float, u_hi: float,
                     gains: dict[tuple[str, str, str, int],
                                 tuple[float, float, str, tuple[Any, ...]]]) -> Finding:
    """One slower fingerprint's workload: the upgrade against its best setting change."""
    what = f"{slow.model} · {slow.mode} · batch {int(num(slow.batch_size))}"
    found = gains.get((str(slow.page), str(slow.model), str(slow.mode),
                       int(num(slow.batch_size))))
    evidence: tuple[Any, ...] = ()
    if found is None:
        said, why = Stance.CANNOT_TELL, _NO_SETTING
        how = "none was measured there for this model, mode and batch"
        remedy = ("a setting change (precision, layout or threads) measured on the slower "
                  "machine at the same model, mode and batch")
    else:
        s_lo, s_hi, how, evidence = found
        said, how, why = _upgrade_stance(u_lo, u_hi, s_lo, s_hi, how)
        remedy = replicates_remedy(said)
    text = (f"{what}: {slow.machine_fast} at its best ({slow.device_fast}, "
            f"{slow.precision_fast}) is {fmt.ratio(upgrade)} the throughput of {slow.machine} "
            f"at its best ({slow.device}, {slow.precision}) (95% CI {fmt.ci(u_lo, u_hi)}); the "
            f"best single-setting change measured on {slow.machine}: {how}")
    return Finding(said, str(slow.page), str(slow.machine), text,
                   ((str(slow.page), str(slow.anchor)), (str(slow.page_fast),
                                                         str(slow.anchor_fast)), *evidence),
                   str(slow.model), what, remedy, why)


def _thin_upgrades(every: pd.DataFrame, judged: pd.DataFrame) -> list[Finding]:
    """The workloads measured on two or more machines that no judged pair answers for some
    fingerprint because a best cell has too few ok replicates: a "cannot tell" finding for
    each fingerprint that another machine measured faster, with its rows and the other
    machines'. A fingerprint on either side of a judged pair is answered already."""
    key = _WORKLOAD
    if not every["too_few_ok"].astype(bool).any():
        return []
    done = {(str(fp), *map(str, k)) for side in ("", "_fast") if len(judged)
            for fp, *k in judged[[f"fingerprint_id{side}", *key]].to_numpy().tolist()}
    # only the workloads of two machines or more with a thin cell go on (a 100k-row tree has
    # over a thousand workloads, and a group at a time is slow)
    by = every.assign(_few=every["too_few_ok"].astype(bool)).groupby(key, dropna=False)
    keep = (by["machine"].transform("nunique") >= 2) & by["_few"].transform("max")
    ordered = every.loc[keep.to_numpy()].sort_values([*key, "samples_per_s"], kind="stable")
    out: list[Finding] = []
    for k, group in ordered.groupby(key, sort=True, dropna=False):
        tops = group.drop_duplicates("fingerprint_id", keep="last")
        for f in rows(tops):
            others = group.loc[group["machine"] != f.machine]
            if (str(f.fingerprint_id), *map(str, k)) in done or not (
                    others["samples_per_s"].astype(float) > float(num(f.samples_per_s))).any():
                continue  # answered, or measured fastest here: the others' findings hold it
            cited = pd.concat([group.loc[group["fingerprint_id"] == f.fingerprint_id], others])
            if cited["too_few_ok"].astype(bool).any():
                out.append(_thin_finding(f, cited))
    return out


def _thin_finding(f: Any, cited: pd.DataFrame) -> Finding:
    what = f"{f.model} · {f.mode} · batch {int(num(f.batch_size))}"
    few = cited.loc[cited["too_few_ok"].astype(bool), "machine"].astype(str)
    return Finding(
        Stance.CANNOT_TELL, str(f.page), str(f.machine),
        f"{what}: measured on {', '.join(sorted(set(cited['machine'].astype(str))))}, but "
        f"with too few ok replicates on {', '.join(sorted(set(few)))} to compare",
        tuple((str(r.page), str(r.anchor)) for r in rows(cited)), str(f.model), what,
        MORE_REPLICATES, _THIN)


#: Why an upgrade finding cannot tell, as its claim's summary counts them.
_THIN, _CLOSE, _NO_SETTING = ("too few ok replicates", "intervals too close to tell",
                              "no setting change measured on the slower")


def _upgrade_stance(u_lo: float, u_hi: float, s_lo: float, s_hi: float,
                    how: str) -> tuple[Stance, str, str]:
    """The finding's stance, the setting's description with its interval and the outcome, and
    why it cannot tell ("" where it can)."""
    shown = f"{how} (95% CI {fmt.ci(s_lo, s_hi)})"
    if not all(fmt.present(x) for x in (u_lo, u_hi, s_lo, s_hi)):
        return Stance.CANNOT_TELL, f"{shown}; too few ok replicates for both intervals", _THIN
    if u_lo > s_hi * (1 + DELTA):
        return Stance.SUPPORTS, f"{shown}, clearly less", ""
    if u_hi < s_lo * (1 + DELTA):
        return Stance.CONTRADICTS, f"{shown}, as much or more", ""
    return Stance.CANNOT_TELL, f"{shown}; the intervals are too close to tell", _CLOSE


def _setting_gains(a: Any) -> dict[tuple[str, str, str, int],
                                   tuple[float, float, str, tuple[Any, ...]]]:
    """(page, model, mode, batch) → the best setting change measured there (with enough ok
    replicates on both sides): its interval, what it was with its speedup, and its rows. A best
    below 1 means no setting change measured there was faster."""
    cols = ["page", "model", "mode", "batch_size", "baseline_value", "variant_value", "speedup",
            "ci_low", "ci_high", "baseline_anchor", "variant_anchor"]
    frames = [current(f, a).loc[lambda f: f["verdict"] != Verdict.INSUFFICIENT, cols]
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
            num(r.ci_low), num(r.ci_high),
            f"{r.baseline_value} → {r.variant_value} {fmt.ratio(r.speedup)}",
            pair_evidence(r),
        )
        for r in rows(top)
    }
