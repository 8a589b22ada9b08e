"""From statistics to page contexts: which rows, in which order, with which words and links.

Each ``*_page`` function takes the frames computed by :mod:`bench.report.stats` (and the
recommendations of :mod:`bench.report.advice`), draws its charts and renders its template
through a :class:`bench.report.pages.Writer`. Numbers are formatted here (``fmt``), text from
the data stays plain ``str`` and is escaped by the template environment; only links, anchors
and badges are pre-built :class:`~bench.report.escape.Md`.

Nothing here decides what is true: verdicts, CIs, break-even and crossovers come from
``stats``, advice from ``advice``. This module only chooses how to show them, and says so
plainly when a section has no data.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from bench import schema
from bench.report import advice, charts, fmt, sentences, stats
from bench.report.escape import Md, anchor, attr, cat, html_text, md, slug
from bench.report.pages import (
    GENERATED,
    Page,
    Writer,
    fragment_placeholder,
    html_table,
    machine_file,
    row_anchor,
    safe_title,
    table,
    verdict_badge,
)

CHARTS = f"{GENERATED}/charts"
FRAGMENTS = f"{GENERATED}/fragments"
DATA = f"{GENERATED}/data"

#: How an axis value reads in a label (``batch 128``, ``benchmark on``).
_AXIS_WORDS = {
    "batch_size": "batch {}",
    "resolution": "{}px",
    "cudnn_benchmark": "benchmark {}",
    "cudnn_deterministic": "deterministic {}",
    "cudnn_benchmark_limit": "benchmark_limit {}",
    "cpu_threads": "{} threads",
}
#: The same, abbreviated for chart labels.
_SHORT_WORDS = {
    "batch_size": "b{}",
    "resolution": "{}px",
    "cudnn_benchmark": "bm={}",
    "cudnn_deterministic": "det={}",
    "cudnn_benchmark_limit": "limit={}",
    "cpu_threads": "{}t",
}
#: The axes a comparison's configuration is described by, in reading order.
CONFIG_AXES = schema.AXIS_COLUMNS
#: Always shown in a label, even when they do not vary.
_ALWAYS = ("model", "mode")


def present(value: Any) -> bool:
    return (
        value is not None
        and value is not pd.NA
        and not (isinstance(value, float) and math.isnan(value))
    )


def axis_text(column: str, value: Any, words: dict[str, str] | None = None) -> str:
    if not present(value) or value == "":
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if words is _SHORT_WORDS and column == "memory_format" and value == "channels_last":
        return "cl"
    return (words or _AXIS_WORDS).get(column, "{}").format(value)


def varying(
    frame: pd.DataFrame, columns: Sequence[str], always: Sequence[str] = _ALWAYS
) -> list[str]:
    """The columns of ``columns`` whose value differs between rows (plus ``always``)."""
    out = []
    for col in columns:
        if col not in frame.columns:
            continue
        if col in always or frame[col].astype(str).nunique(dropna=False) > 1:
            out.append(col)
    return out


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


def sort_rows(frame: pd.DataFrame, extra: Sequence[str] = ()) -> pd.DataFrame:
    cols = [c for c in ("fingerprint_id", *extra, *CONFIG_AXES) if c in frame.columns]
    return frame.sort_values(cols, kind="stable", na_position="first").reset_index(drop=True)


def chart_path(kind: str, page: str) -> str:
    return f"{CHARTS}/{kind}-{slug(page)}.svg"


@dataclass(frozen=True)
class Machine:
    """A fingerprint as the pages name it."""

    page: str  # stats' page key (untrusted text; a slug of it names the file)
    machine: str  # machine name from the data (untrusted)
    fingerprint_id: str
    title: str  # safe characters only: headings and navigation
    hardware: str  # GPU name, or CPU model (untrusted)


def machines_of(summary: pd.DataFrame) -> dict[str, Machine]:
    out: dict[str, Machine] = {}
    for row in summary.itertuples(index=False):
        hardware = row.gpu_name or row.cpu_model or "unknown hardware"
        if row.gpu_count and row.gpu_count > 1:
            hardware = f"{row.gpu_count} × {hardware}"
        out[str(row.page)] = Machine(
            page=str(row.page),
            machine=str(row.machine),
            fingerprint_id=str(row.fingerprint_id),
            title=safe_title(f"{row.machine} {str(row.fingerprint_id)[:8]}"),
            hardware=str(hardware),
        )
    return out


def machine_heading(m: Machine) -> str:
    """A section heading for one machine: a slug, so it is safe in the table of contents."""
    return slug(m.page)


def trim(rows: list[Any], limit: int = charts.MAX_ROWS) -> tuple[list[Any], int]:
    """At most ``limit`` rows for a chart, and how many were left out."""
    return rows[:limit], max(len(rows) - limit, 0)


def alt_list(items: Iterable[str], limit: int = 12) -> str:
    items = list(items)
    text = "; ".join(items[:limit])
    if len(items) > limit:
        text += f"; and {len(items) - limit} more in the table below"
    return text


def cell_links(p: Page, page: str, pairs: Sequence[tuple[str, str]]) -> Md:
    """``off · on`` links to the table rows a comparison came from."""
    return Md(" · ".join(p.row_link(text, page, a) for text, a in pairs))


def verdict_counts(verdicts: Iterable[str]) -> dict[str, int]:
    counts = dict.fromkeys(stats.VERDICTS, 0)
    for v in verdicts:
        counts[str(v)] = counts.get(str(v), 0) + 1
    return counts


def span(values: Iterable[float], formatter: Any) -> str:
    """``a`` or ``a to b`` over the finite values (empty when none)."""
    finite = sorted(float(v) for v in values if fmt.present(v))
    if not finite:
        return ""
    low, high = formatter(finite[0]), formatter(finite[-1])
    return low if low == high else f"{low} to {high}"


# ---------------------------------------------------------------------------------------------
# The pages.


@dataclass
class Inputs:
    """Everything computed once and shared by the pages."""

    dataset: Any
    a: stats.Analysis
    machines: dict[str, Machine]
    recs: list[advice.Recommendation]
    decisions: pd.DataFrame
    status: dict[tuple[str, str], str]  # (fingerprint, cell id) → "2 ok, 1 crash"

    def verdict(self, r: Any) -> Md:
        """A comparison's verdict; an insufficient one says what happened to its replicates."""
        badge = verdict_badge(r.verdict)
        if r.verdict != "insufficient":
            return badge
        base = self.status.get((r.fingerprint_id, r.baseline_cell_id), "no rows")
        var = self.status.get((r.fingerprint_id, r.variant_cell_id), "no rows")
        return cat(badge, f" ({r.baseline_value}: {base}; {r.variant_value}: {var})")


def compute(dataset: Any) -> Inputs:
    analysis = stats.analyse(dataset)
    recs = advice.recommend(analysis)
    return Inputs(
        dataset=dataset,
        a=analysis,
        machines=machines_of(analysis.machines),
        recs=recs,
        decisions=advice.decision_table(recs),
        status={
            (str(f), str(c)): str(t)
            for f, c, t in zip(
                analysis.cells["fingerprint_id"],
                analysis.cells["cell_id"],
                analysis.cells["status_summary"],
            )
        },
    )


def render_all(
    dataset: Any, reports_root: Path, writer: Writer, *, prices: Path | None
) -> list[tuple[str, str]]:
    """Render every page; returns the machine pages' navigation entries (title, path)."""
    data = compute(dataset)
    common = {"delta_pct": fmt.pct(stats.DELTA), "confidence_pct": fmt.pct(stats.CONFIDENCE)}
    write_decisions(writer, data.decisions)
    constants_page(writer, common)
    cudnn_page(writer, data, common)
    shapes_page(writer, data, common)
    determinism_page(writer, data, common)
    precision_page(writer, data, common)
    cpu_gpu_page(writer, data, common)
    compare_page(writer, data, common, prices)
    copied = data_page(writer, data, reports_root)
    nav = machine_pages(writer, data, copied)
    home_page(writer, data, common)
    return nav


def constants_page(writer: Writer, common: dict[str, Any]) -> None:
    writer.page(
        f"{GENERATED}/snippets/constants.md",
        "constants.md.j2",
        delta=fmt.pct(stats.DELTA),
        confidence=fmt.pct(stats.CONFIDENCE),
        min_ok=stats.MIN_OK_REPLICATES,
        resamples=f"{stats.N_RESAMPLES:,}",
        seed=stats.SEED,
        **{k: v for k, v in common.items() if k not in ("delta_pct", "confidence_pct")},
    )


def _speedup_rows(
    frame: pd.DataFrame, columns: Sequence[str], *, short: bool = True
) -> list[charts.SpeedupRow]:
    return [
        charts.SpeedupRow(
            label=label(r, columns, short=short),
            speedup=float(r.speedup),
            ci_low=float(r.ci_low) if present(r.ci_low) else math.nan,
            ci_high=float(r.ci_high) if present(r.ci_high) else math.nan,
            verdict=str(r.verdict),
        )
        for r in frame.itertuples(index=False)
    ]


def _ci_words(r: charts.SpeedupRow) -> str:
    ci = f"CI {fmt.ci(r.ci_low, r.ci_high)}, " if math.isfinite(r.ci_low) else ""
    return f"{r.label}: {fmt.ratio(r.speedup)} ({ci}{r.verdict})"


def _speedup_chart(
    frame: pd.DataFrame,
    columns: Sequence[str],
    path: str,
    writer: Writer,
    *,
    title: str,
    xlabel: str,
    what: str,
) -> dict[str, Any] | None:
    """Draw a speedup chart of ``frame``'s comparisons (the first MAX_ROWS with a value)."""
    drawable = frame.loc[frame["speedup"].notna()]
    if drawable.empty:
        return None
    shown = _speedup_rows(drawable.head(charts.MAX_ROWS), columns)
    words = [
        _ci_words(r) for r in _speedup_rows(drawable.head(charts.MAX_ROWS), columns, short=False)
    ]
    writer.chart(charts.speedup_chart, path, shown, title=title, xlabel=xlabel, delta=stats.DELTA)
    return {
        "path": path,
        "alt": f"{what}: " + alt_list(words),
        "left_out": len(drawable) - len(shown),
        "shown": len(shown),
    }


def _comparison_columns(frame: pd.DataFrame, axis: str) -> list[str]:
    return varying(frame, [c for c in CONFIG_AXES if c != axis])


def _by_machine(
    frame: pd.DataFrame, machines: dict[str, Machine]
) -> list[tuple[Machine, pd.DataFrame]]:
    if frame.empty:
        return []
    out = []
    for page, group in frame.groupby("page", sort=True):
        m = machines.get(str(page)) or Machine(
            str(page),
            str(group["machine"].iloc[0]),
            str(group["fingerprint_id"].iloc[0]),
            safe_title(page),
            "",
        )
        out.append((m, group.reset_index(drop=True)))
    return out


#: Comparison tables show at most this many rows per machine; the CSV beside them has all.
TABLE_ROWS = 100
COMPARISONS = f"{DATA}/comparisons"


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
    writer: Writer, name: str, frame: pd.DataFrame, extra: Sequence[str] = ()
) -> str:
    """Every comparison of a page as a CSV next to the data files; returns its path."""
    path = f"{COMPARISONS}/{name}.csv"
    columns = [c for c in (*_CSV_COLUMNS, *extra) if c in frame.columns]
    writer.text(path, frame[columns].to_csv(index=False, lineterminator="\n"))
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


def _machine_ctx(p: Page, m: Machine) -> dict[str, Any]:
    return {
        "heading": machine_heading(m),
        "link": p.machine_link(m.machine, m.page),
        "hardware": m.hardware,
    }


# --- cudnn.benchmark ---------------------------------------------------------------------------


def cudnn_page(writer: Writer, data: Inputs, common: dict[str, Any]) -> None:
    here = f"{GENERATED}/cudnn-benchmark.md"
    p = Page(here)
    sections = []
    costs = data.a.benchmark
    csv = (
        write_comparisons(
            writer,
            "cudnn-benchmark",
            costs,
            (
                "extra_cold_pass_s",
                "saving_per_iter_s",
                "break_even_iters",
                "break_even_iters_low",
                "break_even_iters_high",
                "extra_cold_peak_mem_reserved_bytes",
                "extra_peak_mem_reserved_bytes",
            ),
        )
        if len(costs)
        else ""
    )
    for m, group in _by_machine(costs, data.machines):
        group = sort_rows(group)
        cols = _comparison_columns(group, "cudnn_benchmark")
        counts = verdict_counts(group["verdict"])
        faster = group.loc[group["verdict"] == "faster"]
        speed_rows = []
        cost_rows = []
        memory_rows = []
        for r in group.head(TABLE_ROWS).itertuples(index=False):
            name = label(r, cols)
            links = cell_links(p, r.page, [("off", r.baseline_anchor), ("on", r.variant_anchor)])
            speed_rows.append(
                [
                    name,
                    fmt.ratio(r.speedup),
                    fmt.ci(r.ci_low, r.ci_high),
                    data.verdict(r),
                    f"{fmt.seconds(r.base_median_s)} → {fmt.seconds(r.var_median_s)}",
                    f"{r.n_base} / {r.n_var}",
                    links,
                ]
            )
            cost_rows.append(
                [
                    name,
                    fmt.signed_seconds(r.extra_cold_pass_s),
                    fmt.signed_seconds(r.saving_per_iter_s),
                    _break_even_text(r),
                    _break_even_range(r.break_even_iters_low, r.break_even_iters_high, r.verdict)
                    if _pays_back(r)
                    else fmt.MISSING,
                    links,
                ]
            )
            memory_rows.append(
                [
                    name,
                    fmt.bytes_(r.extra_cold_peak_mem_reserved_bytes, signed=True),
                    fmt.bytes_(r.extra_cold_peak_mem_allocated_bytes, signed=True),
                    fmt.bytes_(r.extra_peak_mem_reserved_bytes, signed=True),
                    fmt.bytes_(r.extra_peak_mem_allocated_bytes, signed=True),
                    links,
                ]
            )
        speed_chart = _speedup_chart(
            group,
            cols,
            chart_path("cudnn-speedup", m.page),
            writer,
            title=f"cudnn.benchmark on vs off: {m.title}",
            xlabel="steady-state speedup with benchmark on (> 1 is faster), 95% CI",
            what=f"Steady-state speedup from cudnn.benchmark on {m.title}",
        )
        be = [
            r
            for r in group.itertuples(index=False)
            if r.verdict != "insufficient" and present(r.break_even_iters)
        ]
        be_chart = None
        if be:
            be_rows = [
                charts.BreakEvenRow(
                    label(r, cols, short=True),
                    float(r.break_even_iters) if _pays_back(r) else None,
                    _no_pay_back(r),
                )
                for r in be
            ]
            shown, left_out = trim(be_rows)
            path = chart_path("cudnn-break-even", m.page)
            writer.chart(
                charts.break_even_chart, path, shown, title=f"cudnn.benchmark break-even: {m.title}"
            )
            be_chart = {
                "path": path,
                "left_out": left_out,
                "shown": len(shown),
                "alt": f"Iterations until cudnn.benchmark repays its cold-pass cost on {m.title}: "
                + alt_list(
                    f"{r.label}: "
                    + (r.note if r.iterations is None else fmt.iterations(r.iterations))
                    for r in shown
                ),
            }
        sections.append(
            {
                **_machine_ctx(p, m),
                "counts": counts,
                "total": len(group),
                "faster_span": span(faster["speedup"], fmt.ratio),
                "faster_saved": span(faster["speedup"].map(fmt.saved), fmt.pct),
                "break_even_span": span(
                    faster["break_even_iters"].replace(math.inf, math.nan), fmt.iterations
                ),
                "never": int(
                    (
                        group["verdict"].isin(["slower", "no clear difference"])
                        & group["break_even_iters"].eq(math.inf)
                    ).sum()
                ),
                "memory_span": span(faster["extra_cold_peak_mem_reserved_bytes"], fmt.bytes_),
                "speed_table": table(
                    [
                        "Configuration",
                        "Speedup",
                        "95% CI",
                        "Verdict",
                        "Step time off → on",
                        "ok replicates (off / on)",
                        "Rows",
                    ],
                    speed_rows,
                ),
                "cost_table": table(
                    [
                        "Configuration",
                        "Extra cold-pass time",
                        "Saving per step",
                        "Break-even (iterations)",
                        "Range from the CI",
                        "Rows",
                    ],
                    cost_rows,
                ),
                "memory_table": table(
                    [
                        "Configuration",
                        "Cold pass: extra reserved",
                        "Cold pass: extra allocated",
                        "Steady: extra reserved",
                        "Steady: extra allocated",
                        "Rows",
                    ],
                    memory_rows,
                ),
                "speed_chart": speed_chart,
                "more": more_rows(p, len(group), csv),
                "be_chart": be_chart,
            }
        )
    # Machines with an answer first; those with only insufficient comparisons after them.
    sections.sort(key=lambda s: s["counts"]["insufficient"] == s["total"])
    writer.page(
        here,
        "cudnn-benchmark.md.j2",
        p=p,
        sections=sections,
        recs=_recs_for(data, "cudnn.benchmark", p),
        **common,
    )


def _pays_back(r: Any) -> bool:
    """Only a clearly faster configuration has a break-even worth quoting."""
    return r.verdict == "faster" and fmt.present(r.break_even_iters)


def _no_pay_back(r: Any) -> str:
    if r.verdict == "slower":
        return "never pays back (slower)"
    if r.verdict == "no clear difference":
        return "no clear saving to repay it"
    return "never pays back (no saving)"


def _break_even_text(r: Any) -> str:
    if r.verdict == "insufficient" or not (
        fmt.present(r.break_even_iters) or _is_inf(r.break_even_iters)
    ):
        return fmt.MISSING
    if not _pays_back(r):
        return _no_pay_back(r)
    if float(r.break_even_iters) <= 0:
        return "immediately (no extra cold cost)"
    return fmt.iterations(r.break_even_iters)


def _break_even_range(low: Any, high: Any, verdict: str) -> str:
    if verdict == "insufficient":
        return fmt.MISSING

    def one(v: Any) -> str:
        if _is_inf(v):
            return "never"
        return fmt.iterations(v) if fmt.present(v) else fmt.MISSING

    a, b = one(low), one(high)
    return a if a == b else f"{a} to {b}"


def _is_inf(value: Any) -> bool:
    try:
        return math.isinf(float(value))
    except (TypeError, ValueError):
        return False


# --- Dynamic shapes ----------------------------------------------------------------------------


def shapes_page(writer: Writer, data: Inputs, common: dict[str, Any]) -> None:
    here = f"{GENERATED}/dynamic-shapes.md"
    p = Page(here)
    sections = []
    csv = (
        write_comparisons(
            writer,
            "dynamic-shapes",
            data.a.shapes,
            (
                "shape_count",
                "slowdown",
                "slowdown_ci_low",
                "slowdown_ci_high",
                "penalty_per_shape_s",
                "extra_cold_per_new_shape_s",
                "penalty_vs_bm_off_s",
            ),
        )
        if len(data.a.shapes)
        else ""
    )
    for m, group in _by_machine(data.a.shapes, data.machines):
        group = sort_rows(group)
        cols = _comparison_columns(group, "shapes")
        rows = []
        for r in group.head(TABLE_ROWS).itertuples(index=False):
            shape = (
                f"{r.variant_value} ({r.shape_count} shapes)"
                if present(r.shape_count)
                else str(r.variant_value)
            )
            rows.append(
                [
                    label(r, cols),
                    shape,
                    fmt.ratio(r.slowdown),
                    fmt.ci(r.slowdown_ci_low, r.slowdown_ci_high),
                    data.verdict(r),
                    fmt.seconds(r.penalty_per_shape_s),
                    fmt.seconds(r.extra_cold_per_new_shape_s),
                    fmt.signed_seconds(r.penalty_vs_bm_off_s)
                    if present(r.penalty_vs_bm_off_s)
                    else fmt.MISSING,
                    cell_links(
                        p,
                        r.page,
                        [("static", r.baseline_anchor), (str(r.variant_value), r.variant_anchor)],
                    ),
                ]
            )
        chart_cols = [*cols, "variant_value"]
        chart_frame = group.assign(variant_value=group["variant_value"].astype(str))
        chart = _speedup_chart(
            chart_frame,
            chart_cols,
            chart_path("shapes", m.page),
            writer,
            title=f"Throughput vs static shapes: {m.title}",
            xlabel="throughput relative to static shapes (< 1 is slower), 95% CI",
            what=f"Throughput of dynamic and ragged shapes relative to static on {m.title}",
        )
        sections.append(
            {
                **_machine_ctx(p, m),
                "more": more_rows(p, len(group), csv),
                "chart": chart,
                "table": table(
                    [
                        "Configuration",
                        "Shapes",
                        "Time per FLOP vs static",
                        "95% CI",
                        "Verdict",
                        "Cold cost per new shape",
                        "Extra cold time per extra shape",
                        "New-shape cost vs benchmark off",
                        "Rows",
                    ],
                    rows,
                ),
            }
        )
    writer.page(
        here,
        "dynamic-shapes.md.j2",
        p=p,
        sections=sections,
        recs=_recs_for(data, "cudnn.benchmark", p, shapes_only=True),
        **common,
    )


# --- Determinism -------------------------------------------------------------------------------


def _equal_text(n_checks: Any, equal: Any, diff: Any) -> str:
    if not n_checks:
        return "not checked"
    if equal is pd.NA or equal is None:
        return "no ok check"
    if bool(equal):
        return "bitwise equal"
    return f"differs (max |Δ| {fmt.num(diff)})"


def determinism_page(writer: Writer, data: Inputs, common: dict[str, Any]) -> None:
    here = f"{GENERATED}/determinism.md"
    p = Page(here)
    sections = []
    repro_by_page = (
        {str(k): g for k, g in data.a.repro.groupby("page")} if len(data.a.repro) else {}
    )
    pages = (
        sorted(set(data.a.determinism["page"].astype(str)) | set(repro_by_page))
        if len(data.a.determinism)
        else sorted(repro_by_page)
    )
    det = data.a.determinism
    csv = (
        write_comparisons(
            writer,
            "determinism",
            det,
            ("base_bitwise_equal", "var_bitwise_equal", "base_max_abs_diff", "var_max_abs_diff"),
        )
        if len(det)
        else ""
    )
    for page in pages:
        m = data.machines.get(page) or Machine(page, page, "", safe_title(page), "")
        group = (
            sort_rows(data.a.determinism.loc[data.a.determinism["page"] == page])
            if len(data.a.determinism)
            else pd.DataFrame()
        )
        rows = []
        chart = None
        if len(group):
            cols = _comparison_columns(group, "cudnn_deterministic")
            for r in group.head(TABLE_ROWS).itertuples(index=False):
                rows.append(
                    [
                        label(r, cols),
                        fmt.ratio(r.speedup),
                        fmt.ci(r.ci_low, r.ci_high),
                        data.verdict(r),
                        fmt.change(r.speedup) if r.verdict != "insufficient" else fmt.MISSING,
                        _equal_text(r.base_n_checks, r.base_bitwise_equal, r.base_max_abs_diff),
                        _equal_text(r.var_n_checks, r.var_bitwise_equal, r.var_max_abs_diff),
                        cell_links(
                            p, r.page, [("off", r.baseline_anchor), ("on", r.variant_anchor)]
                        ),
                    ]
                )
            chart = _speedup_chart(
                group,
                cols,
                chart_path("determinism", m.page),
                writer,
                title=f"deterministic on vs off: {m.title}",
                xlabel="speed with cudnn.deterministic on (< 1 is slower), 95% CI",
                what=f"Speed of cudnn.deterministic on relative to off on {m.title}",
            )
        checks = []
        rep = repro_by_page.get(page)
        if rep is not None:
            rep = sort_rows(rep)
            cols = varying(rep, list(CONFIG_AXES))
            for r in rep.itertuples(index=False):
                checks.append(
                    [
                        label(r, cols),
                        _equal_text(r.n_ok_checks, r.bitwise_equal, r.max_abs_diff),
                        str(r.status_summary),
                        p.row_link("check", r.page, r.anchor),
                    ]
                )
        sections.append(
            {
                **_machine_ctx(p, m),
                "more": more_rows(p, len(group), csv),
                "chart": chart,
                "table": table(
                    [
                        "Configuration",
                        "Speed, on vs off",
                        "95% CI",
                        "Verdict",
                        "Time",
                        "Re-run, deterministic off",
                        "Re-run, deterministic on",
                        "Rows",
                    ],
                    rows,
                )
                if rows
                else None,
                "checks": table(["Configuration", "Two fresh processes", "Status", "Row"], checks)
                if checks
                else None,
            }
        )
    writer.page(
        here,
        "determinism.md.j2",
        p=p,
        sections=sections,
        recs=_recs_for(data, "cudnn.deterministic", p),
        **common,
    )


# --- Precision & memory format ------------------------------------------------------------------


def precision_page(writer: Writer, data: Inputs, common: dict[str, Any]) -> None:
    here = f"{GENERATED}/precision.md"
    p = Page(here)
    tf32 = (
        data.a.cells.set_index(["fingerprint_id", "cell_id"])["eff_cudnn_allow_tf32"]
        if len(data.a.cells)
        else pd.Series(dtype=str)
    )

    def math_of(fp: str, cell_id: str, device: str) -> str:
        if device != "cuda":
            return "fp32"
        flag = tf32.get((fp, cell_id), "")
        return {"true": "TF32 allowed", "false": "strict FP32"}.get(str(flag), "unknown")

    def sections_for(
        frame: pd.DataFrame, axis: str, kind: str, title: str, xlabel: str
    ) -> list[dict[str, Any]]:
        out = []
        csv = write_comparisons(writer, kind, frame) if len(frame) else ""
        for m, group in _by_machine(frame, data.machines):
            group = sort_rows(group, extra=["variant_value"])
            cols = _comparison_columns(group, axis)
            chart_frame = group.assign(variant_value=group["variant_value"].astype(str))
            rows = []
            for r in group.head(TABLE_ROWS).itertuples(index=False):
                row = [label(r, cols), str(r.variant_value)]
                if axis == "precision":
                    row.append(math_of(r.fingerprint_id, r.baseline_cell_id, r.device))
                row += [
                    fmt.ratio(r.speedup),
                    fmt.ci(r.ci_low, r.ci_high),
                    data.verdict(r),
                    f"{fmt.seconds(r.base_median_s)} → {fmt.seconds(r.var_median_s)}",
                    cell_links(
                        p,
                        r.page,
                        [
                            (str(r.baseline_value), r.baseline_anchor),
                            (str(r.variant_value), r.variant_anchor),
                        ],
                    ),
                ]
                rows.append(row)
            headers = ["Configuration", "Variant"]
            if axis == "precision":
                headers.append("fp32 baseline convolutions")
            headers += ["Speedup", "95% CI", "Verdict", "Step time", "Rows"]
            chart = _speedup_chart(
                chart_frame,
                [*cols, "variant_value"],
                chart_path(kind, m.page),
                writer,
                title=f"{title}: {m.title}",
                xlabel=xlabel,
                what=f"{title} on {m.title}",
            )
            out.append(
                {
                    **_machine_ctx(p, m),
                    "chart": chart,
                    "table": table(headers, rows),
                    "more": more_rows(p, len(group), csv),
                }
            )
        return out

    precision = sections_for(
        data.a.comparisons["precision"],
        "precision",
        "precision",
        "Precision vs fp32",
        "speedup over fp32 (> 1 is faster), 95% CI",
    )
    layout = sections_for(
        data.a.comparisons["memory_format"],
        "memory_format",
        "memory-format",
        "channels_last vs nchw",
        "speedup over nchw (> 1 is faster), 95% CI",
    )
    writer.page(
        here,
        "precision.md.j2",
        p=p,
        precision=precision,
        layout=layout,
        recs=_merge(_recs_for(data, "precision", p), _recs_for(data, "memory_format", p)),
        **common,
    )


# --- CPU vs GPU --------------------------------------------------------------------------------


def cpu_gpu_page(writer: Writer, data: Inputs, common: dict[str, Any]) -> None:
    here = f"{GENERATED}/cpu-vs-gpu.md"
    p = Page(here)
    sections = []
    cross_by_page = (
        {str(k): g for k, g in data.a.crossovers.groupby("page")} if len(data.a.crossovers) else {}
    )
    cpu_gpu = data.a.cpu_gpu
    csv = (
        write_comparisons(
            writer, "cpu-vs-gpu", cpu_gpu, ("base_samples_per_s", "var_samples_per_s")
        )
        if len(cpu_gpu)
        else ""
    )
    for m, group in _by_machine(cpu_gpu, data.machines):
        group = sort_rows(group)
        curve_cols = varying(
            group, [c for c in stats.CURVE_KEY if c not in ("fingerprint_id", "machine", "page")]
        )
        points = [
            charts.SeriesPoint(
                label(r, curve_cols),
                float(r.batch_size),
                float(r.speedup),
                float(r.ci_low) if present(r.ci_low) else math.nan,
                float(r.ci_high) if present(r.ci_high) else math.nan,
            )
            for r in group.itertuples(index=False)
            if present(r.speedup) and present(r.batch_size) and r.verdict != "insufficient"
        ]
        chart = None
        if points:
            series = sorted({pt.series for pt in points})
            keep = set(series[: len(charts.PALETTE) * 2])
            path = chart_path("cpu-vs-gpu", m.page)
            writer.chart(
                charts.lines_chart,
                path,
                [pt for pt in points if pt.series in keep],
                title=f"GPU over CPU: {m.title}",
                xlabel="batch size",
                ylabel="GPU speedup over CPU (95% CI)",
                reference_label="above: GPU faster",
            )
            chart = {
                "path": path,
                "left_out": len(series) - len(keep),
                "shown": len(keep),
                "alt": f"GPU speedup over the CPU by batch size on {m.title}: "
                + alt_list(
                    f"{pt.series} at batch {pt.x:g}: {fmt.ratio(pt.y)}"
                    for pt in points
                    if pt.series in keep
                ),
            }
        cross_rows = []
        cross = cross_by_page.get(m.page)
        if cross is not None:
            for r in cross.itertuples(index=False):
                at = ", ".join(
                    f"{b}: {fmt.ratio(s)} ({v})"
                    for b, s, v in zip(r.batches, r.speedups, r.verdicts)
                )
                cross_rows.append(
                    [
                        label(r, curve_cols),
                        f"GPU faster from batch {r.crossover_batch}"
                        if present(r.crossover_batch)
                        else "GPU not clearly faster at any measured batch from there up",
                        at,
                    ]
                )
        rows = []
        for r in group.head(TABLE_ROWS).itertuples(index=False):
            rows.append(
                [
                    label(r, curve_cols),
                    axis_text("batch_size", r.batch_size),
                    fmt.rate(r.base_samples_per_s),
                    fmt.rate(r.var_samples_per_s),
                    fmt.ratio(r.speedup),
                    fmt.ci(r.ci_low, r.ci_high),
                    data.verdict(r),
                    cell_links(p, r.page, [("cpu", r.baseline_anchor), ("gpu", r.variant_anchor)]),
                ]
            )
        sections.append(
            {
                **_machine_ctx(p, m),
                "more": more_rows(p, len(group), csv),
                "chart": chart,
                "crossover": table(["Curve", "Crossover", "Speedup by batch (verdict)"], cross_rows)
                if cross_rows
                else None,
                "table": table(
                    ["Curve", "Batch", "CPU", "GPU", "GPU speedup", "95% CI", "Verdict", "Rows"],
                    rows,
                ),
            }
        )
    writer.page(
        here,
        "cpu-vs-gpu.md.j2",
        p=p,
        sections=sections,
        recs=_recs_for(data, "device", p),
        **common,
    )


# --- Machines ----------------------------------------------------------------------------------


def flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """A nested env.json as (dotted key, text) pairs, keys sorted."""
    out: list[tuple[str, str]] = []
    if isinstance(value, dict):
        for key in sorted(value, key=str):
            out += flatten(value[key], f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list):
        if not value:
            out.append((prefix, "(none)"))
        for i, item in enumerate(value):
            out += flatten(item, f"{prefix}[{i}]")
    else:
        text = (
            "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
        )
        out.append((prefix, text))
    return out


_CELL_ORDER = ["kind", *CONFIG_AXES, "cell_id"]
CELL_HEADERS = (
    "Cell",
    "Status",
    "ok / total",
    "Step time (median)",
    "IQR",
    "CV",
    "Throughput",
    "Cold pass",
    "Peak memory",
    "Achieved",
    "% of peak",
)
FAILURE_HEADERS = ("Cell", "Replicate", "Status", "Reason", "Run", "Source line")


def cells_fragment(cells: pd.DataFrame) -> str:
    """Every cell of one machine as an HTML table, each row a link target ``#cell-<id>``.

    HTML rather than Markdown because a machine can have tens of thousands of cells (see
    :mod:`bench.report.mkdocs_hooks`); every value is escaped with ``html_text``.
    """
    rows = []
    for c in cells.itertuples(index=False):
        memory = (
            c.peak_mem_reserved_bytes if present(c.peak_mem_reserved_bytes) else c.peak_rss_bytes
        )
        if c.kind == "ceiling":
            throughput = (
                f"{fmt.num(c.achieved_tflops)} TFLOP/s"
                if present(c.achieved_tflops)
                else f"{fmt.num(c.achieved_gbps)} GB/s"
                if present(c.achieved_gbps)
                else fmt.MISSING
            )
        else:
            throughput = fmt.rate(c.samples_per_s)
        ident = attr(anchor(c.anchor))
        rows.append(
            [
                f'<a class="tk-anchor" id="{ident}" href="#{ident}">'
                f"{html_text(c.cell_name, limit=160)}</a>",
                html_text(c.status_summary or "no rows"),
                html_text(
                    f"{c.n_ok} / {c.n_total}" + (" (insufficient)" if c.insufficient else "")
                ),
                html_text(fmt.seconds(c.steady_median_s)),
                html_text(fmt.seconds(c.iqr_s)),
                html_text(fmt.pct(c.cv)),
                html_text(throughput),
                html_text(fmt.seconds(c.cold_pass_s)),
                html_text(fmt.bytes_(memory)),
                html_text(fmt.tflops(c.achieved_tflops) if c.kind == "model" else fmt.MISSING),
                html_text(fmt.pct(c.pct_of_peak / 100) if present(c.pct_of_peak) else fmt.MISSING),
            ]
        )
    return html_table(CELL_HEADERS, rows)


def failures_fragment(failed: pd.DataFrame) -> str:
    """Every replicate that did not end ok, with its reason, as an HTML table."""
    rows = []
    for f in failed.itertuples(index=False):
        target = attr(anchor(f"repro-{f.cell_id}" if f.kind == "repro" else f"cell-{f.cell_id}"))
        rows.append(
            [
                f'<a href="#{target}">{html_text(f.cell_name, limit=160)}</a>',
                html_text(f.replicate if present(f.replicate) else fmt.MISSING),
                html_text(f.status),
                html_text(f.reason or fmt.MISSING, limit=600),
                html_text(f.run_id),
                html_text(f"{f.source}:{f.line}"),
            ]
        )
    return html_table(FAILURE_HEADERS, rows)


def machine_pages(writer: Writer, data: Inputs, copied: set[Path]) -> list[tuple[str, str]]:
    nav = []
    runs_by_fp: dict[str, list[Any]] = {}
    for run in data.dataset.runs:
        runs_by_fp.setdefault(str(run.fingerprint_id), []).append(run)
    results = data.dataset.results
    index_rows = []
    index_p = Page(f"{GENERATED}/machines/index.md")
    for row in data.a.machines.itertuples(index=False):
        m = data.machines[str(row.page)]
        here = machine_file(m.page)
        p = Page(here)
        fp = m.fingerprint_id
        env = data.dataset.envs.get(fp)
        flags = env.get("flag_defaults", {}) if isinstance(env, dict) else {}
        env_rows = [
            [k, v]
            for k, v in flatten({k: v for k, v in (env or {}).items() if k != "flag_defaults"})
        ]
        flag_rows = [[k, v] for k, v in flatten(flags)] if isinstance(flags, dict) else []
        cells = data.a.cells.loc[data.a.cells["fingerprint_id"] == fp]
        cells = cells.sort_values(_CELL_ORDER, kind="stable", na_position="first")
        mine = results.loc[(results["fingerprint_id"] == fp) & (results["status"] != "ok")]
        mine = mine.sort_values(["kind", "cell_name", "replicate", "run_id"], kind="stable")
        name = slug(m.page)
        writer.text(f"{FRAGMENTS}/{name}-cells.html", cells_fragment(cells))
        if len(mine):
            writer.text(f"{FRAGMENTS}/{name}-failures.html", failures_fragment(mine))
        repro_rows = []
        rep = data.a.repro.loc[data.a.repro["fingerprint_id"] == fp]
        for r in rep.itertuples(index=False):
            repro_rows.append(
                [
                    cat(row_anchor(r.anchor), md(r.cell_name, limit=160)),
                    _equal_text(r.n_ok_checks, r.bitwise_equal, r.max_abs_diff),
                    str(r.status_summary),
                    p.link("timed cell", here, r.cell_anchor)
                    if r.cell_anchor in set(cells["anchor"])
                    else fmt.MISSING,
                ]
            )
        ceil = data.a.ceilings.loc[data.a.ceilings["fingerprint_id"] == fp]
        ceil_rows = [
            [
                str(c.op),
                str(c.device),
                f"{fmt.num(c.achieved)} {c.unit}",
                f"{fmt.num(c.ci_low)}–{fmt.num(c.ci_high)} {c.unit}"
                if present(c.ci_low)
                else fmt.MISSING,
                str(c.status_summary),
                p.link("row", here, c.anchor),
            ]
            for c in ceil.itertuples(index=False)
        ]
        runs = []
        for run in sorted(runs_by_fp.get(fp, []), key=lambda r: str(r.results)):
            runs.append(
                [
                    str(run.run_id),
                    p.link("results.csv", _data_rel(run.results)),
                    p.link("samples.csv", _data_rel(run.samples))
                    if run.samples in copied
                    else fmt.MISSING,
                    p.link("env.json", _data_rel(run.env)) if run.env in copied else fmt.MISSING,
                ]
            )
        writer.page(
            here,
            "machine.md.j2",
            p=p,
            title=m.title,
            machine=m.machine,
            hardware=m.hardware,
            fingerprint=fp,
            summary=row,
            n_ok=int(row.n_ok),
            n_failed=int(row.n_failed),
            n_rows=int(row.n_rows),
            n_cells=int(row.n_cells),
            runs=table(["Run", "Results", "Samples", "Environment"], runs),
            env=table(["Key", "Value"], env_rows) if env_rows else None,
            flags=table(["Flag", "Default"], flag_rows) if flag_rows else None,
            ceilings=table(["Op", "Device", "Measured", "95% CI", "Status", "Row"], ceil_rows)
            if ceil_rows
            else None,
            cells=fragment_placeholder(f"{name}-cells"),
            failures=fragment_placeholder(f"{name}-failures") if len(mine) else None,
            n_failures=len(mine),
            repro=table(
                ["Configuration", "Two fresh processes", "Status", "Timed cell"], repro_rows
            )
            if repro_rows
            else None,
        )
        nav.append((m.title, here))
        index_rows.append(
            [
                index_p.machine_link(m.title, m.page),
                m.machine,
                m.hardware,
                str(row.cpu_model),
                str(row.torch_version),
                str(row.n_runs),
                str(row.n_cells),
                f"{row.n_ok} ok, {row.n_failed} not ok",
            ]
        )
    writer.page(
        f"{GENERATED}/machines/index.md",
        "machines-index.md.j2",
        table=table(
            ["Page", "Machine", "Hardware", "CPU", "torch", "Runs", "Cells", "Replicates"],
            index_rows,
        )
        if index_rows
        else None,
    )
    return nav


# --- Data downloads ----------------------------------------------------------------------------


def _data_rel(rel: Path) -> str:
    parts = [slug(part) for part in Path(rel).parent.parts]
    return "/".join([DATA, *parts, Path(rel).name])


def data_page(writer: Writer, data: Inputs, reports_root: Path) -> set[Path]:
    """Copy every run's files into the site and list them; returns the copied paths."""
    here = f"{GENERATED}/data.md"
    p = Page(here)
    copied: set[Path] = set()
    rows = []
    counts = (
        data.dataset.results.groupby("source").size().to_dict() if len(data.dataset.results) else {}
    )
    for run in sorted(data.dataset.runs, key=lambda r: str(r.results)):
        links = []
        for rel, name in (
            (run.results, schema.RESULTS_FILE),
            (run.samples, schema.SAMPLES_FILE),
            (run.env, schema.ENV_FILE),
        ):
            source = reports_root / rel
            if source.is_file():
                writer.copy(source, _data_rel(rel))
                copied.add(rel)
                links.append(p.link(name, _data_rel(rel)))
            else:
                links.append(Md(md(f"{name} missing")))
        page = stats.page_slug(run.machine, run.fingerprint_id)
        machine = p.machine_link(run.machine, page) if page in data.machines else md(run.machine)
        rows.append(
            [
                machine,
                str(run.run_id),
                str(run.fingerprint_id)[:12],
                str(counts.get(Path(run.results).as_posix(), 0)),
                *links,
            ]
        )
    writer.page(
        here,
        "data.md.j2",
        p=p,
        table=table(
            ["Machine", "Run", "Fingerprint", "Result rows", "Results", "Samples", "Environment"],
            rows,
        )
        if rows
        else None,
        skipped=len(data.dataset.skipped),
        computed=[
            p.link(path.name, f"{COMPARISONS}/{path.name}")
            for path in sorted(writer.written)
            if path.parent.as_posix().endswith(COMPARISONS) and path.suffix == ".csv"
        ],
    )
    return copied


# --- Compare machines --------------------------------------------------------------------------


def compare_page(writer: Writer, data: Inputs, common: dict[str, Any], prices: Path | None) -> None:
    here = f"{GENERATED}/compare.md"
    p = Page(here)
    summary = data.a.machines
    ms = [data.machines[str(pg)] for pg in summary["page"]] if len(summary) else []
    side = None
    if ms:
        fields = [
            ("Machine", lambda r: str(r.machine)),
            (
                "GPU",
                lambda r: (
                    (f"{r.gpu_count} × " if r.gpu_count > 1 else "") + str(r.gpu_name)
                    if r.gpu_name
                    else "none"
                ),
            ),
            ("CPU", lambda r: str(r.cpu_model)),
            ("torch", lambda r: str(r.torch_version)),
            ("torchvision", lambda r: str(r.torchvision_version)),
            ("CUDA", lambda r: str(r.cuda_version) or fmt.MISSING),
            ("cuDNN", lambda r: str(r.cudnn_version) or fmt.MISSING),
            ("Python", lambda r: str(r.python_version)),
            ("OS", lambda r: str(r.os)),
            ("Runs", lambda r: str(r.n_runs)),
            ("Cells", lambda r: str(r.n_cells)),
            ("Replicates ok / not ok", lambda r: f"{r.n_ok} / {r.n_failed}"),
        ]
        rows = [[name, *[get(r) for r in summary.itertuples(index=False)]] for name, get in fields]
        side = table(["", *[p.machine_link(m.title, m.page) for m in ms]], rows)
    best = data.a.best
    throughput = None
    if len(best) and ms:
        key = stats.WORKLOAD_KEY
        workloads = best[key].drop_duplicates().sort_values(key, kind="stable")
        lookup = {
            (str(r.page), *[getattr(r, k) for k in key]): r for r in best.itertuples(index=False)
        }
        cols = varying(workloads, key)
        rows = []
        for w in workloads.itertuples(index=False):
            values = [getattr(w, k) for k in key]
            row: list[Any] = [label(w, cols)]
            for m in ms:
                hit = lookup.get((m.page, *values))
                row.append(
                    fmt.MISSING
                    if hit is None
                    else cat(
                        p.row_link(fmt.rate(hit.samples_per_s), m.page, hit.anchor),
                        f" ({hit.device})",
                    )
                )
            rows.append(row)
        throughput = table(["Workload", *[p.machine_link(m.title, m.page) for m in ms]], rows)
    per_dollar = None
    unmatched: list[str] = []
    if prices is not None:
        from bench.report import prices as price_mod

        table_prices = price_mod.load_prices(prices)
        unmatched = price_mod.unknown_keys(
            table_prices, [m.machine for m in ms], [m.page for m in ms]
        )
        if len(best):
            priced = price_mod.per_dollar(best, table_prices)
            priced = priced.sort_values(
                [*stats.WORKLOAD_KEY, "images_per_s_per_usd", "page"],
                ascending=[True] * len(stats.WORKLOAD_KEY) + [False, True],
                kind="stable",
                na_position="last",
            )
            cols = varying(priced, stats.WORKLOAD_KEY) if len(priced) else []
            rows = [
                [
                    label(r, cols),
                    p.machine_link(r.machine, r.page),
                    p.row_link(fmt.rate(r.samples_per_s), r.page, r.anchor),
                    f"${fmt.num(r.price_usd)}" if fmt.present(r.price_usd) else fmt.MISSING,
                    fmt.num(r.images_per_s_per_usd, 3)
                    if fmt.present(r.images_per_s_per_usd)
                    else fmt.MISSING,
                    f"${fmt.num(r.usd_per_hour)}/h" if fmt.present(r.usd_per_hour) else fmt.MISSING,
                    fmt.num(r.images_per_usd) if fmt.present(r.images_per_usd) else fmt.MISSING,
                    r.price_note or "",
                ]
                for r in priced.itertuples(index=False)
            ]
            if rows:
                per_dollar = table(
                    [
                        "Workload",
                        "Machine",
                        "Throughput",
                        "Price",
                        "images/s per $",
                        "Rental",
                        "images per $ of rental",
                        "Note",
                    ],
                    rows,
                )
    writer.page(
        here,
        "compare.md.j2",
        p=p,
        side=side,
        throughput=throughput,
        per_dollar=per_dollar,
        prices_given=prices is not None,
        unmatched=unmatched,
        n_machines=len(ms),
        **common,
    )


# --- Home --------------------------------------------------------------------------------------


def _undecided(r: advice.Recommendation, p: Page) -> Md:
    """A workload without enough ok replicates to decide: what, where, and its rows."""
    return cat(sentences.workload(r), " on ", p.machine_link(r.machine, r.page), " (",
               sentences.evidence_links(p, r.evidence), ")")


def _recs_for(data: Inputs, setting: str, p: Page, *, shapes_only: bool = False) -> dict[str, Any]:
    """One setting's recommendations: sentences, and the regimes without enough data."""
    said: list[Md] = []
    unknown: list[Md] = []
    for regime in sentences.regimes(data.recs):
        r = regime.main
        if r.setting != setting or (shapes_only and r.shapes == "static"):
            continue
        if r.action == advice.INSUFFICIENT:
            unknown.append(_undecided(r, p))
        else:
            said.append(sentences.sentence(regime, p, with_setting=False))
    hidden = max(len(said) - RECS_SHOWN, 0) + max(len(unknown) - RECS_SHOWN, 0)
    more = None
    if hidden:
        more = cat(
            f"{hidden:,} more workloads are not listed here; every decision is in ",
            p.link("decisions.csv", DECISIONS_CSV),
            ".",
        )
    return {"said": said[:RECS_SHOWN], "unknown": unknown[:RECS_SHOWN], "more": more}


#: Recommendation sentences (and "not enough data" entries) listed per page; the rest are in
#: the decisions CSV.
RECS_SHOWN = 50
#: Rows per setting in the home page's decision table.
DECISION_ROWS = 40
DECISIONS_CSV = f"{COMPARISONS}/decisions.csv"


def write_decisions(writer: Writer, decisions: pd.DataFrame) -> None:
    """advice.decision_table as CSV (tuples written as text) for the pages that cap their lists."""
    frame = decisions.copy()
    for col in ("caveats", "evidence"):
        if col in frame.columns:
            frame[col] = frame[col].map(
                lambda t: " ".join(
                    "/".join(map(str, x)) if isinstance(x, tuple) else str(x) for x in t
                )
            )
    writer.text(DECISIONS_CSV, frame.to_csv(index=False, lineterminator="\n"))


def _merge(*parts: dict[str, Any]) -> dict[str, Any]:
    merged = {key: [item for part in parts for item in part[key]] for key in ("said", "unknown")}
    return {**merged, "more": next((part["more"] for part in parts if part["more"]), None)}


#: Decision-table sections on the home page: (setting, heading, what is compared).
_DECISION_SECTIONS = (
    ("cudnn.benchmark", "cudnn.benchmark", "off → on"),
    ("cudnn.deterministic", "cudnn.deterministic", "off → on"),
    ("precision", "Precision", "fp32 → variant"),
    ("memory_format", "Memory format", "nchw → channels_last"),
    ("device", "CPU or GPU", "this machine's CPU → its GPU"),
)


def decision_tables(data: Inputs, p: Page) -> list[dict[str, Any]]:
    """The home page's decision table, one table per setting."""
    groups = sentences.regimes(data.recs)
    out = []
    for setting, heading, compared in _DECISION_SECTIONS:
        mine = [g for g in groups if g.main.setting == setting]
        if not mine:
            continue
        rows = []
        unknown = []
        for g in mine:
            r = g.main
            if r.action == advice.INSUFFICIENT:
                unknown.append(_undecided(r, p))
                continue
            row: list[Any] = [
                p.machine_link(r.machine, r.page),
                sentences.workload(r, with_precision=setting != "precision"),
            ]
            if setting == "precision":
                row.append(f"{r.baseline_value} → {r.variant_value}")
            row += [
                cat(Md("**"), sentences.decision(g), Md("**")),
                fmt.ratio(r.speedup)
                + (f" ({fmt.ci(r.ci_low, r.ci_high)})" if fmt.present(r.ci_low) else ""),
                r.verdict,
                sentences.evidence_links(p, r.evidence),
            ]
            rows.append(row)
        headers = ["Machine", "Workload"]
        if setting == "precision":
            headers.append("Switch")
        headers += ["Decision", "Speedup (95% CI)", "Verdict", "Evidence"]
        hidden = max(len(rows) - DECISION_ROWS, 0) + max(len(unknown) - DECISION_ROWS, 0)
        more = None
        if hidden:
            more = cat(
                f"{hidden:,} more workloads are not listed here; every decision is in ",
                p.link("decisions.csv", DECISIONS_CSV),
                ".",
            )
        out.append(
            {
                "heading": heading,
                "compared": compared,
                "table": table(headers, rows[:DECISION_ROWS]) if rows else None,
                "unknown": unknown[:DECISION_ROWS],
                "more": more,
            }
        )
    return out


def unmeasured_settings(data: Inputs) -> list[str]:
    """Decision-table sections with no comparison at all, so the home page can say which
    questions these results cannot answer yet (rather than leaving them out silently)."""
    present = {g.main.setting for g in sentences.regimes(data.recs)}
    return [heading for setting, heading, _ in _DECISION_SECTIONS if setting not in present]


def home_page(writer: Writer, data: Inputs, common: dict[str, Any]) -> None:
    p = Page("index.md")
    a = data.a
    headlines = []
    bm = a.benchmark
    if len(bm):
        for m, group in _by_machine(bm, data.machines):
            c = verdict_counts(group["verdict"])
            faster = group.loc[group["verdict"] == "faster"]
            be = span(faster["break_even_iters"].replace(math.inf, math.nan), fmt.iterations)
            headlines.append(
                cat(
                    Md("**cudnn.benchmark** on "),
                    p.machine_link(m.machine, m.page),
                    f": faster in {c['faster']} of {len(group)} configurations",
                    f" ({span(faster['speedup'], fmt.ratio)})" if len(faster) else "",
                    f", no clear difference in {c['no clear difference']}, slower in {c['slower']}",
                    f"; it repays its cold-pass cost after {be} iterations" if be else "",
                    ". ",
                    p.link("Details", f"{GENERATED}/cudnn-benchmark.md"),
                    ".",
                )
            )
    cg = a.crossovers
    if len(cg):
        for m, group in _by_machine(cg, data.machines):
            crossing = group.loc[group["crossover_batch"].notna()]
            text = (
                (
                    f"the GPU is clearly faster than the CPU from batch "
                    f"{span(crossing['crossover_batch'].astype(float), fmt.integer)} on "
                    f"{len(crossing)} of {len(group)} curves"
                )
                if len(crossing)
                else (f"the GPU is not clearly faster than the CPU on any of {len(group)} curves")
            )
            best = group["speedups"].map(
                lambda t: max((v for v in t if fmt.present(v)), default=math.nan)
            )
            top = (
                f", up to {fmt.ratio(best.max())} at the largest batches"
                if fmt.present(best.max())
                else ""
            )
            headlines.append(
                cat(
                    Md("**CPU vs GPU** on "),
                    p.machine_link(m.machine, m.page),
                    f": {text}{top}. ",
                    p.link("Details", f"{GENERATED}/cpu-vs-gpu.md"),
                    ".",
                )
            )
    det = a.determinism
    if len(det):
        for m, group in _by_machine(det, data.machines):
            ok = group.loc[group["verdict"] != "insufficient"]
            equal_off = group["base_bitwise_equal"].dropna()
            equal_on = group["var_bitwise_equal"].dropna()
            parts = []
            if len(ok):
                parts.append(
                    f"deterministic on changes step time by "
                    f"{span(1 / ok['speedup'] - 1, lambda v: fmt.pct(v, signed=True))}"
                )
            if len(equal_off):
                parts.append(
                    "re-runs with it off were "
                    + (
                        "bitwise equal"
                        if equal_off.all()
                        else "not bitwise equal"
                        if not equal_off.any()
                        else "sometimes bitwise equal"
                    )
                )
            if len(equal_on):
                parts.append(
                    "with it on "
                    + ("bitwise equal" if equal_on.all() else "still not always bitwise equal")
                )
            if parts:
                headlines.append(
                    cat(
                        Md("**Determinism** on "),
                        p.machine_link(m.machine, m.page),
                        ": " + "; ".join(parts) + ". ",
                        p.link("Details", f"{GENERATED}/determinism.md"),
                        ".",
                    )
                )
    prec = a.comparisons["precision"]
    if len(prec):
        for m, group in _by_machine(prec, data.machines):
            parts = []
            for variant, g in group.groupby("variant_value", sort=True):
                ok = g.loc[g["verdict"] != "insufficient"]
                if len(ok):
                    parts.append(f"{variant} {span(ok['speedup'], fmt.ratio)}")
            if parts:
                headlines.append(
                    cat(
                        Md("**Precision** vs fp32 on "),
                        p.machine_link(m.machine, m.page),
                        ": " + ", ".join(parts) + ". ",
                        p.link("Details", f"{GENERATED}/precision.md"),
                        ".",
                    )
                )
    writer.page(
        f"{GENERATED}/snippets/home.md",
        "home.md.j2",
        p=p,
        headlines=headlines,
        decisions=decision_tables(data, p),
        unmeasured=unmeasured_settings(data),
        n_machines=len(data.machines),
        n_rows=len(data.dataset.results),
        **common,
    )
