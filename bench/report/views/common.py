"""Shared by every page: ``Inputs``, labels, per-machine grouping, speedup charts, CSVs, tables."""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from bench import schema
from bench.report import advice, charts, fmt, stats
from bench.report.escape import Md, cat, slug
from bench.report.pages import GENERATED, Page, Writer, safe_title, verdict_badge

CHARTS = f"{GENERATED}/charts"


def rows_of(frame: pd.DataFrame) -> Any:
    """``frame.itertuples(index=False)`` over plain object columns.

    pandas' string and nullable columns hand out their values one ``__getitem__`` at a time
    when iterated, which costs seconds over a 100k-row report; one conversion per column does
    not. The values are the same either way (``pd.NA`` stays ``pd.NA``).
    """
    ext = {c: object for c, t in frame.dtypes.items()
           if isinstance(t, pd.api.extensions.ExtensionDtype)}
    return frame.astype(ext).itertuples(index=False) if ext else frame.itertuples(index=False)


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
    "kernel_cache": "{} kernel cache",
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
    #: (its step version, the machine's newest) when a newer step definition superseded it
    superseded: tuple[str, str] | None = None


def link_labels(machines: Mapping[str, Machine]) -> dict[str, str]:
    """Link text for the machines measured under several fingerprints: name plus fingerprint.

    Without it the home page would list, say, two ``laptop`` rows that differ only in the torch
    version or the step definition behind them, and a reader could not tell which is which.
    """
    names = Counter(m.machine for m in machines.values())
    return {key: m.title for key, m in machines.items() if names[m.machine] > 1}


def superseded_pages(summary: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """Fingerprints whose machine was measured again under a newer step definition.

    Maps each such page key to (its step version, the newest step version of that machine).
    A new step definition fixes how something was measured (see ``WORKLOAD_VERSION``), so the
    home page answers from the newest one only; the older pages stay, as measured.
    """
    if summary.empty:
        return {}
    version = pd.to_numeric(summary["workload_version"], errors="coerce").fillna(1)
    newest = version.groupby(summary["machine"]).transform("max")
    old = version < newest
    return {
        str(page): (fmt.integer(v), fmt.integer(n))
        for page, v, n in zip(summary.loc[old, "page"], version[old], newest[old])
    }


def machines_of(summary: pd.DataFrame) -> dict[str, Machine]:
    out: dict[str, Machine] = {}
    gone = superseded_pages(summary)
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
            superseded=gone.get(str(row.page)),
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


#: What a machine-level summary names, so that it never reads as a verdict for every model
#: on that machine: the models, modes, precisions, layouts, shapes, batches and kernel caches
#: its comparisons cover.
SCOPE_AXES = ("model", "mode", "precision", "memory_format", "shapes", "batch_size",
              "kernel_cache")
_SCOPE_WORDS = {"shapes": "{} shapes", "batch_size": "batch {}", "kernel_cache": "{} kernel cache"}


def scope(frame: pd.DataFrame) -> str:
    """``resnet50, vit_b_16 · infer, train · fp32, amp-bf16 · nchw · static shapes · batch 128
    · fresh kernel cache``: the distinct values of ``SCOPE_AXES`` among ``frame``'s rows."""
    parts = []
    for col in SCOPE_AXES:
        if col not in frame.columns:
            continue
        values = frame[col].dropna().astype(str)
        values = values.loc[(values != "") & (values != "n/a")].unique().tolist()
        if not values:
            continue
        values = sorted(values, key=float) if col == "batch_size" else sorted(values)
        parts.append(_SCOPE_WORDS.get(col, "{}").format(", ".join(values)))
    return " · ".join(parts)


def exceptions(frame: pd.DataFrame, columns: Sequence[str], *, limit: int = 6) -> str:
    """The configurations whose verdict is not "no clear difference", by name and speedup:
    ``faster in resnet50 · train · fp32-strict (1.21×); slower in …`` (empty when none)."""
    parts = []
    for verdict in ("faster", "slower"):
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


def span(values: Iterable[float], formatter: Any) -> str:
    """``a`` or ``a to b`` over the finite values (empty when none)."""
    finite = sorted(float(v) for v in values if fmt.present(v))
    if not finite:
        return ""
    low, high = formatter(finite[0]), formatter(finite[-1])
    return low if low == high else f"{low} to {high}"


@dataclass
class Inputs:
    """Everything computed once and shared by the pages."""

    dataset: Any
    a: stats.Analysis
    machines: dict[str, Machine]
    recs: list[advice.Recommendation]
    regimes: list[Any]  # sentences.regimes(recs), grouped once for every page
    decisions: pd.DataFrame
    status: dict[tuple[str, str], str]  # (fingerprint, cell id) → "2 ok, 1 crash"
    labels: dict[str, str]  # link_labels(machines)

    @functools.cached_property
    def superseded(self) -> dict[str, tuple[str, str]]:
        """Page key → (step, newest step) of the fingerprints a newer step definition replaced;
        the home page and the recommendation lists leave them out."""
        return {k: m.superseded for k, m in self.machines.items() if m.superseded}

    @functools.cached_property
    def current_regimes(self) -> list[Any]:
        """``regimes`` without the superseded fingerprints: what the advice lists answer from."""
        return [g for g in self.regimes if g.main.page not in self.superseded]

    def current(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``frame`` (keyed by ``page``) without the fingerprints a newer step definition
        superseded: the rows the home page and the compare page answer from."""
        if frame.empty or not self.superseded:
            return frame
        return frame.loc[~frame["page"].isin(list(self.superseded))]

    def superseded_links(self, p: Page) -> list[Md]:
        """Links to the superseded fingerprints, each with its step and the newer one, for the
        notes on the pages that leave them out."""
        return [
            cat(p.machine_link(self.machines[page].title, page), f" (step {old}; now {new})")
            for page, (old, new) in sorted(self.superseded.items())
        ]

    def page(self, here: str) -> Page:
        """A page whose machine links tell apart one machine's fingerprints."""
        return Page(here, self.labels)

    def verdict(self, r: Any) -> Md:
        """A comparison's verdict; an insufficient one says what happened to its replicates."""
        badge = verdict_badge(r.verdict)
        if r.verdict != "insufficient":
            return badge
        base = self.status.get((r.fingerprint_id, r.baseline_cell_id), "no rows")
        var = self.status.get((r.fingerprint_id, r.variant_cell_id), "no rows")
        return cat(badge, f" ({r.baseline_value}: {base}; {r.variant_value}: {var})")


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
        for r in rows_of(frame)
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
        "superseded": m.superseded,
    }


def _equal_text(n_checks: Any, equal: Any, diff: Any) -> str:
    if not n_checks:
        return "not checked"
    if equal is pd.NA or equal is None:
        return "no ok check"
    if bool(equal):
        return "bitwise equal"
    return f"differs (max |Δ| {fmt.num(diff)})"


def _data_rel(rel: Path) -> str:
    parts = [slug(part) for part in Path(rel).parent.parts]
    return "/".join([DATA, *parts, Path(rel).name])
