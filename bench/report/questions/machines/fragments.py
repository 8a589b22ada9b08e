"""A machine page's two large tables, every cell and every replicate that did not end ok, as
HTML fragments (``render.mkdocs_hooks`` splices them in): written apart from the page, so that
the largest machines' tables can be shared out among processes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bench.report import fmt
from bench.report.questions.machines.rows import FailedReplicate, MachineCell
from bench.report.render.escape import anchor, attr, html_text
from bench.report.render.markdown import html_table
from bench.report.render.words.labels import cold_text, energy_text, tail_text
from bench.report.vocabulary import Power

CELL_HEADERS = (
    "Cell",
    "Replicates",
    "Step (median ± IQR; slowest machine over fastest)",
    "Throughput",
    "First pass (range)",
    "Peak memory (first-pass workspace)",
    "Achieved (% of peak)",
    "p99 step (under 100 steps: how many)",
    "Energy per sample (mean power, method)",
)


def throughput_text(samples_per_s: float | None, basis: str | None) -> str:
    """samples/s, saying when it is a whole-cycle rate rather than batch ÷ median step."""
    text = fmt.rate(samples_per_s)
    return text + " per cycle" if basis == "whole cycle" and samples_per_s is not None else text


FAILURE_HEADERS = ("Cell", "Replicate", "Status", "Reason", "Run", "Source line")


def _memory_text(c: MachineCell) -> str:
    """A whole run's peak (the GPU's allocated memory, or the process's resident set), with
    the first pass's workspace above the steady state where there was one."""
    gpu = c.whole_peak_mem_allocated_bytes is not None
    text = fmt.bytes_(c.whole_peak_mem_allocated_bytes if gpu else c.peak_rss_bytes)
    if gpu and c.workspace_mem_allocated_bytes:
        text += f" ({fmt.bytes_(c.workspace_mem_allocated_bytes)})"
    return text


def _achieved_text(c: MachineCell) -> str:
    if c.kind == "ceiling":
        return fmt.MISSING
    text = fmt.tflops(c.achieved_tflops)
    return text + (f" ({fmt.pct(c.pct_of_peak / 100)})" if c.pct_of_peak is not None else "")


def _throughput_of(c: MachineCell) -> str:
    if c.kind != "ceiling":
        return throughput_text(c.samples_per_s, c.throughput_basis)
    if c.achieved_tflops is not None:
        return f"{fmt.num(c.achieved_tflops)} TFLOP/s"
    return f"{fmt.num(c.achieved_gbps)} GB/s" if c.achieved_gbps is not None else fmt.MISSING


def _status_text(c: MachineCell) -> str:
    text = c.status_summary or "no rows"
    if c.too_few_ok:
        text += f" (too few: {c.n_ok} of {c.n_total})"
    text += f" ({c.n_drift} drifting)" if c.n_drift else ""
    return text + (f" ({c.n_throttled} {Power.THROTTLED})" if c.n_throttled else "")


def cells_fragment(cells: Sequence[MachineCell], spread: Mapping[str, str] | None = None
                   ) -> str:
    """Every cell of one fingerprint as an HTML table, each row a link target
    ``#cell-<fingerprint>-<id>``, its step beside the spread between its model's machines
    (``spread``: cell id → text, for cells two or more machines measured).

    HTML rather than Markdown because a machine can have tens of thousands of cells (see
    :mod:`bench.report.render.mkdocs_hooks`); every value is escaped with ``html_text``.
    """
    rows = []
    for c in cells:
        ident = attr(anchor(c.anchor))
        step = fmt.seconds(c.steady_median_s)
        if c.iqr_s is not None:
            step += f" ± {fmt.seconds(c.iqr_s)}"
        if c.cell_id in (spread or {}):
            step += f"; {(spread or {})[c.cell_id]}"
        rows.append([
            f'<a class="tk-anchor" id="{ident}" href="#{ident}">'
            f"{html_text(c.cell_name, limit=160)}</a>",
            html_text(_status_text(c)), html_text(step), html_text(_throughput_of(c)),
            html_text(cold_text(c.cold_pass_s, c.cold_pass_min_s, c.cold_pass_max_s)),
            html_text(_memory_text(c)), html_text(_achieved_text(c)),
            html_text(tail_text(c.latency_p99_s, None, None, c.latency_steps_min)),
            html_text(energy_text(c.joules_per_sample, c.mean_power_w, c.energy_method)
                      + (f" ({Power.SHORT_WINDOW})" if c.n_short_window else "")),
        ])
    return html_table(CELL_HEADERS, rows)


def failures_fragment(failed: Sequence[FailedReplicate]) -> str:
    """Every replicate that did not end ok, with its reason, as an HTML table."""
    rows = []
    for f in failed:
        target = attr(anchor(f.target))
        rows.append(
            [
                f'<a href="#{target}">{html_text(f.cell_name, limit=160)}</a>',
                html_text(f.replicate if f.replicate is not None else fmt.MISSING),
                html_text(f.status),
                html_text(f.reason or fmt.MISSING, limit=600),
                html_text(f.run_id),
                html_text(f"{f.source}:{f.line}"),
            ]
        )
    return html_table(FAILURE_HEADERS, rows)
