"""What the advice says, as data: the ``Recommendation`` record, its actions, and the
decision table the home page and the decisions CSV are built from.

A record holds structured fields only, no prose (the views turn them into sentences), and every
number in it is traceable to table rows through ``evidence``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from bench.report.analysis.pairs import not_slower, within_band
from bench.report.judge.advice.codes import Caveat, Rule, Setting
from bench.report.judge.selection import REGIME_COLUMNS as _REGIME
from bench.report.vocabulary import Action, Verdict

#: Job lengths (iterations) at which cudnn.benchmark is judged: a smoke test, a fine-tune, a
#: long training run.
JOB_LENGTHS = (100, 10_000, 1_000_000)


#: Settings in the order the decision table lists them.
SETTINGS = ("cudnn.benchmark", "cudnn.deterministic", "precision", "memory_format", "device")
#: Peak memory growth above this share is flagged with the ``extra-memory`` caveat.
MEMORY_CAVEAT_SHARE = 0.10


#: What a regime's rows are grouped by (each rule drops what it compares).
REGIME_COLUMNS = _REGIME


#: What makes two recommendations the same regime (one row of the decision table): the setting,
#: the regime (its page stands for its fingerprint and machine) and the two values compared.
REGIME_KEY = (
    "setting",
    *(c for c in REGIME_COLUMNS if c not in ("fingerprint_id", "machine")),
    "baseline_value",
    "variant_value",
)


@dataclass(frozen=True)
class Recommendation:
    """One piece of advice for one regime; every number traceable through ``evidence``."""

    rule: Rule | str  # a Rule, or empty where no rule decided (``asks``)
    setting: Setting
    action: Action
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
    verdict: Verdict
    n_pairs: int
    #: the pairs with enough ok replicates that the figures below are over: the regime's, or,
    #: for a device regime with ``from_batch``, those at that batch
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
    bitwise_equal_variant: bool | None = None  # and on (None: not checked everywhere, or mixed)
    #: determinism: each configuration's re-run check with the setting on, as (model,
    #: cudnn_benchmark, kernel_cache, bitwise equal; None where it had no ok check)
    variant_checks: tuple[tuple[str, str, str, bool | None], ...] = ()
    max_abs_diff_default: float | None = None
    caveats: tuple[Caveat, ...] = ()
    evidence: tuple[tuple[str, str], ...] = ()  # (page, anchor) of every row used
    models: tuple[str, ...] = ()  # the family's models that were measured (sorted)
    batch_size: str = ""  # part of the regime; empty for device, whose curves span batches
    #: part of the regime (the gain from AMP or benchmark depends on the layout); empty for the
    #: memory_format setting, whose baseline and variant are the layouts
    memory_format: str = ""

    @property
    def in_band(self) -> bool:
        """Whether the interval lies inside 1 ± δ as printed: "no clear difference" then shows
        the setting does not matter here, rather than only failing to show that it does."""
        return within_band(self.ci_low, self.ci_high)

    @property
    def not_slower(self) -> bool:
        """Whether the interval rules out a slowdown beyond δ (the methodology's "no measurable
        cost")."""
        return not_slower(self.ci_low)


#: The decision table's columns before and after the per-job-length actions.
_DECISION_HEAD = (
    "setting", "machine", "page", "fingerprint_id", "device", "model_family", "models", "mode",
    "precision", "memory_format", "shapes", "batch_size", "baseline_value", "variant_value",
    "verdict", "action",
)  # fmt: skip
_DECISION_TAIL = (
    "rule", "speedup", "ci_low", "ci_high", "break_even_iters", "kernel_cache", "extra_cold_s",
    "warm_extra_cold_s", "warm_break_even_iters", "extra_peak_mem_bytes",
    "extra_peak_mem_share", "from_batch", "n_pairs", "n_sufficient", "caveats", "evidence",
    "evidence_page", "evidence_anchor",
)  # fmt: skip


def decision_columns(job_lengths: Iterable[int]) -> tuple[str, ...]:
    """What ``decision_table`` returns for these job lengths (sorted), in this order."""
    return (*_DECISION_HEAD, *(f"action_{n}" for n in job_lengths), *_DECISION_TAIL)


def decision_table(
    recs: Iterable[Recommendation], *, job_lengths: Sequence[int] = JOB_LENGTHS
) -> pd.DataFrame:
    """One row per regime (job lengths folded into columns), for the home page.

    Columns ``decision_columns(lengths)``, where lengths are ``job_lengths`` plus any the
    recommendations carry. models lists the measured ones, space-separated; memory_format is
    "" for the memory_format setting and batch_size "" for device; action is the one at the
    longest job length for cudnn.benchmark, and ``action_<n>`` the one for each job length n
    (equal to ``action`` for settings without one); the cold-cost and memory figures are
    cudnn.benchmark's (empty for the others); evidence_page and evidence_anchor are the first
    evidence row, a link target.
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
    columns = list(decision_columns(lengths))
    table = pd.DataFrame(list(rows.values()), columns=columns)
    table["from_batch"] = table["from_batch"].astype("Int64")
    return table


def decisions_as_text(table: pd.DataFrame) -> pd.DataFrame:
    """``decision_table`` with its tuple cells (caveats, evidence) as space-separated words
    (an evidence row as ``page/anchor``), so every cell is a plain value a CSV can hold."""
    frame = table.copy()
    for col in ("caveats", "evidence"):
        if col in frame.columns:
            frame[col] = frame[col].map(
                lambda t: " ".join("/".join(map(str, x)) if isinstance(x, tuple) else str(x)
                                   for x in t))
    return frame
