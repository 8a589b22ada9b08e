"""The input pipeline's chart: delivered samples/s against loader workers, with the ideal
linear line (each worker adding what one worker delivers) and the device steps' consumption.

Linear axes, not logarithmic: 0 workers (the main process decodes) is a point of the sweep,
and the question is a straight one, "how far below the ideal line does the curve bend".
Drawn with the style, determinism and inert labels of :mod:`bench.report.render.charts`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.report.render.charts import INK, PALETTE, _finite, _style
from bench.report.render.costcharts import by_series, finish_legend_chart, legend_figure
from bench.report.render.escape import mathtext


@dataclass(frozen=True)
class FeedPoint:
    """One worker count of one sweep: the delivered rate and its interval."""

    series: str
    workers: float
    rate: float
    low: float
    high: float


@dataclass(frozen=True)
class Level:
    """A horizontal line: what one device step consumes (samples/s)."""

    label: str
    rate: float


def feed_chart(points: Sequence[FeedPoint], ideal: Sequence[tuple[str, float]],
               levels: Sequence[Level], path: Path, *, title: str) -> Path:
    """One line per sweep, its ideal line dashed (``ideal``: the series and one worker's
    rate), the consumption ``levels`` dotted."""
    if not points:
        raise ValueError("feed_chart needs at least one point")
    series: dict[str, list[FeedPoint]] = by_series(points)
    top_x = max(p.workers for p in points)
    with _style():
        fig, ax = legend_figure([*series, *(lv.label for lv in levels)], left=0.95)
        colours = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(series)}
        for name, pts in series.items():
            pts = sorted(pts, key=lambda p: p.workers)
            low = [max(p.rate - p.low, 0) if _finite(p.low) else 0 for p in pts]
            high = [max(p.high - p.rate, 0) if _finite(p.high) else 0 for p in pts]
            ax.errorbar([p.workers for p in pts], [p.rate for p in pts], yerr=[low, high],
                        color=colours[name], marker="o", ms=5, lw=1.5, capsize=3,
                        label=mathtext(name), zorder=2)
        for name, one in ideal:
            if name in colours and _finite(one):
                ax.plot([1, top_x], [one, one * top_x], color=colours[name], ls="--", lw=0.9,
                        zorder=1)
        for i, lv in enumerate(levels):
            ax.axhline(lv.rate, color=INK if i == 0 else PALETTE[(i + 3) % len(PALETTE)],
                       ls=":", lw=1.0, label=mathtext(lv.label), zorder=1)
        ax.set_xlim(left=-0.2)
        ax.set_ylim(bottom=0)
        ticks = sorted({p.workers for p in points})
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        return finish_legend_chart(fig, ax, path, title=title,
                                   xlabel="DataLoader workers (0: the main process decodes)",
                                   ylabel="delivered samples/s")
