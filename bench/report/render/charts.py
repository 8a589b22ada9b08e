"""SVG charts for the report pages, drawn with matplotlib from plain DataFrames.

Three promises, each tested:

- **Byte-identical output for the same input.** No date in the metadata, a fixed
  ``svg.hashsalt`` for element ids, and rows drawn in the order the caller gives (callers sort).
- **Readable in light and dark mode.** Every chart is a card with its own white background and
  colour-blind-safe colours (Okabe-Ito), so it looks the same on either site palette.
- **Inert labels.** Every data-derived label goes through
:func:`bench.report.render.escape.mathtext`,
  so a ``$`` in a model name cannot start mathtext.

The functions never decide what to show; the page code picks the rows and writes the alt text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import matplotlib

matplotlib.use("Agg")

from matplotlib import rc_context
from matplotlib.figure import Figure
from matplotlib.markers import TICKLEFT
from matplotlib.ticker import FuncFormatter, LogFormatter, NullFormatter
from matplotlib.transforms import ScaledTranslation, blended_transform_factory

from bench.report.render.escape import mathtext
from bench.report.vocabulary import Verdict

#: Okabe-Ito: distinguishable with the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<")
VERDICT_COLOURS = {
    Verdict.FASTER: "#0072B2",
    Verdict.SLOWER: "#D55E00",
    Verdict.NO_CLEAR_DIFFERENCE: "#6E6E6E",
    Verdict.INSUFFICIENT: "#A0A0A0",
}
INK = "#222222"
GRID = "#DDDDDD"

#: A chart taller than this many rows stops being readable; callers split their data.
MAX_ROWS = 40

_RC: dict[str, Any] = {
    "svg.hashsalt": "torch-knobs",
    # Text stays text (not paths): smaller files, drawn several times faster, and the browser
    # renders it with the first of these fonts it has. Layout is computed with DejaVu Sans.
    "svg.fonttype": "none",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Liberation Sans", "Arial", "Helvetica"],
    "font.size": 9.0,
    "axes.edgecolor": INK,
    "axes.labelcolor": INK,
    "text.color": INK,
    "xtick.color": INK,
    "ytick.color": INK,
    "axes.titlesize": 10.5,
    "axes.titleweight": "bold",
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "path.simplify": False,
}


def _style() -> Any:
    """``rc_context`` with this module's style (typed loosely: matplotlib types its keys)."""
    return rc_context(cast(Any, _RC))


@dataclass(frozen=True)
class SpeedupRow:
    """One comparison: ``speedup`` > 1 means the variant is faster than the baseline."""

    label: str
    speedup: float
    ci_low: float
    ci_high: float
    verdict: str


@dataclass(frozen=True)
class BreakEvenRow:
    """Iterations until a one-off cost is paid back; when ``None``, ``note`` says why not."""

    label: str
    iterations: float | None
    note: str = "never pays back"


@dataclass(frozen=True)
class SeriesPoint:
    """One point of a line: ``y`` with its CI at ``x``."""

    series: str
    x: float
    y: float
    ci_low: float
    ci_high: float


def _times(value: float, _pos: object = None) -> str:
    return f"{value:.3g}×"


_NICE_RATIOS = (
    0.01,
    0.02,
    0.05,
    0.1,
    0.2,
    0.25,
    0.5,
    0.6,
    0.7,
    0.8,
    0.9,
    0.95,
    1.0,
    1.05,
    1.1,
    1.25,
    1.5,
    2.0,
    3.0,
    5.0,
    10.0,
    20.0,
    50.0,
    100.0,
    200.0,
    500.0,
    1000.0,
)


def _ratio_ticks(low: float, high: float, *, most: int = 8) -> list[float]:
    """Readable ratio ticks inside ``[low, high]``, evenly spread on a log axis, 1 included."""
    inside = [t for t in _NICE_RATIOS if low <= t <= high]
    if not inside:
        return []
    gap = (math.log(high) - math.log(low)) / most
    centre = min(inside, key=lambda t: abs(math.log(t)))
    chosen = [centre]
    for direction in (
        sorted(t for t in inside if t > centre),
        sorted((t for t in inside if t < centre), reverse=True),
    ):
        last = centre
        for tick in direction:
            if abs(math.log(tick) - math.log(last)) >= gap:
                chosen.append(tick)
                last = tick
    return sorted(chosen)


def _ratio_axis(axis: object, low: float, high: float) -> None:
    axis.set_ticks(_ratio_ticks(low, high))  # type: ignore[attr-defined]
    axis.set_major_formatter(FuncFormatter(_times))  # type: ignore[attr-defined]
    axis.set_minor_formatter(NullFormatter())  # type: ignore[attr-defined]


def count(value: float, _pos: object = None) -> str:
    """A count or rate as a reader writes it: ``1,000``, ``20``, ``0.5``."""
    return f"{value:,.0f}" if value >= 10 else f"{value:g}"


class _LogLabels(LogFormatter):
    """A log axis's tick labels as plain text by ``text``: the ticks matplotlib's own log
    formatter labels (each power of the base; where the axis spans about a decade or less,
    some or all of the ticks between), without the mathtext it writes them in (``10^{3}``,
    ``2\\times10^{-2}``), which a reader parses more slowly than ``1,000`` or ``20 ms`` and
    matplotlib parses at about a millisecond a label."""

    def __init__(self, text: Callable[[float], str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._text = text

    def __call__(self, x: float, pos: int | None = None) -> str:
        return self._text(x) if super().__call__(x, pos) else ""


def log_labels(axis: Any, text: Callable[[float], str] = count) -> None:
    """Label a log ``axis``'s ticks, major and minor, with ``text`` (see ``_LogLabels``)."""
    base = axis.get_transform().base
    axis.set_major_formatter(_LogLabels(text, base=base))
    axis.set_minor_formatter(_LogLabels(text, base=base, labelOnlyBase=False))


def _finite(*values: float) -> bool:
    return all(v is not None and math.isfinite(v) for v in values)


def _log_limits(values: Sequence[float], *, floor: float = 0.0) -> tuple[float, float]:
    finite = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    low = min([*finite, 1.0]) if finite else 0.5
    high = max([*finite, 1.0]) if finite else 2.0
    low, high = min(low, 1 - floor), max(high, 1 + floor)
    pad = (high / low) ** 0.08 if high > low else 1.25
    return low / pad, high * pad


def _save(fig: Figure, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="svg", metadata={"Date": None})


#: Inches per character of a 9 pt label (DejaVu Sans averages a little over half an em).
_CHAR_IN = 0.07


def _frame(
    rows: int, labels: Sequence[str], *, legend_rows: int = 0, plot_width: float = 5.6
) -> tuple[Figure, Any]:
    """A figure whose margins are computed from its content, so no extra draw is needed.

    (``bbox_inches="tight"`` would draw every chart twice.) The plot keeps ``plot_width``
    inches whatever the label length; the figure grows to the left instead.
    """
    left = 0.25 + _CHAR_IN * max((len(label) for label in labels), default=4)
    width = left + plot_width + 0.3
    top, bottom = 0.45, 0.55 + 0.22 * legend_rows
    height = top + bottom + 0.3 * max(rows, 1) + 0.2
    fig = Figure(figsize=(width, height))
    fig.subplots_adjust(
        left=left / width, right=1 - 0.3 / width, top=1 - top / height, bottom=bottom / height
    )
    return fig, fig.add_subplot()


#: A row label's right end, left of the plot: matplotlib's tick length and label pad
#: (``ytick.major.size`` and ``ytick.major.pad``, 3.5 points each).
_TICK_PT = 3.5
_LABEL_GAP_PT = 7.0


def _row_labels(ax: Any, ys: Sequence[float], labels: Sequence[str]) -> None:
    """Each row's label and tick mark at the plot's left edge, where the y axis's ticks would
    put them, drawn as one line of tick markers and one text per row.

    Why not ``set_yticks``: a matplotlib tick is five artists, and a chart of many rows spent a
    third of its drawing time on them (a speedup chart: 105 ms, 70 ms without them).
    """
    ax.set_yticks([])
    edge = blended_transform_factory(ax.transAxes, ax.transData)
    ax.plot([0.0] * len(ys), list(ys), ls="none", marker=TICKLEFT, ms=_TICK_PT, mew=0.8,
            color=INK, transform=edge, clip_on=False, zorder=2.5)
    shift = edge + ScaledTranslation(-_LABEL_GAP_PT / 72, 0, ax.figure.dpi_scale_trans)
    for y, label in zip(ys, labels, strict=True):
        ax.text(0.0, y, label, transform=shift, ha="right", va="center_baseline", color=INK)


def _title(fig: Figure, text: str) -> None:
    """A bold title at the figure's top left (an axes title could overflow a narrow plot)."""
    fig.text(
        0.1 / fig.get_figwidth(),
        1 - 0.12 / fig.get_figheight(),
        mathtext(text, limit=90),
        ha="left",
        va="top",
        fontsize=10.5,
        fontweight="bold",
    )


def speedup_chart(
    rows: Sequence[SpeedupRow],
    path: Path,
    *,
    title: str,
    xlabel: str,
    delta: float,
) -> Path:
    """Horizontal dot plot of speedups with 95% CI error bars and the 1±δ band shaded.

    Rows are drawn top to bottom in the given order. An ``insufficient`` row is drawn hollow.
    """
    if not rows:
        raise ValueError("speedup_chart needs at least one row")
    if len(rows) > MAX_ROWS:
        raise ValueError(f"speedup_chart got {len(rows)} rows; split them (max {MAX_ROWS})")
    labels = [mathtext(r.label) for r in rows]
    verdicts = [v for v in VERDICT_COLOURS if any(r.verdict == v for r in rows)]
    with _style():
        fig, ax = _frame(len(rows), labels, legend_rows=2)
        ys = list(range(len(rows)))[::-1]
        ax.axvspan(1 - delta, 1 + delta, color="#EEEEEE", zorder=0, lw=0)
        ax.axvline(1.0, color=INK, lw=0.8, zorder=1)
        for verdict in [*verdicts, *sorted({r.verdict for r in rows} - set(verdicts))]:
            colour = VERDICT_COLOURS.get(Verdict(verdict), INK)
            mine = [(y, r) for y, r in zip(ys, rows) if r.verdict == verdict and _finite(r.speedup)]
            with_ci = [(y, r) for y, r in mine if _finite(r.ci_low, r.ci_high)]
            if with_ci:
                ax.errorbar(
                    [r.speedup for _, r in with_ci],
                    [y for y, _ in with_ci],
                    xerr=[
                        [max(r.speedup - r.ci_low, 0) for _, r in with_ci],
                        [max(r.ci_high - r.speedup, 0) for _, r in with_ci],
                    ],
                    fmt="none",
                    ecolor=colour,
                    elinewidth=1.4,
                    capsize=3,
                    zorder=2,
                )
            if mine:
                ax.plot(
                    [r.speedup for _, r in mine],
                    [y for y, _ in mine],
                    marker="o",
                    ms=6,
                    color=colour,
                    ls="none",
                    zorder=3,
                    markerfacecolor="white" if verdict == Verdict.INSUFFICIENT else colour,
                )
        _row_labels(ax, ys, labels)
        ax.set_xscale("log")
        values = [v for r in rows for v in (r.speedup, r.ci_low, r.ci_high)]
        low, high = _log_limits(values, floor=delta * 2)
        ax.set_xlim(low, high)
        _ratio_axis(ax.xaxis, low, high)
        ax.grid(axis="x", color=GRID, lw=0.6, zorder=0)
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.set_xlabel(mathtext(xlabel, limit=120))
        _title(fig, title)
        _legend_for_verdicts(fig, verdicts, delta)
        _save(fig, path)
    return path


def _legend_for_verdicts(fig: Figure, verdicts: Sequence[str], delta: float) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles: list[Any] = []
    for verdict in verdicts:
        colour = VERDICT_COLOURS[Verdict(verdict)]
        face = "white" if verdict == Verdict.INSUFFICIENT else colour
        handles.append(
            Line2D([], [], marker="o", ls="none", color=colour, markerfacecolor=face, label=verdict)
        )
    handles.append(Patch(color="#EEEEEE", label=f"1 ± δ ({delta:.0%}): no clear difference"))
    fig.legend(
        handles=handles,
        loc="lower center",
        ncol=min(len(handles), 3),
        frameon=False,
        fontsize=8,
        bbox_to_anchor=(0.5, 0.0),
    )


def break_even_chart(rows: Sequence[BreakEvenRow], path: Path, *, title: str) -> Path:
    """Horizontal bars: iterations until a one-off cost is paid back (log scale).

    A row without iterations shows its ``note`` (e.g. "never pays back") at the left edge.
    """
    if not rows:
        raise ValueError("break_even_chart needs at least one row")
    if len(rows) > MAX_ROWS:
        raise ValueError(f"break_even_chart got {len(rows)} rows; split them (max {MAX_ROWS})")
    labels = [mathtext(r.label) for r in rows]
    with _style():
        fig, ax = _frame(len(rows), labels)
        ys = list(range(len(rows)))[::-1]
        finite = [r.iterations for r in rows if r.iterations is not None]
        positive = [max(v, 1.0) for v in finite]
        high = max([*positive, 10.0]) * 3
        ax.set_xscale("log")
        ax.set_xlim(1, high)
        log_labels(ax.xaxis)
        bars: list[tuple[int, float]] = []  # one barh call for all: a call per row cost more
        for y, row in zip(ys, rows):
            if row.iterations is None:
                ax.text(
                    1.15, y, mathtext(row.note, limit=60), va="center", ha="left", color="#D55E00"
                )
                continue
            value = max(row.iterations, 1.0)
            bars.append((y, value - 1 if value > 1 else 0.0))
            text = "from the first iteration" if row.iterations <= 1 else f"{row.iterations:,.0f}"
            ax.text(value * 1.08, y, text, va="center", ha="left", color=INK)
        if bars:
            ax.barh([y for y, _ in bars], [w for _, w in bars], left=1, height=0.55,
                    color="#0072B2")
        _row_labels(ax, ys, labels)
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.grid(axis="x", color=GRID, lw=0.6)
        ax.set_axisbelow(True)
        ax.set_xlabel("iterations of the same input shapes until the extra cold cost is repaid")
        _title(fig, title)
        _save(fig, path)
    return path


def lines_chart(
    points: Sequence[SeriesPoint],
    path: Path,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    reference: float | None = 1.0,
    reference_label: str = "",
) -> Path:
    """One line per series over ``x`` (log 2), ``y`` on a log scale, with CI error bars."""
    if not points:
        raise ValueError("lines_chart needs at least one point")
    series: dict[str, list[SeriesPoint]] = {}
    for point in points:
        series.setdefault(point.series, []).append(point)
    legend_w = 0.7 + _CHAR_IN * 0.9 * max(len(mathtext(name)) for name in series)
    width, height = 5.8 + legend_w, 4.2
    with _style():
        fig = Figure(figsize=(width, height))
        fig.subplots_adjust(
            left=0.85 / width,
            right=1 - legend_w / width,
            top=1 - 0.45 / height,
            bottom=0.6 / height,
        )
        ax = fig.add_subplot()
        if reference is not None:
            ax.axhline(reference, color=INK, lw=0.8, ls="--", zorder=1)
            if reference_label:
                ax.text(
                    1.0,
                    reference,
                    " " + mathtext(reference_label, limit=60),
                    transform=ax.get_yaxis_transform(),
                    va="bottom",
                    ha="right",
                    fontsize=8,
                )
        for i, (name, pts) in enumerate(series.items()):
            pts = sorted(pts, key=lambda p: p.x)
            colour = PALETTE[i % len(PALETTE)]
            marker = MARKERS[(i // len(PALETTE)) % len(MARKERS)]
            xs = [p.x for p in pts]
            ys = [p.y for p in pts]
            low = [max(p.y - p.ci_low, 0) if _finite(p.ci_low) else 0 for p in pts]
            high = [max(p.ci_high - p.y, 0) if _finite(p.ci_high) else 0 for p in pts]
            ax.errorbar(
                xs,
                ys,
                yerr=[low, high],
                color=colour,
                marker=marker,
                ms=5,
                lw=1.5,
                capsize=3,
                label=mathtext(name),
                zorder=2,
            )
        ax.set_xscale("log", base=2)
        xs_all = sorted({p.x for p in points})
        ax.set_xticks(xs_all, [f"{x:g}" for x in xs_all])
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_yscale("log")
        values = [v for p in points for v in (p.y, p.ci_low, p.ci_high)]
        bottom, top = _log_limits(values)
        ax.set_ylim(bottom, top)
        _ratio_axis(ax.yaxis, bottom, top)
        ax.grid(color=GRID, lw=0.6)
        ax.set_axisbelow(True)
        ax.set_xlabel(mathtext(xlabel, limit=120))
        ax.set_ylabel(mathtext(ylabel, limit=80))
        # y given: matplotlib then skips placing the title clear of top ticks (there are
        # none), which measured every tick label again: the same place, 20 ms sooner
        ax.set_title(mathtext(title, limit=90), loc="left", y=1.0)
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False, fontsize=8)
        _save(fig, path)
    return path
