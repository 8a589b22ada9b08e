"""The compare page: machines side by side, best throughput per workload, throughput per dollar."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from bench.report import fmt
from bench.report.judge import MIN_OK_REPLICATES, Counted, Machine
from bench.report.questions.answers import Shared
from bench.report.questions.compare.model import (
    WORKLOAD_KEY,
    BestThroughput,
    CeilingFigure,
    ComparePage,
    DeviceSeries,
    Lead,
    Priced,
    PricedThroughput,
    SideBySideMachine,
    ThroughputChart,
    WorkloadKey,
)
from bench.report.render import costcharts
from bench.report.render.buildinfo import BuildInfo
from bench.report.render.escape import Md, cat, slug
from bench.report.render.markdown import Page, table
from bench.report.render.paths import CHARTS, COMPARE_PAGE, COMPARISONS
from bench.report.render.words.answers import built_words, cite_url, software
from bench.report.render.words.comparisons import cell_links
from bench.report.render.words.context import (
    banner,
    outdated_links,
    page,
    provenance,
    superseded_links,
)
from bench.report.render.words.feeding import cores_per_gpu
from bench.report.render.words.labels import alt_list, label
from bench.report.render.writer import Writer
from bench.report.vocabulary import Power


def _few(r: Counted) -> str:
    """The mark on a measurement that rests on too few ok replicates to be judged."""
    if not r.too_few_ok:
        return ""
    n = int(r.n_ok or 0)
    return f"only {n} ok replicate{'' if n == 1 else 's'}"


def _setting(r: BestThroughput) -> str:
    """The setting a machine's best throughput ran at: its device, and what differs from
    PyTorch's defaults (``cuda, cl, bm``: channels_last, cudnn.benchmark on)."""
    parts = [str(r.device)]
    if r.memory_format == "channels_last":
        parts.append("cl")
    if r.cudnn_benchmark == "on":
        parts.append("bm")
    return " ".join(parts[:1]) + (f", {', '.join(parts[1:])}" if parts[1:] else "")


def _on(r: BestThroughput) -> str:
    """`` (cuda, cl)``, or `` (cuda; only 2 ok replicates)``: the setting of a best throughput."""
    return f" ({'; '.join(x for x in (_setting(r), _few(r)) if x)})"


def _cores(r: SideBySideMachine) -> str:
    if not fmt.present(r.cpu_cores):
        return fmt.integer(r.cpu_logical) + (" logical" if fmt.present(r.cpu_logical) else "")
    logical = f" ({fmt.integer(r.cpu_logical)} logical)" if fmt.present(r.cpu_logical) else ""
    return fmt.integer(r.cpu_cores) + logical


def _ceiling_rows(p: Page, model: ComparePage) -> list[list[Any]]:
    """One side-by-side row per measured ceiling (op and device), each value linked to its
    row."""
    rows = []
    for line in model.ceilings:
        row: list[Any] = [f"Measured {line.op} ({line.device}), sustained"]
        for m, c in zip(model.machines, line.cells, strict=True):
            row.append(
                fmt.MISSING
                if c is None
                else cat(
                    p.row_link(f"{fmt.num(c.achieved)} {c.unit}", m.page, c.anchor),
                    f" ({_few(c)})" if _few(c) else "", _capped(c),
                )
            )
        rows.append(row)
    return rows


def _capped(c: CeilingFigure) -> str:
    """A ceiling whose replicates throttled (a power cap) is that machine's as it ran, not
    its hardware's peak: said beside the figure."""
    n = int(c.n_throttled or 0)
    return f" ({Power.THROTTLED} in {n} of {int(c.n_ok or 0)})" if n else ""


_HOW = ("compile", "compile_dynamic")


def _workload(r: WorkloadKey, cols: Sequence[str]) -> str:
    """``resnet18 · infer · batch 8 · fp32 · static``, then ``· eager`` or ``· compile
    default`` (``· dynamic=true``) where the rows beside it differ in how the model ran."""
    text = label(r, [c for c in cols if c not in _HOW])
    if not any(c in cols for c in _HOW):
        return text
    if r.compile == "off":
        return f"{text} · eager"
    dyn = f" · dynamic={r.compile_dynamic}" if r.compile_dynamic != "auto" else ""
    return f"{text} · compile {r.compile}{dyn}"


def _text(value: object) -> str:
    """A summary column as text; the missing mark where it was empty."""
    return fmt.MISSING if value is None else str(value)


_Field = tuple[str, Callable[[SideBySideMachine], str]]
_FIELDS: tuple[_Field, ...] = (
    ("Machine", lambda r: str(r.machine)),
    ("GPU", lambda r: ((f"{r.gpu_count} × " if (r.gpu_count or 0) > 1 else "")
                       + str(r.gpu_name) if r.gpu_name else "none")),
    ("CPU", lambda r: _text(r.cpu_model)),
    ("CPU cores", _cores),
    ("CPU threads torch used", lambda r: fmt.integer(r.cpu_threads)),
    ("GPU memory", lambda r: fmt.bytes_(r.gpu_memory_bytes)),
    ("System memory", lambda r: fmt.bytes_(r.memory_bytes)),
)
_FIELDS_CORES = [name for name, _ in _FIELDS].index("CPU cores")
_SOFTWARE: tuple[_Field, ...] = (
    ("torch", lambda r: _text(r.torch_version)),
    ("torchvision", lambda r: _text(r.torchvision_version)),
    ("CUDA", lambda r: r.cuda_version or fmt.MISSING),
    ("cuDNN", lambda r: fmt.cudnn_version(r.cudnn_version) or fmt.MISSING
     if fmt.present(r.cudnn_version) else fmt.MISSING),
    ("Python", lambda r: _text(r.python_version)),
    ("OS", lambda r: _text(r.os)),
    ("Step definition (workload version)", lambda r: _text(r.workload_version)),
    ("Runs", lambda r: _text(r.n_runs)),
    ("Cells", lambda r: _text(r.n_cells)),
    ("Replicates ok / not ok", lambda r: f"{r.n_ok} / {r.n_failed}"),
)


def _side_by_side(p: Page, model: ComparePage) -> Md:
    rows = [[name, *[get(r) for r in model.summary]] for name, get in (*_FIELDS, *_SOFTWARE)]
    # hardware, its measured peaks, then software
    rows[len(_FIELDS):len(_FIELDS)] = _ceiling_rows(p, model)
    if model.feeding_measured:
        rows.insert(_FIELDS_CORES + 1, ["Cores per GPU to feed", *[
            cores_per_gpu(s) for s in model.feeding]])
    return table(["", *[p.machine_link(m.title, m.page) for m in model.machines]], rows)


def _throughput(writer: Writer, p: Page, model: ComparePage) -> tuple[Md, Md | None]:
    more = None
    csv_path = f"{COMPARISONS}/best-throughput.csv"
    writer.csv(csv_path, model.best)  # the page's download line links it
    if model.total_workloads > len(model.workloads):
        more = cat(
            f"The table shows the {len(model.workloads):,} workloads measured on the most "
            f"machines, of {model.total_workloads:,}; every machine's best throughput for every "
            "workload is in ", p.link(csv_path.rsplit("/", 1)[-1], csv_path), ".")
    rows = []
    for w in model.workloads:
        row: list[Any] = [_workload(w.workload, model.columns)]
        for m, hit in zip(model.machines, w.cells, strict=True):
            row.append(fmt.MISSING if hit is None else cat(
                p.row_link(fmt.rate(hit.samples_per_s), m.page, hit.anchor), _on(hit),
                _per_joule(hit)))
        rows.append(row)
    return table(["Workload", *[p.machine_link(m.title, m.page) for m in model.machines]],
                 rows), more


def _per_joule(r: BestThroughput) -> str:
    """``; 12.5 samples/J (nvml-energy)`` where measured (samples per joule is samples/s per
    watt), else the vocabulary's "not measured on this machine"."""
    if not fmt.present(r.samples_per_joule):
        return f"; energy {Power.NOT_MEASURED}"
    return f"; {fmt.num(r.samples_per_joule)} samples/J ({r.energy_method})"


def _cost(r: PricedThroughput) -> str:
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
    cols = priced.columns
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
    ] for r in priced.rows]
    return table(["Workload", "Machine", "Throughput", "Price", "images/s per $", "Rental",
                  "images per $ of rental", "Cost per million samples", "Note"],
                 rows) if rows else None


def _lead(p: Page, model: ComparePage, lead: Lead, build: BuildInfo) -> dict[str, Any]:
    cols = model.columns or ("model", "mode", "batch_size")
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
            "cite": f"For {name}, {host[fast.page]}{p.labels.get(fast.page, fast.machine)}"
                    f"{_software(by_page, fast.page)} ran at {ratio} the throughput of "
                    f"{host[slow.page]}{p.labels.get(slow.page, slow.machine)}"
                    f"{_software(by_page, slow.page)}, each at its best measured setting; "
                    f"torch-knobs{when}, {built_words(build)}.",
            "permalink": Md(f"[permalink]({cite_url(build, COMPARE_PAGE, anchor)})")}


def _software(machines: dict[str, Machine], page: str) -> str:
    """`` (NVIDIA H200, torch 2.11.0, cuDNN 9.19.0)``: what a cited figure ran on."""
    return f" ({software(machines[page])})" if page in machines else ""


#: How a chart names a device (a GPU box's host CPU is its ``cpu``) and marks its bars:
#: the device is in the series' label and its hatch, never in its colour alone.
_DEVICES = {"cuda": ("GPU", ""), "cpu": ("CPU", "///"), "mps": ("Apple GPU", "...")}


def _series(s: DeviceSeries) -> str:
    """``nvidia-h200 19963df1 (GPU)``: a chart series, its machine and device."""
    return f"{s.machine.title} ({_DEVICES.get(s.device, (s.device, ''))[0]})"


def _machines(chart: ThroughputChart) -> str:
    """What the chart's rows were measured on, in words."""
    if chart.on_machines == chart.of_machines:
        return f"on all {chart.of_machines} machines compared"
    return (f"on {chart.on_machines} of the {chart.of_machines} machines compared (no workload "
            "was measured on all of them)")


def _chart(writer: Writer, model: ComparePage) -> dict[str, Any] | None:
    """Throughput per machine and device of the workloads the model picked (the same
    workloads on each machine, in the order the page asks about them)."""
    chart = model.chart
    if chart is None or not chart.rows or len(model.machines) < 2:
        return None
    names = [_series(s) for s in chart.series]
    rows = [costcharts.BarRow(_workload(w.workload, chart.columns), tuple(
        float("nan") if c is None or c.samples_per_s is None else c.samples_per_s
        for c in w.cells)) for w in chart.rows]
    path = f"{CHARTS}/compare-throughput.svg"
    writer.chart(costcharts.bars_chart, path, rows, names,
                 title="Best measured throughput per machine and device",
                 xlabel="samples per second (log scale), each device at its best setting",
                 hatches=[_DEVICES.get(s.device, ("", "xx"))[1] for s in chart.series])
    many = f"the {len(rows)} workloads" if len(rows) > 1 else "the workload"
    return {"path": path, "left_out": max(chart.candidates - len(rows), 0),
            "shown": len(rows),
            "caption": f"Samples per second of {many} measured {_machines(chart)}, training "
                       "and the largest batch first, PyTorch's defaults (fp32, one input "
                       "shape, eager) before the rest; one bar per machine and device, each at "
                       "its best measured setting there, a CPU's bars hatched, a GPU box's host "
                       "CPU included (log scale; no bar: not measured there).",
            "alt": "Best throughput per machine and device: " + alt_list(
                f"{r.label}: " + ", ".join(f"{name} {fmt.rate(v)}" for name, v in
                                           zip(names, r.values))
                for r in rows)}


def compare_page(writer: Writer, model: ComparePage, shared: Shared,
                 common: dict[str, Any]) -> None:
    p = page(shared, COMPARE_PAGE)
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
        leads=[_lead(p, model, lead, common["build"]) for lead in model.leads],
        chart=_chart(writer, model),
        banners=banner(model.machines),
        provenance=provenance(common["build"], model.machines),
        downloads=[f"{COMPARISONS}/best-throughput.csv" if throughput else ""],
        **common,
    )
