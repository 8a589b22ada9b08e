"""The compare page: machines side by side, best throughput per workload, throughput per dollar."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from bench import schema
from bench.report import analysis, fmt
from bench.report.analysis.machines import COMPILED_WORKLOAD_KEY, best_throughput
from bench.report.escape import cat
from bench.report.pages import Page, table
from bench.report.paths import COMPARE_PAGE, COMPARISONS
from bench.report.views.comparisons import TABLE_ROWS
from bench.report.views.frames import rows_of
from bench.report.views.inputs import Inputs
from bench.report.views.labels import label, varying
from bench.report.writer import Writer


def _few(r: Any) -> str:
    """The mark on a measurement that rests on too few ok replicates to be judged."""
    if not bool(r.too_few_ok):
        return ""
    n = int(r.n_ok)
    return f"only {n} ok replicate{'' if n == 1 else 's'}"


def _on(r: Any) -> str:
    """`` (cuda)``, or `` (cuda; only 2 ok replicates)``: where a best throughput ran."""
    return f" ({'; '.join(x for x in (str(r.device), _few(r)) if x)})"


def _cores(r: Any) -> str:
    if not fmt.present(r.cpu_cores):
        return fmt.integer(r.cpu_logical) + (" logical" if fmt.present(r.cpu_logical) else "")
    logical = f" ({fmt.integer(r.cpu_logical)} logical)" if fmt.present(r.cpu_logical) else ""
    return fmt.integer(r.cpu_cores) + logical


def _ceiling_rows(p: Page, ceilings: pd.DataFrame, pages: list[str]) -> list[list[Any]]:
    """One side-by-side row per measured ceiling (op and device), each value linked to its row.

    The peak rates a machine reached on plain matmuls and copies are the hardware's own answer
    to "how fast can it go", measured the same way on every machine.
    """
    if ceilings.empty:
        return []
    ceilings = ceilings.loc[ceilings["achieved"].notna()]
    lookup = {(str(c.page), str(c.device), str(c.op)): c for c in rows_of(ceilings)}
    kinds = sorted({(str(c.device), str(c.op)) for c in rows_of(ceilings)},
                   key=lambda k: (k[0] != "cuda", k[1]))
    rows = []
    for device, op in kinds:
        row: list[Any] = [f"Measured {op} ({device}), sustained"]
        for page in pages:
            c = lookup.get((page, device, op))
            row.append(
                fmt.MISSING
                if c is None
                else cat(
                    p.row_link(f"{fmt.num(c.achieved)} {c.unit}", page, c.anchor),
                    f" ({_few(c)})" if _few(c) else "",
                )
            )
        rows.append(row)
    return rows


#: What the throughput table compares across machines: a workload, eager or compiled.
KEY = COMPILED_WORKLOAD_KEY
_HOW = ("compile", "compile_dynamic")


def _rank(column: pd.Series) -> pd.Series:
    """A sort key for ``KEY``'s columns: eager before the compile modes, each in the schema's
    order (and dynamic= likewise), every other column as it is."""
    order = {"compile": schema.COMPILE_MODES, "compile_dynamic": schema.COMPILE_DYNAMIC}.get(
        str(column.name))
    if order is None:
        return column
    return column.map(lambda v: order.index(v) if v in order else len(order))


def _workload(r: Any, cols: list[str]) -> str:
    """``resnet18 · infer · batch 8 · fp32 · static``, then ``· eager`` or ``· compile
    default`` (``· dynamic=true``) where the rows beside it differ in how the model ran."""
    text = label(r, [c for c in cols if c not in _HOW])
    if not any(c in cols for c in _HOW):
        return text
    if r.compile == "off":
        return f"{text} · eager"
    dyn = f" · dynamic={r.compile_dynamic}" if r.compile_dynamic != "auto" else ""
    return f"{text} · compile {r.compile}{dyn}"


def _shown_workloads(best: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The workloads the throughput table lists, in workload order, and how many there are.

    At most TABLE_ROWS: those measured on the most machines, since a row is only a comparison
    where several machines have a number. A results tree can hold thousands of workloads, too
    many to read in one table (and to push through Markdown in the time the build has).
    """
    key = KEY
    counts = best.groupby(key, sort=False, dropna=False)["page"].nunique().rename("n").reset_index()
    counts = counts.sort_values(["n", *key], ascending=[False] + [True] * len(key), kind="stable",
                                key=_rank)
    shown = counts.head(TABLE_ROWS)[key].sort_values(key, kind="stable", key=_rank)
    return shown, len(counts)


def compare_page(writer: Writer, data: Inputs, common: dict[str, Any], prices: Path | None) -> None:
    here = COMPARE_PAGE
    p = data.page(here)
    summary = data.current(data.a.machines)
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
            ("CPU cores", _cores),
            ("CPU threads torch used", lambda r: fmt.integer(r.cpu_threads)),
            ("GPU memory", lambda r: fmt.bytes_(r.gpu_memory_bytes)),
            ("System memory", lambda r: fmt.bytes_(r.memory_bytes)),
        ]
        software = [
            ("torch", lambda r: str(r.torch_version)),
            ("torchvision", lambda r: str(r.torchvision_version)),
            ("CUDA", lambda r: str(r.cuda_version) or fmt.MISSING),
            ("cuDNN", lambda r: str(r.cudnn_version) or fmt.MISSING),
            ("Python", lambda r: str(r.python_version)),
            ("OS", lambda r: str(r.os)),
            ("Step definition (workload version)", lambda r: str(r.workload_version)),
            ("Runs", lambda r: str(r.n_runs)),
            ("Cells", lambda r: str(r.n_cells)),
            ("Replicates ok / not ok", lambda r: f"{r.n_ok} / {r.n_failed}"),
        ]
        rows = [
            [name, *[get(r) for r in summary.itertuples(index=False)]]
            for name, get in [*fields, *software]
        ]
        ceilings = _ceiling_rows(p, data.current(data.a.ceilings), [m.page for m in ms])
        rows[len(fields):len(fields)] = ceilings  # hardware, its measured peaks, then software
        side = table(["", *[p.machine_link(m.title, m.page) for m in ms]], rows)
    best = data.current(best_throughput(data.a.cells, KEY))
    throughput = more = None
    if len(best) and ms:
        key = KEY
        workloads, total = _shown_workloads(best)
        if total > TABLE_ROWS:
            csv_path = f"{COMPARISONS}/best-throughput.csv"
            writer.csv(csv_path, best)
            more = cat(
                f"The table shows the {TABLE_ROWS:,} workloads measured on the most machines, "
                f"of {total:,}; every machine's best throughput for every workload is in ",
                p.link(csv_path.rsplit("/", 1)[-1], csv_path),
                ".",
            )
        lookup = {
            (str(r.page), *[getattr(r, k) for k in key]): r for r in rows_of(best)
        }
        cols = varying(workloads, key)
        rows = []
        for w in workloads.itertuples(index=False):
            values = [getattr(w, k) for k in key]
            row: list[Any] = [_workload(w, cols)]
            for m in ms:
                hit = lookup.get((m.page, *values))
                row.append(
                    fmt.MISSING
                    if hit is None
                    else cat(
                        p.row_link(fmt.rate(hit.samples_per_s), m.page, hit.anchor),
                        _on(hit),
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
                [*KEY, "images_per_s_per_usd", "page"],
                ascending=[True] * len(KEY) + [False, True],
                kind="stable",
                na_position="last",
                key=_rank,
            )
            cols = varying(priced, KEY) if len(priced) else []
            rows = [
                [
                    _workload(r, cols),
                    p.machine_link(r.machine, r.page),
                    cat(p.row_link(fmt.rate(r.samples_per_s), r.page, r.anchor),
                        _on(r)),
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
        more=more,
        per_dollar=per_dollar,
        prices_given=prices is not None,
        unmatched=unmatched,
        n_machines=len(ms),
        superseded=data.superseded_links(p),
        outdated=data.outdated_links(p),
        min_ok=analysis.MIN_OK_REPLICATES,
        **common,
    )
