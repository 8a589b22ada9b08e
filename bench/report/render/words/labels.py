"""Configurations and summaries in words: ``resnet50 · train · batch 128 · amp-bf16``.

Labels name only what varies among the rows beside them (plus the model and mode), so a table
of forty rows does not repeat eleven identical axes on every line; the summaries above a table
say what its rows cover, so that a machine-level sentence never reads as true of every model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pandas as pd

from bench.report import fmt
from bench.report.judge.common import Scope
from bench.report.render.words.frames import present, rows_of
from bench.report.vocabulary import Power, Verdict

#: How an axis value reads in a label (``batch 128``, ``benchmark on``).
_AXIS_WORDS = {
    "batch_size": "batch {}",
    "resolution": "{}px",
    "cudnn_benchmark": "benchmark {}",
    "cudnn_deterministic": "deterministic {}",
    "cudnn_benchmark_limit": "benchmark_limit {}",
    "cpu_threads": "{} threads",
    "kernel_cache": "{} kernel cache",
    "compile": "compile {}",
    "compile_dynamic": "dynamic={}",
    "model_source": "source {}",
    "input_shape": "input {}",
    "inputs": "inputs from {}",
    "loss": "loss {}",
}

#: The same, abbreviated for chart labels.
_SHORT_WORDS = {
    "batch_size": "b{}",
    "resolution": "{}px",
    "cudnn_benchmark": "bm={}",
    "cudnn_deterministic": "det={}",
    "cudnn_benchmark_limit": "limit={}",
    "cpu_threads": "{}t",
    "kernel_cache": "{} cache",
    "compile": "compile={}",
    "compile_dynamic": "dyn={}",
    "model_source": "src={}",
    "input_shape": "in={}",
    "inputs": "inputs={}",
    "loss": "loss={}",
}

#: What the short labels of tables and charts abbreviate, said once per page.
SHORT_LEGEND = ("b = batch size, cl = channels_last, bm = cudnn.benchmark, det = "
                "cudnn.deterministic, t = CPU threads; a label names only what differs "
                "between its rows")

def axis_text(column: str, value: Any, words: dict[str, str] | None = None) -> str:
    if not present(value) or value == "" or (column == "resolution" and value == 0):
        return ""  # resolution 0: an inputs callable made the batch
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if words is _SHORT_WORDS and column == "memory_format" and value == "channels_last":
        return "cl"
    return (words or _AXIS_WORDS).get(column, "{}").format(value)


def label(row: Any, columns: Sequence[str], *, short: bool = False) -> str:
    """A configuration in words: ``resnet50 · train · batch 128 · amp-bf16``.

    ``short`` abbreviates for chart axes (``resnet50 train b128 amp-bf16 cl``).
    """
    words = _SHORT_WORDS if short else _AXIS_WORDS
    parts = [
        axis_text(c, getattr(row, c, None) if not isinstance(row, dict) else row.get(c), words)
        for c in columns
    ]
    return (" " if short else " · ").join(p for p in parts if p)


def alt_list(items: Iterable[str], limit: int = 12) -> str:
    """A chart's alt text: its first ``limit`` items, and how many more the table holds."""
    items = list(items)
    text = "; ".join(items[:limit])
    if len(items) > limit:
        text += f"; and {len(items) - limit} more in the table below"
    return text


_SCOPE_WORDS = {"shapes": "{} shapes", "batch_size": "batch {}", "kernel_cache": "{} kernel cache",
                "compile": "compile {}"}


def scope(found: Scope) -> str:
    """``resnet50, vit_b_16 · infer, train · fp32, amp-bf16 · nchw · static shapes · batch 128
    · fresh kernel cache``: what a summary's rows cover (``judge.common.scope_of``)."""
    return " · ".join(_SCOPE_WORDS.get(col, "{}").format(", ".join(values))
                      for col, values in found if col != "batch_by_mode")


def exceptions(frame: pd.DataFrame, columns: Sequence[str], *, limit: int = 6) -> str:
    """The configurations whose verdict is not "no clear difference", by name and speedup:
    ``faster in resnet50 · train · fp32-strict (1.21×); slower in …`` (empty when none)."""
    parts = []
    for verdict in (Verdict.FASTER, Verdict.SLOWER):
        rows = frame.loc[frame["verdict"] == verdict]
        if rows.empty:
            continue
        named = [f"{label(r, columns)} ({fmt.ratio(r.speedup)})"
                 for r in rows_of(rows.head(limit))]
        text = "; ".join(named)
        if len(rows) > limit:
            text += f"; and {len(rows) - limit} more"
        parts.append(f"{verdict} in {text}")
    return "; ".join(parts)


def span(values: Iterable[float], formatter: Callable[[Any], str]) -> str:
    """``a`` or ``a to b`` over the finite values (empty when none)."""
    finite = sorted(float(v) for v in values if fmt.present(v))
    if not finite:
        return ""
    low, high = formatter(finite[0]), formatter(finite[-1])
    return low if low == high else f"{low} to {high}"


def cold_text(median: Any, low: Any, high: Any) -> str:
    """``4.71 s (2.98 s–16.0 s)``: the median cold pass and the range over replicates."""
    text = fmt.seconds(median)
    if not (present(median) and present(low) and present(high)) or low == high:
        return text
    lo, hi = fmt.seconds(low), fmt.seconds(high)
    return text if lo == hi else f"{text} ({lo}–{hi})"


def equal_text(n_checks: Any, equal: Any, diff: Any) -> str:
    """A re-run check's outcome: ``bitwise equal``, ``differs (max |Δ| 0.002)``, …"""
    if not n_checks:
        return "not checked"
    if equal is pd.NA or equal is None:
        return "no ok check"
    if bool(equal):
        return "bitwise equal"
    return f"differs (max |Δ| {fmt.num(diff)})"


#: What a summary of cudnn.benchmark counts, in words (``judge.selection.counted_benchmark``).
COUNTED_BENCHMARK = "with cudnn.deterministic off and no warm kernel cache"


def energy_text(joules_per_sample: Any, watts: Any, method: Any) -> str:
    """``0.661 J (631 W, nvml-energy)`` where measured; ``704 W (nvml-energy); no
    per-sample figure`` where only the power was (a ceiling has no samples); the
    vocabulary's "not measured on this machine" otherwise, never a blank."""
    if not present(joules_per_sample):
        if present(watts):
            return f"{fmt.num(watts)} W ({method}); no per-sample figure"
        return str(Power.NOT_MEASURED)
    power = f"{fmt.num(watts)} W, " if present(watts) else ""
    return f"{fmt.num(joules_per_sample)} J ({power}{method})"


#: Steady steps a replicate needs for its 99th percentile to be more than its slowest few.
TAIL_STEPS = 100


def tail_text(p99: Any, low: Any, high: Any, steps: Any = None) -> str:
    """A pooled p99 step time with its interval over replicates where it has one, and, where
    a replicate timed fewer than ``TAIL_STEPS`` steps, how few: its p99 is then near its
    slowest step, not a 1-in-100 latency."""
    text = fmt.seconds(p99)
    if present(p99) and present(low) and present(high):
        text += f" ({fmt.seconds(low)}–{fmt.seconds(high)})"
    if present(p99) and present(steps) and float(steps) < TAIL_STEPS:
        text += f", of {int(float(steps))} steps"
    return text
