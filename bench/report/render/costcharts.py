"""SVG charts of what a setting costs and what a machine delivers: one-off costs with their
range over replicates, peak memory with the first pass's workspace, and throughput side by
side. Drawn with the same style, determinism and inert labels as :mod:`bench.report.render.charts`;
callers pick and order the rows and write the caption and alt text.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from bench.report.render.charts import (
    GRID,
    INK,
    MAX_ROWS,
    PALETTE,
    _finite,
    _frame,
    _row_labels,
    _save,
    _style,
    _title,
    log_labels,
)
from bench.report.render.escape import mathtext

#: A point of a line chart (``StepPoint``, ``TailPoint``): it names its ``series``.
T = TypeVar("T")


@dataclass(frozen=True)
class RangeRow:
    """A cost in one configuration: its median over replicates and their range."""

    label: str
    median: float
    low: float
    high: float
    series: str  # e.g. the kernel cache its first passes met


@dataclass(frozen=True)
class MemoryRow:
    """Peak memory of a whole run with a setting off and on, the first pass's workspace (on)
    drawn on top of the steady state's peak."""

    label: str
    off: float
    on_steady: float
    on_workspace: float


@dataclass(frozen=True)
class BarRow:
    """One group of bars: a workload's value on each machine (``values`` in ``names``'
    order; NaN where not measured)."""

    label: str
    values: tuple[float, ...]


def _check(rows: Sequence[object], what: str) -> None:
    if not rows:
        raise ValueError(f"{what} needs at least one row")
    if len(rows) > MAX_ROWS:
        raise ValueError(f"{what} got {len(rows)} rows; split them (max {MAX_ROWS})")


def range_chart(rows: Sequence[RangeRow], path: Path, *, title: str, xlabel: str) -> Path:
    """Horizontal dots (the median) with bars (the range over replicates), one colour per
    series, on a linear axis that includes 0 (a cost can be negative: a cheaper first pass)."""
    _check(rows, "range_chart")
    labels = [mathtext(r.label) for r in rows]
    series = list(dict.fromkeys(r.series for r in rows))
    with _style():
        fig, ax = _frame(len(rows), labels, legend_rows=1)
        ys = list(range(len(rows)))[::-1]
        ax.axvline(0.0, color=INK, lw=0.8, zorder=1)
        for i, name in enumerate(series):
            colour = PALETTE[i % len(PALETTE)]
            mine = [(y, r) for y, r in zip(ys, rows) if r.series == name and _finite(r.median)]
            ranged = [(y, r) for y, r in mine if _finite(r.low, r.high)]
            if ranged:
                ax.hlines([y for y, _ in ranged], [r.low for _, r in ranged],
                          [r.high for _, r in ranged], color=colour, lw=2.2, zorder=2)
            ax.plot([r.median for _, r in mine], [y for y, _ in mine], "o", ms=6, color=colour,
                    zorder=3, label=mathtext(name))
        values = [v for r in rows for v in (r.median, r.low, r.high) if _finite(v)]
        low, high = min([0.0, *values]), max([0.0, *values])
        pad = (high - low) * 0.06 or 1.0
        ax.set_xlim(low - pad, high + pad)
        _row_labels(ax, ys, labels)
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.grid(axis="x", color=GRID, lw=0.6, zorder=0)
        ax.set_xlabel(mathtext(xlabel, limit=120))
        _title(fig, title)
        fig.legend(loc="lower center", ncol=max(len(series), 1), frameon=False, fontsize=8,
                   bbox_to_anchor=(0.5, 0.0))
        _save(fig, path)
    return path


def memory_chart(rows: Sequence[MemoryRow], path: Path, *, title: str, unit: float,
                 unit_name: str) -> Path:
    """Two bars per configuration: the whole run's peak with the setting off, and with it on
    split into the steady state's peak and the first pass's workspace above it."""
    _check(rows, "memory_chart")
    labels = [mathtext(r.label) for r in rows]
    with _style():
        fig, ax = _frame(len(rows), labels, legend_rows=1)
        ys = list(range(len(rows)))[::-1]
        off = [r.off / unit for r in rows]
        steady = [r.on_steady / unit for r in rows]
        extra = [r.on_workspace / unit for r in rows]
        ax.barh([y + 0.18 for y in ys], off, height=0.34, color="#9E9E9E", label="off")
        ax.barh([y - 0.18 for y in ys], steady, height=0.34, color=PALETTE[0],
                label="on: steady-state peak")
        ax.barh([y - 0.18 for y in ys], extra, left=steady, height=0.34, color=PALETTE[1],
                label="on: first-pass workspace above it")
        _row_labels(ax, ys, labels)
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.grid(axis="x", color=GRID, lw=0.6)
        ax.set_axisbelow(True)
        ax.set_xlabel(f"peak memory of a whole run ({unit_name})")
        _title(fig, title)
        fig.legend(loc="lower center", ncol=3, frameon=False, fontsize=8,
                   bbox_to_anchor=(0.5, 0.0))
        _save(fig, path)
    return path


def bars_chart(rows: Sequence[BarRow], names: Sequence[str], path: Path, *, title: str,
               xlabel: str, hatches: Sequence[str] = ()) -> Path:
    """Grouped horizontal bars on a log axis: per workload, one bar per series (``names``: a
    machine, or a machine's device). ``hatches``: a hatch per series (``""``: solid), drawn on
    its bars and its legend entry, so that what tells series apart is never colour alone."""
    _check(rows, "bars_chart")
    if hatches and len(hatches) != len(names):
        raise ValueError(f"bars_chart got {len(hatches)} hatches for {len(names)} series")
    labels = [mathtext(r.label) for r in rows]
    n = max(len(names), 1)
    height = 0.8 / n
    with _style():
        fig, ax = _frame(len(rows), labels, legend_rows=(n + 2) // 3)
        ys = list(range(len(rows)))[::-1]
        for i, name in enumerate(names):
            offset = (n - 1) / 2 * height - i * height
            values = [(y + offset, r.values[i]) for y, r in zip(ys, rows)
                      if _finite(r.values[i]) and r.values[i] > 0]
            hatch = hatches[i] if hatches else ""
            ax.barh([y for y, _ in values], [v for _, v in values], height=height * 0.9,
                    color=PALETTE[i % len(PALETTE)], label=mathtext(name),
                    **({"hatch": hatch, "edgecolor": "white", "linewidth": 0} if hatch else {}))
        ax.set_xscale("log")
        log_labels(ax.xaxis)
        _row_labels(ax, ys, labels)
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.grid(axis="x", color=GRID, lw=0.6)
        ax.set_axisbelow(True)
        ax.set_xlabel(mathtext(xlabel, limit=120))
        _title(fig, title)
        fig.legend(loc="lower center", ncol=min(n, 3), frameon=False, fontsize=8,
                   bbox_to_anchor=(0.5, 0.0))
        _save(fig, path)
    return path


@dataclass(frozen=True)
class StepPoint:
    """One median step time of one series (a curve on one device) at one batch size."""

    series: str
    batch: float
    seconds: float


def _seconds(value: float, _pos: object = None) -> str:
    if value >= 1:
        return f"{value:.3g} s"
    if value >= 1e-3:
        return f"{value * 1e3:.3g} ms"
    return f"{value * 1e6:.3g} µs"


def by_series(points: Sequence[Any]) -> dict[str, list[Any]]:
    """The points grouped by their ``series``, in the order each series first appears."""
    series: dict[str, list[Any]] = {}
    for point in points:
        series.setdefault(point.series, []).append(point)
    return series


def legend_figure(names: Iterable[str], left: float = 0.9) -> tuple[Any, Any]:
    """A figure with one axes and room on its right for a legend of ``names`` (called inside
    ``_style()``; ``left``: inches for the y labels), and its axes."""
    from matplotlib.figure import Figure

    legend_w = 0.7 + 0.063 * max(len(mathtext(name)) for name in names)
    width, height = 5.8 + legend_w, 4.2
    fig = Figure(figsize=(width, height))
    fig.subplots_adjust(left=left / width, right=1 - legend_w / width,
                        top=1 - 0.45 / height, bottom=0.6 / height)
    return fig, fig.add_subplot()


def finish_legend_chart(fig: Any, ax: Any, path: Path, *, title: str, xlabel: str,
                        ylabel: str) -> Path:
    """Grid, labels, title and the legend on the right of a ``legend_figure``, then save it:
    the line charts look alike."""
    ax.grid(color=GRID, lw=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    # y given: matplotlib then skips placing the title clear of top ticks (there are
    # none), which measured every tick label again: the same place, 20 ms sooner
    ax.set_title(mathtext(title, limit=90), loc="left", y=1.0)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False, fontsize=8)
    _save(fig, path)
    return path


@contextmanager
def _series_figure(points: Sequence[T], chart: str
                   ) -> Iterator[tuple[Any, Any, dict[str, list[T]]]]:
    """The figure, axes and series of a line chart with a legend entry per series of
    ``points``, drawn in the charts' style: what the step and tail charts begin alike."""
    if not points:
        raise ValueError(f"{chart} needs at least one point")
    series = by_series(points)
    with _style():
        fig, ax = legend_figure(series)
        yield fig, ax, series


def step_chart(points: Sequence[StepPoint], path: Path, *, title: str) -> Path:
    """Median step time against batch size, one line per series, both axes logarithmic."""
    from matplotlib.ticker import NullFormatter

    with _series_figure(points, "step_chart") as (fig, ax, series):
        for i, (name, pts) in enumerate(series.items()):
            _line(ax, name, i, [(p.batch, p.seconds) for p in sorted(pts, key=lambda p: p.batch)])
        ax.set_xscale("log", base=2)
        batches = sorted({p.batch for p in points})
        ax.set_xticks(batches, [f"{b:g}" for b in batches])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_yscale("log")
        log_labels(ax.yaxis, _seconds)
        return finish_legend_chart(fig, ax, path, title=title, xlabel="batch size",
                                   ylabel="median step time")


def _line(ax: Any, name: str, i: int, xy: Sequence[tuple[float, float]]) -> str:
    """One series' line through its points (solid for a GPU, dashed for a CPU), in the
    palette's ``i``-th colour, which it returns."""
    color = PALETTE[i % len(PALETTE)]
    ax.plot([x for x, _ in xy], [y for _, y in xy], marker="o", ms=5, lw=1.5, color=color,
            ls="-" if "GPU" in name else "--", label=mathtext(name))
    return color


@dataclass(frozen=True)
class TailPoint:
    """One cell of a curve: its throughput and its pooled p99 step time, at one batch size."""

    series: str
    batch: float
    samples_per_s: float
    p99_s: float


def tail_chart(points: Sequence[TailPoint], path: Path, *, title: str) -> Path:
    """p99 step time against throughput, one line per series through its batch sizes (each
    point labelled with its batch), both axes logarithmic: what a bigger batch buys in
    samples/s and costs in tail latency."""
    with _series_figure(points, "tail_chart") as (fig, ax, series):
        for i, (name, pts) in enumerate(series.items()):
            pts = sorted(pts, key=lambda p: p.batch)
            color = _line(ax, name, i, [(p.samples_per_s, p.p99_s) for p in pts])
            for p in pts:
                ax.annotate(f"b{p.batch:g}", (p.samples_per_s, p.p99_s), fontsize=7,
                            xytext=(3, 3), textcoords="offset points", color=color)
        ax.set_xscale("log")
        ax.set_yscale("log")
        log_labels(ax.xaxis)
        log_labels(ax.yaxis, _seconds)
        return finish_legend_chart(fig, ax, path, title=title, xlabel="throughput (samples/s)",
                                   ylabel="p99 step time")
