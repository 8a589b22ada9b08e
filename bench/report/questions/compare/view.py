"""The compare page: machines side by side, best throughput per workload, throughput per dollar."""

from __future__ import annotations

from typing import Any

import pandas as pd

from bench.report import fmt
from bench.report.judge import MIN_OK_REPLICATES
from bench.report.questions.answers import Answers
from bench.report.questions.compare.model import WORKLOAD_KEY, ComparePage, Lead, Priced
from bench.report.render import charts, costcharts
from bench.report.render.escape import Md, cat, slug
from bench.report.render.markdown import Page, table
from bench.report.render.paths import CHARTS, COMPARE_PAGE, COMPARISONS
from bench.report.render.words.comparisons import cell_links
from bench.report.render.words.context import (
    banner,
    outdated_links,
    page,
    provenance,
    superseded_links,
)
from bench.report.render.words.feeding import cores_per_gpu
from bench.report.render.words.frames import rows_of
from bench.report.render.words.labels import alt_list, label, varying
from bench.report.render.writer import Writer
from bench.report.vocabulary import Power


def _few(r: Any) -> str:
    """The mark on a measurement that rests on too few ok replicates to be judged."""
    if not bool(r.too_few_ok):
        return ""
    n = int(r.n_ok)
    return f"only {n} ok replicate{'' if n == 1 else 's'}"


def _setting(r: Any) -> str:
    """The setting a machine's best throughput ran at: its device, and what differs from
    PyTorch's defaults (``cuda, cl, bm``: channels_last, cudnn.benchmark on)."""
    parts = [str(r.device)]
    if r.memory_format == "channels_last":
        parts.append("cl")
    if r.cudnn_benchmark == "on":
        parts.append("bm")
    return " ".join(parts[:1]) + (f", {', '.join(parts[1:])}" if parts[1:] else "")


def _on(r: Any) -> str:
    """`` (cuda, cl)``, or `` (cuda; only 2 ok replicates)``: the setting of a best throughput."""
    return f" ({'; '.join(x for x in (_setting(r), _few(r)) if x)})"


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
        for key in pages:
            c = lookup.get((key, device, op))
            row.append(
                fmt.MISSING
                if c is None
                else cat(
                    p.row_link(f"{fmt.num(c.achieved)} {c.unit}", key, c.anchor),
                    f" ({_few(c)})" if _few(c) else "", _capped(c),
                )
            )
        rows.append(row)
    return rows


def _capped(c: Any) -> str:
    """A ceiling whose replicates throttled (a power cap) is that machine's as it ran, not
    its hardware's peak: said beside the figure."""
    n = int(c.n_throttled) if fmt.present(c.n_throttled) else 0
    return f" ({Power.THROTTLED} in {n} of {int(c.n_ok)})" if n else ""


_HOW = ("compile", "compile_dynamic")


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


_FIELDS = (
    ("Machine", lambda r: str(r.machine)),
    ("GPU", lambda r: ((f"{r.gpu_count} × " if r.gpu_count > 1 else "") + str(r.gpu_name)
                       if r.gpu_name else "none")),
    ("CPU", lambda r: str(r.cpu_model)),
    ("CPU cores", _cores),
    ("CPU threads torch used", lambda r: fmt.integer(r.cpu_threads)),
    ("GPU memory", lambda r: fmt.bytes_(r.gpu_memory_bytes)),
    ("System memory", lambda r: fmt.bytes_(r.memory_bytes)),
)
_FIELDS_CORES = [name for name, _ in _FIELDS].index("CPU cores")
_SOFTWARE = (
    ("torch", lambda r: str(r.torch_version)),
    ("torchvision", lambda r: str(r.torchvision_version)),
    ("CUDA", lambda r: str(r.cuda_version) or fmt.MISSING),
    ("cuDNN", lambda r: fmt.cudnn_version(r.cudnn_version) or fmt.MISSING
     if fmt.present(r.cudnn_version) else fmt.MISSING),
    ("Python", lambda r: str(r.python_version)),
    ("OS", lambda r: str(r.os)),
    ("Step definition (workload version)", lambda r: str(r.workload_version)),
    ("Runs", lambda r: str(r.n_runs)),
    ("Cells", lambda r: str(r.n_cells)),
    ("Replicates ok / not ok", lambda r: f"{r.n_ok} / {r.n_failed}"),
)


def _side_by_side(p: Page, model: ComparePage) -> Md:
    summary = list(model.summary.itertuples(index=False))
    rows = [[name, *[get(r) for r in summary]] for name, get in (*_FIELDS, *_SOFTWARE)]
    # hardware, its measured peaks, then software
    rows[len(_FIELDS):len(_FIELDS)] = _ceiling_rows(p, model.ceilings,
                                                    [m.page for m in model.machines])
    fed = {s.machine.page: s for s in model.feeding}
    if any(s.gpu and s.headline is not None for s in model.feeding):  # where measured
        rows.insert(_FIELDS_CORES + 1, ["Cores per GPU to feed", *[
            cores_per_gpu(fed.get(m.page)) for m in model.machines]])
    return table(["", *[p.machine_link(m.title, m.page) for m in model.machines]], rows)


def _throughput(writer: Writer, p: Page, model: ComparePage) -> tuple[Md, Md | None]:
    more = None
    if model.total_workloads > len(model.workloads):
        csv_path = f"{COMPARISONS}/best-throughput.csv"
        writer.csv(csv_path, model.best)
        more = cat(
            f"The table shows the {len(model.workloads):,} workloads measured on the most "
            f"machines, of {model.total_workloads:,}; every machine's best throughput for every "
            "workload is in ", p.link(csv_path.rsplit("/", 1)[-1], csv_path), ".")
    lookup = {(str(r.page), *[getattr(r, k) for k in WORKLOAD_KEY]): r
              for r in rows_of(model.best)}
    cols = varying(model.workloads, WORKLOAD_KEY)
    rows = []
    for w in model.workloads.itertuples(index=False):
        values = [getattr(w, k) for k in WORKLOAD_KEY]
        row: list[Any] = [_workload(w, cols)]
        for m in model.machines:
            hit = lookup.get((m.page, *values))
            row.append(fmt.MISSING if hit is None else cat(
                p.row_link(fmt.rate(hit.samples_per_s), m.page, hit.anchor), _on(hit),
                _per_joule(hit)))
        rows.append(row)
    return table(["Workload", *[p.machine_link(m.title, m.page) for m in model.machines]],
                 rows), more


def _per_joule(r: Any) -> str:
    """``; 12.5 samples/J (nvml-energy)`` where measured (samples per joule is samples/s per
    watt), else the vocabulary's "not measured on this machine"."""
    if not fmt.present(r.samples_per_joule):
        return f"; energy {Power.NOT_MEASURED}"
    return f"; {fmt.num(r.samples_per_joule)} samples/J ({r.energy_method})"


def _cost(r: Any) -> str:
    """Cost per million samples: hardware time plus energy, each part shown."""
    hardware = r.usd_per_million_hardware
    if not fmt.present(hardware):
        return fmt.MISSING
    if not fmt.present(r.usd_per_kwh):
        return f"${fmt.num(hardware)} hardware (no electricity price)"
    if not fmt.present(r.usd_per_million_energy):
        return f"${fmt.num(hardware)} hardware + energy {Power.NOT_MEASURED}"
    return (f"${fmt.num(r.usd_per_million)} = ${fmt.num(hardware)} hardware + "
            f"${fmt.num(r.usd_per_million_energy, 2)} energy")


def _per_dollar(p: Page, priced: Priced) -> Md | None:
    frame = priced.rows
    if frame.empty:
        return None
    cols = varying(frame, WORKLOAD_KEY)
    rows = [[
        _workload(r, cols),
        p.machine_link(r.machine, r.page),
        cat(p.row_link(fmt.rate(r.samples_per_s), r.page, r.anchor), _on(r)),
        f"${fmt.num(r.price_usd)}" if fmt.present(r.price_usd) else fmt.MISSING,
        fmt.num(r.images_per_s_per_usd, 3) if fmt.present(r.images_per_s_per_usd)
        else fmt.MISSING,
        f"${fmt.num(r.usd_per_hour)}/h" if fmt.present(r.usd_per_hour) else fmt.MISSING,
        fmt.num(r.images_per_usd) if fmt.present(r.images_per_usd) else fmt.MISSING,
        _cost(r),
        r.price_note or "",
    ] for r in frame.itertuples(index=False)]
    return table(["Workload", "Machine", "Throughput", "Price", "images/s per $", "Rental",
                  "images per $ of rental", "Cost per million samples", "Note"],
                 rows) if rows else None


def _lead(p: Page, model: ComparePage, lead: Lead) -> dict[str, Any]:
    cols = varying(model.workloads, WORKLOAD_KEY) or ["model", "mode", "batch_size"]
    name = _workload(lead.workload, [c for c in WORKLOAD_KEY if c in cols or c in (
        "model", "mode", "batch_size", "precision")])
    fast, slow = lead.fast, lead.slow
    ci = fmt.ci(lead.ci_low, lead.ci_high)
    ratio = fmt.ratio(lead.ratio) + (f" (95% CI {ci})" if ci != fmt.MISSING else "")
    host = {k: "the host CPU of " if k in lead.host_cpu else "" for k in (fast.page, slow.page)}
    text = cat(f"{fmt.rate(fast.samples_per_s)} on {host[fast.page]}",
               p.machine_link(fast.machine, fast.page),
               f"{_on(fast)}: {ratio} the {fmt.rate(slow.samples_per_s)} of {host[slow.page]}",
               p.machine_link(slow.machine, slow.page), f"{_on(slow)}, each at its best "
               "measured setting (rows: ",
               cell_links(p, fast.page, [("fastest", fast.anchor)]), " · ",
               cell_links(p, slow.page, [("slowest", slow.anchor)]), ").")
    anchor = f"answer-{slug(name)}"
    by_page = {m.page: m for m in model.machines}
    days = sorted({d for k in (fast.page, slow.page) if k in by_page
                   for d in (by_page[k].first_day, by_page[k].last_day) if d})
    when = f", data of {days[0]}" + (f" to {days[-1]}" if days[-1] != days[0] else "") \
        if days else ""
    return {"anchor": anchor, "lead": f"{name}:", "text": text,
            # the names the links show: a machine with two current fingerprints is named
            # with its fingerprint, so that a pasted citation points at one of them
            "cite": f"For {name}, {host[fast.page]}{p.labels.get(fast.page, fast.machine)} ran "
                    f"at {ratio} the throughput of {host[slow.page]}"
                    f"{p.labels.get(slow.page, slow.machine)}, each at its best measured "
                    f"setting; torch-knobs{when}.",
            "permalink": p.link("permalink", COMPARE_PAGE, anchor)}


def _chart(writer: Writer, model: ComparePage) -> dict[str, Any] | None:
    """Throughput per machine for the workloads measured on the most machines."""
    shown = model.workloads.head(charts.MAX_ROWS // 2)
    if shown.empty or len(model.machines) < 2:
        return None
    lookup = {(str(r.page), *[getattr(r, k) for k in WORKLOAD_KEY]): r
              for r in rows_of(model.best)}
    cols = varying(model.workloads, WORKLOAD_KEY)
    rows = [costcharts.BarRow(_workload(w, cols), tuple(
        float(lookup[(m.page, *[getattr(w, k) for k in WORKLOAD_KEY])].samples_per_s)
        if (m.page, *[getattr(w, k) for k in WORKLOAD_KEY]) in lookup else float("nan")
        for m in model.machines)) for w in shown.itertuples(index=False)]
    path = f"{CHARTS}/compare-throughput.svg"
    writer.chart(costcharts.bars_chart, path, rows, [m.title for m in model.machines],
                 title="Best measured throughput per machine",
                 xlabel="samples per second (log scale), each machine at its best setting")
    return {"path": path, "left_out": max(len(model.workloads) - len(rows), 0),
            "shown": len(rows),
            "caption": "Samples per second of each workload on each machine, each at its best "
                       "measured setting (log scale; no bar: not measured there).",
            "alt": "Best throughput per machine: " + alt_list(
                f"{r.label}: " + ", ".join(f"{m.title} {fmt.rate(v)}" for m, v in
                                           zip(model.machines, r.values))
                for r in rows)}


def compare_page(writer: Writer, answers: Answers, common: dict[str, Any]) -> None:
    model = answers.compare
    p = page(answers, COMPARE_PAGE)
    throughput = more = None
    if len(model.best) and model.machines:
        throughput, more = _throughput(writer, p, model)
    priced = model.priced
    writer.page(
        COMPARE_PAGE,
        "compare.md.j2",
        p=p,
        side=_side_by_side(p, model) if model.machines else None,
        throughput=throughput,
        more=more,
        per_dollar=_per_dollar(p, priced) if priced is not None else None,
        prices_given=priced is not None,
        unmatched=list(priced.unmatched) if priced is not None else [],
        n_machines=len(model.machines),
        superseded=superseded_links(p, model.superseded),
        outdated=outdated_links(p, model.outdated),
        min_ok=MIN_OK_REPLICATES,
        leads=[_lead(p, model, lead) for lead in model.leads],
        chart=_chart(writer, model),
        banners=banner(model.machines),
        provenance=provenance(common["build"], model.machines),
        **common,
    )
