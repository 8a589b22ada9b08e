"""What every comparison page shows the same way: capped tables with their full CSV, links to
the two rows a comparison came from, the speedup chart, and the page around its sections.

A machine can have thousands of comparisons; a page shows the first ``TABLE_ROWS`` and links
to a CSV beside the data files that holds every one, so nothing is left out silently.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pandas as pd

from bench import schema
from bench.report import fmt
from bench.report.judge import DELTA, Pair, Table
from bench.report.judge.common import ComparisonPage
from bench.report.judge.machines import EVERY_ONE_UP_TO, Machine
from bench.report.render import charts
from bench.report.render.escape import Md, cat
from bench.report.render.markdown import Page
from bench.report.render.paths import COMPARISONS
from bench.report.render.words.claim_words import claims_box
from bench.report.render.words.context import banner, provenance
from bench.report.render.words.frames import present, rows_of
from bench.report.render.words.labels import SHORT_LEGEND, alt_list, label
from bench.report.render.words.recommendations import advice_items
from bench.report.render.writer import Writer

#: Comparison tables show at most this many rows per machine; the CSV beside them has all.
TABLE_ROWS = 100

_CSV_COLUMNS = (
    "machine",
    "fingerprint_id",
    "axis",
    "baseline_value",
    "variant_value",
    *schema.AXIS_COLUMNS,
    "n_base",
    "n_var",
    "base_median_s",
    "var_median_s",
    "speedup",
    "ci_low",
    "ci_high",
    "verdict",
    "baseline_cell_id",
    "variant_cell_id",
)


def write_comparisons(
    writer: Writer, name: str, frame: pd.DataFrame | Table, extra: Sequence[str] = ()
) -> str:
    """Every comparison of a page as a CSV next to the data files; returns its path."""
    path = f"{COMPARISONS}/{name}.csv"
    if isinstance(frame, Table):
        writer.csv(path, frame.select((*_CSV_COLUMNS, *extra)))
        return path
    columns = [c for c in (*_CSV_COLUMNS, *extra) if c in frame.columns]
    writer.csv(path, frame[columns])
    return path


def more_rows(p: Page, total: int, csv_path: str) -> Md | None:
    """The note under a capped table, linking to the CSV with every row."""
    if total <= TABLE_ROWS:
        return None
    return cat(
        f"The table shows the first {TABLE_ROWS:,} of {total:,} comparisons on this machine; "
        "all of them are in ",
        p.link(csv_path.rsplit("/", 1)[-1], csv_path),
        ".",
    )


def cell_links(p: Page, page: str, pairs: Sequence[tuple[str, str]]) -> Md:
    """``off · on`` links to the table rows a comparison came from."""
    return Md(" · ".join(p.row_link(text, page, a) for text, a in pairs))


def trim(rows: list[Any], limit: int = charts.MAX_ROWS) -> tuple[list[Any], int]:
    """At most ``limit`` rows for a chart, and how many were left out."""
    return rows[:limit], max(len(rows) - limit, 0)


def _speedup_rows(
    rows: Sequence[Any], columns: Sequence[str], *, short: bool = True
) -> list[charts.SpeedupRow]:
    return [
        charts.SpeedupRow(
            label=label(r, columns, short=short),
            speedup=float(r.speedup),
            ci_low=float(r.ci_low) if present(r.ci_low) else math.nan,
            ci_high=float(r.ci_high) if present(r.ci_high) else math.nan,
            verdict=str(r.verdict),
        )
        for r in rows
    ]


def _ci_words(r: charts.SpeedupRow) -> str:
    ci = f"CI {fmt.ci(r.ci_low, r.ci_high)}, " if math.isfinite(r.ci_low) else ""
    return f"{r.label}: {fmt.ratio(r.speedup)} ({ci}{r.verdict})"


def speedup_chart(
    frame: pd.DataFrame | Sequence[Pair],
    columns: Sequence[str],
    path: str,
    writer: Writer,
    *,
    title: str,
    xlabel: str,
    what: str,
    caption: str,
) -> dict[str, Any] | None:
    """Draw a speedup chart of ``frame``'s comparisons (the first MAX_ROWS with a value)."""
    rows = list(rows_of(frame)) if isinstance(frame, pd.DataFrame) else list(frame)
    drawable = [r for r in rows if present(r.speedup)]
    if not drawable:
        return None
    shown = _speedup_rows(drawable[:charts.MAX_ROWS], columns)
    words = [
        _ci_words(r) for r in _speedup_rows(drawable[:charts.MAX_ROWS], columns, short=False)
    ]
    writer.chart(
        charts.speedup_chart, path, shown, title=title, xlabel=xlabel, delta=DELTA
    )
    return {
        "path": path,
        "alt": f"{what}: " + alt_list(words),
        "left_out": len(drawable) - len(shown),
        "shown": len(shown),
        "caption": caption,
    }


def not_drawn(p: Page, charts_on: Machine, anchor: str) -> dict[str, Any]:
    """What stands for a section's charts where the page draws them for one fingerprint per
    hardware model only (``judge.machines.mark_charted``): where its model's are, and why."""
    text = cat(f"Past {EVERY_ONE_UP_TO} fingerprints a page draws the charts of one per hardware "
               f"model (the one that measured the most configurations) and of yours; those "
               f"of this model are in the section ",
               p.link(f"on {charts_on.title}", p.here, anchor),
               ", and the figures here are in the tables below.")
    return {"path": "", "not_drawn": text}


def figure_of(path: str, shown: int, left_out: int, caption: str, alt: str) -> dict[str, Any]:
    """A drawn chart as the page templates read it, so that every chart says the same things."""
    return {"path": path, "left_out": left_out, "shown": shown, "caption": caption, "alt": alt}


#: What a page's sections are built from besides the model (the views' ``Shared``).
S = TypeVar("S")


def comparison_page(
    writer: Writer,
    p: Page,
    template: str,
    model: ComparisonPage[Any],
    *,
    csv: tuple[str, Sequence[str]],
    section: Callable[[Writer, S, Page, Any, str], dict[str, Any]],
    shared: S,
    common: dict[str, Any],
    **fields: Any,
) -> None:
    """Write a comparison page: its CSV (``csv``: the name and the page's extra columns), one
    ``section`` per machine, and the legend, claims, advice and provenance they all end with;
    ``fields`` are the page's own (its answers first)."""
    name, extra = csv
    path = write_comparisons(writer, name, model.pairs, extra) if len(model.pairs) else ""
    writer.page(
        p.here,
        template,
        p=p,
        banners=banner(model.sources),
        sections=[section(writer, shared, p, s, path) for s in model.sections],
        legend=SHORT_LEGEND,
        claims=claims_box(model.claims, p),
        recs=advice_items(model.advice, p),
        provenance=provenance(common["build"], model.sources),
        downloads=[path],
        **fields,
        **common,
    )
