"""One page per machine (environment, cells, failures, ceilings, runs) and the machines index."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from bench.report import fmt
from bench.report.escape import Md, anchor, attr, cat, html_text, md, slug
from bench.report.judge import Answers
from bench.report.judge.pages.machines import MachinePage
from bench.report.pages import Page, fragment_placeholder, html_table, row_anchor, table
from bench.report.paths import MACHINES_INDEX, data_file, fragment_file, machine_file
from bench.report.views.context import page
from bench.report.views.files import Copies, file_links
from bench.report.views.frames import present, rows_of
from bench.report.views.labels import cold_text, equal_text
from bench.report.writer import Writer
from bench.schema import DRIFT


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


CELL_HEADERS = (
    "Cell",
    "Status",
    "ok / total",
    "Step time (median)",
    "IQR",
    "CV",
    "Throughput",
    "Cold pass (range)",
    "Peak memory, whole run",
    "First-pass workspace",
    "Achieved",
    "% of sustained peak",
)


def throughput_text(samples_per_s: Any, basis: str) -> str:
    """samples/s, saying when it is a whole-cycle rate rather than batch ÷ median step."""
    text = fmt.rate(samples_per_s)
    return text + " per cycle" if basis == "whole cycle" and present(samples_per_s) else text


FAILURE_HEADERS = ("Cell", "Replicate", "Status", "Reason", "Run", "Source line")


_FRAGMENT_COLUMNS = (
    "kind", "anchor", "cell_name", "status_summary", "n_drift", "n_ok", "n_total",
    "too_few_ok", "steady_median_s", "iqr_s", "cv", "samples_per_s", "throughput_basis",
    "achieved_tflops", "achieved_gbps", "cold_pass_s", "cold_pass_min_s", "cold_pass_max_s",
    "whole_peak_mem_allocated_bytes", "whole_peak_mem_reserved_bytes", "peak_rss_bytes",
    "workspace_mem_allocated_bytes", "pct_of_peak",
)  # fmt: skip


def cells_fragment(cells: pd.DataFrame) -> str:
    """Every cell of one machine as an HTML table, each row a link target ``#cell-<id>``.

    HTML rather than Markdown because a machine can have tens of thousands of cells (see
    :mod:`bench.report.mkdocs_hooks`); every value is escaped with ``html_text``.
    """
    rows = []
    for c in rows_of(cells[list(_FRAGMENT_COLUMNS)]):  # only what the table shows: faster rows
        gpu = present(c.whole_peak_mem_allocated_bytes)
        memory = fmt.bytes_(c.whole_peak_mem_allocated_bytes if gpu else c.peak_rss_bytes)
        if gpu and present(c.whole_peak_mem_reserved_bytes):
            memory += f" ({fmt.bytes_(c.whole_peak_mem_reserved_bytes)} reserved)"
        if c.kind == "ceiling":
            throughput = (
                f"{fmt.num(c.achieved_tflops)} TFLOP/s"
                if present(c.achieved_tflops)
                else f"{fmt.num(c.achieved_gbps)} GB/s"
                if present(c.achieved_gbps)
                else fmt.MISSING
            )
        else:
            throughput = throughput_text(c.samples_per_s, c.throughput_basis)
        ident = attr(anchor(c.anchor))
        rows.append(
            [
                f'<a class="tk-anchor" id="{ident}" href="#{ident}">'
                f"{html_text(c.cell_name, limit=160)}</a>",
                html_text(
                    (c.status_summary or "no rows")
                    + (f" ({c.n_drift} drifting)" if c.n_drift else "")
                ),
                html_text(
                    f"{c.n_ok} / {c.n_total}" + (" (insufficient)" if c.too_few_ok else "")
                ),
                html_text(fmt.seconds(c.steady_median_s)),
                html_text(fmt.seconds(c.iqr_s)),
                html_text(fmt.pct(c.cv)),
                html_text(throughput),
                html_text(cold_text(c.cold_pass_s, c.cold_pass_min_s, c.cold_pass_max_s)),
                html_text(memory),
                html_text(fmt.bytes_(c.workspace_mem_allocated_bytes)),
                html_text(fmt.tflops(c.achieved_tflops) if c.kind == "model" else fmt.MISSING),
                html_text(fmt.pct(c.pct_of_peak / 100) if present(c.pct_of_peak) else fmt.MISSING),
            ]
        )
    return html_table(CELL_HEADERS, rows)


def failures_fragment(failed: pd.DataFrame) -> str:
    """Every replicate that did not end ok, with its reason, as an HTML table."""
    rows = []
    for f in rows_of(failed):
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


def _run_rows(n_ok: int, n_rows: int, planned: int | None) -> str:
    """``160 ok; 161 of 181 planned rows (unfinished)``: a run stopped early says so."""
    if planned is None:
        return f"{n_ok:,} ok; {n_rows:,} rows (the plan was not recorded)"
    done = " (unfinished)" if n_rows < planned else ""
    return f"{n_ok:,} ok; {n_rows:,} of {planned:,} planned rows{done}"


def cells_fragments(answers: Answers) -> list[Callable[[Writer], None]]:
    """One job per machine page, the largest first: its table of every cell, the slowest part of
    the page, so that the machines can be shared out (see ``views.render_all``)."""
    by_page = {mp.machine.page: mp for mp in answers.machine_pages.pages}

    def job(key: str) -> Callable[[Writer], None]:
        def write(writer: Writer) -> None:
            writer.text(fragment_file(f"{slug(key)}-cells"), cells_fragment(by_page[key].cells))

        return write

    return [job(key) for key in answers.machine_pages.largest_first]


#: A shard's jobs named one by one up to this many; more are the first, the latest and a count.
SHARD_JOBS_SHOWN = 3


def shard_note(run: Any) -> str:
    """``, shard 1/2 (Slurm job 191)``; a shard that ran under several jobs (a resume) names
    them, oldest first: ``(Slurm jobs 191, 193)``, or past ``SHARD_JOBS_SHOWN`` of them
    ``(Slurm jobs 191, …, 199: 5 in all, the latest last)``."""
    if not run.shard:
        return ""
    jobs = run.slurm_jobs
    if not jobs:
        return f", shard {run.shard}"
    if len(jobs) == 1:
        return f", shard {run.shard} (Slurm job {jobs[0]})"
    if len(jobs) <= SHARD_JOBS_SHOWN:
        return f", shard {run.shard} (Slurm jobs {', '.join(jobs)})"
    return (f", shard {run.shard} (Slurm jobs {jobs[0]}, …, {jobs[-1]}: {len(jobs)} in all, "
            "the latest last)")


def _repro_rows(p: Page, mp: MachinePage, here: str) -> list[list[Any]]:
    anchors = set(mp.cells["anchor"])
    return [[cat(row_anchor(r.anchor), md(r.cell_name, limit=160)),
             equal_text(r.n_ok_checks, r.bitwise_equal, r.max_abs_diff), str(r.status_summary),
             p.link("timed cell", here, r.cell_anchor) if r.cell_anchor in anchors
             else fmt.MISSING]
            for r in mp.checks.itertuples(index=False)]


def _ceiling_rows(p: Page, mp: MachinePage, here: str) -> list[list[Any]]:
    return [[str(c.op), str(c.device), f"{fmt.num(c.achieved)} {c.unit}",
             f"{fmt.num(c.ci_low)}–{fmt.num(c.ci_high)} {c.unit}" if present(c.ci_low)
             else fmt.MISSING,
             f"{fmt.num(c.burst)} {c.unit}" if present(c.burst) else fmt.MISSING,
             str(c.status_summary), p.link("row", here, c.anchor)]
            for c in mp.ceilings.itertuples(index=False)]


def _run_table(p: Page, mp: MachinePage, copied: Copies) -> Md:
    rows = [[
        str(rr.run.run_id) + shard_note(rr.run),
        _run_rows(rr.n_ok, rr.n_rows, rr.run.planned_rows),
        file_links(p, "results.csv", rr.run.results, copied),
        file_links(p, "samples.csv", rr.run.samples, copied) if rr.run.samples in copied
        else fmt.MISSING,
        p.link("env.json", data_file(rr.run.env)) if rr.run.env in copied else fmt.MISSING,
    ] for rr in mp.runs]
    return table(["Run", "Rows", "Results", "Samples", "Environment"], rows)


def _env_tables(env: Any) -> tuple[Md | None, Md | None]:
    flags = env.get("flag_defaults", {}) if isinstance(env, dict) else {}
    env_rows = [  # the plan (what a resume must match) lists every cell id: not here
        [k, v] for k, v in flatten(
            {k: v for k, v in (env or {}).items() if k not in ("flag_defaults", "plan")})]
    flag_rows = [[k, v] for k, v in flatten(flags)] if isinstance(flags, dict) else []
    return (table(["Key", "Value"], env_rows) if env_rows else None,
            table(["Flag", "Default"], flag_rows) if flag_rows else None)


def machine_page(writer: Writer, answers: Answers, mp: MachinePage, copied: Copies) -> str:
    """One machine's page (its cells table comes from ``cells_fragments``); returns its path."""
    m, row = mp.machine, mp.summary
    here = machine_file(m.page)
    p = page(answers, here)
    name = slug(m.page)
    if len(mp.failures):
        writer.text(fragment_file(f"{name}-failures"), failures_fragment(mp.failures))
    drift_rows = [[p.link(str(c.cell_name), here, c.anchor), f"{c.n_drift} of {c.n_ok}",
                   f"{fmt.num(c.drift_max)}×"] for c in mp.drifting.itertuples(index=False)]
    ceil_rows = _ceiling_rows(p, mp, here)
    repro_rows = _repro_rows(p, mp, here)
    env, flags = _env_tables(mp.env)
    writer.page(
        here, "machine.md.j2", p=p, title=m.title, superseded=m.superseded,
        outdated=m.outdated, machine=m.machine, hardware=m.hardware,
        fingerprint=m.fingerprint_id, summary=row, n_ok=int(row.n_ok),
        n_failed=int(row.n_failed), n_replaced=int(row.n_replaced), n_rows=int(row.n_rows),
        n_cells=int(row.n_cells), runs=_run_table(p, mp, copied),
        sharded=any(rr.run.shard for rr in mp.runs), env=env, flags=flags,
        drift=table(["Cell", "Drifting ok replicates", "Worst drift"], drift_rows)
        if drift_rows else None,
        drift_limit=f"{DRIFT:g}×",
        ceilings=table(["Op", "Device", "Sustained", "95% CI", "Best 10-iteration window",
                        "Status", "Row"], ceil_rows) if ceil_rows else None,
        cells=fragment_placeholder(f"{name}-cells"),
        failures=fragment_placeholder(f"{name}-failures") if len(mp.failures) else None,
        n_failures=len(mp.failures),
        repro=table(["Configuration", "Two fresh processes", "Status", "Timed cell"],
                    repro_rows) if repro_rows else None,
    )
    return here


def _index_row(p: Page, mp: MachinePage) -> list[Any]:
    m, row = mp.machine, mp.summary
    return [p.machine_link(m.title, m.page), m.machine, m.hardware, str(row.cpu_model),
            str(row.torch_version),
            str(row.workload_version) + (" (superseded)" if m.superseded else ""),
            str(row.n_runs), str(row.n_cells), f"{row.n_ok} ok, {row.n_failed} not ok"]


def machine_pages(writer: Writer, answers: Answers, copied: Copies) -> list[tuple[str, str]]:
    """Every machine page and the index; returns the navigation entries (title, path)."""
    nav = [(mp.machine.title, machine_page(writer, answers, mp, copied))
           for mp in answers.machine_pages.pages]
    index_p = page(answers, MACHINES_INDEX)
    rows = [_index_row(index_p, mp) for mp in answers.machine_pages.pages]
    writer.page(
        MACHINES_INDEX, "machines-index.md.j2",
        table=table(["Page", "Machine", "Hardware", "CPU", "torch", "Step", "Runs", "Cells",
                     "Replicates"], rows) if rows else None,
    )
    return nav
