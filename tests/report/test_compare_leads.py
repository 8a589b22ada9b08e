"""The Compare page's answers in words: which workloads it leads with, and a GPU box's figure
that its host CPU gave is never quoted under the GPU box's name alone."""

from __future__ import annotations

from typing import Any

import pandas as pd

from bench.report.questions.compare.model import WORKLOAD_KEY, leads

#: What every cell of these hand-made tables shares, beside its workload's precision.
_SAME: dict[str, Any] = {k: "" for k in WORKLOAD_KEY} | {
    "model": "resnet50", "mode": "infer", "batch_size": 1, "resolution": 224}


def _cell(page: str, device: str, precision: str, rate: float) -> dict[str, Any]:
    return {**_SAME, "precision": precision, "page": page, "fingerprint_id": page,
            "cell_id": f"{page}-{device}-{precision}", "device": device,
            "samples_per_s": rate,
            "replicate_medians": [1 / rate * f for f in (0.98, 1.0, 1.02)]}


def test_workloads_a_gpu_box_ran_on_its_gpu_lead_and_the_others_name_its_host_cpu() -> None:
    rows = [
        # bf16: measured on three machines, the GPU box's only on its host CPU
        _cell("gpu-box", "cpu", "amp-bf16", 40.0), _cell("laptop", "cpu", "amp-bf16", 13.0),
        _cell("desktop", "cpu", "amp-bf16", 20.0),
        # fp32: as many machines, the GPU box by its GPU (its CPU cell slower)
        _cell("gpu-box", "cuda", "fp32", 136.0), _cell("gpu-box", "cpu", "fp32", 30.0),
        _cell("laptop", "cpu", "fp32", 13.0), _cell("desktop", "cpu", "fp32", 19.0),
    ]
    cells = pd.DataFrame(rows)
    best = cells.sort_values("samples_per_s", ascending=False).drop_duplicates(
        ["page", "precision"]).drop(columns="replicate_medians")
    best = best.sort_values(["precision", "page"])  # bf16 first, as best_throughput sorts
    got = leads(cells, best)
    assert [g.workload.precision for g in got] == ["fp32", "amp-bf16"]
    fp32, bf16 = got
    assert (fp32.fast.device, fp32.host_cpu) == ("cuda", frozenset())
    assert bf16.fast.page == "gpu-box" and bf16.host_cpu == frozenset({"gpu-box"})
    assert round(fp32.ratio, 1) == round(136 / 13, 1)


def test_the_leads_are_typed_rows() -> None:
    """A lead's rows are the page model's typed rows: plain values, missing ones None."""
    from bench.report.questions.compare.model import BestThroughput, WorkloadKey

    rows = [_cell("laptop", "cpu", "fp32", 13.0), _cell("desktop", "cpu", "fp32", 19.0)]
    cells = pd.DataFrame(rows)
    (lead,) = leads(cells, cells.drop(columns="replicate_medians"))
    assert type(lead.workload) is WorkloadKey and isinstance(lead.fast, BestThroughput)
    assert (lead.fast.page, lead.slow.page, lead.fast.samples_per_s) == ("desktop", "laptop", 19.0)
    assert lead.fast.n_ok is None  # a column the frame lacks keeps its default


def test_ceilings_and_workloads_line_up_with_the_machines() -> None:
    """Each line holds one cell per machine, in the page's machine order (None: not measured
    there), the GPU's ceilings first, those without a figure left out."""
    from types import SimpleNamespace

    from bench.report.questions.compare.model import ceiling_lines, throughput_lines

    machines: Any = [SimpleNamespace(page=p) for p in ("a", "b")]
    ceilings = pd.DataFrame([
        {"page": "b", "device": "cpu", "op": "copy", "achieved": 10.0, "anchor": "x"},
        {"page": "a", "device": "cuda", "op": "matmul-fp32", "achieved": 50.0, "anchor": "y"},
        {"page": "a", "device": "cpu", "op": "copy", "achieved": float("nan"), "anchor": "z"},
    ])
    first, second = ceiling_lines(ceilings, machines)
    assert (first.device, second.device) == ("cuda", "cpu")
    assert first.cells[0] is not None and first.cells[0].achieved == 50.0
    assert first.cells[1] is None and second.cells[0] is None
    best = pd.DataFrame([_cell("b", "cpu", "fp32", 13.0)]).drop(columns="replicate_medians")
    (line,) = throughput_lines(best[list(WORKLOAD_KEY)], best, machines)
    assert line.cells[0] is None and line.cells[1] is not None
    assert line.cells[1].samples_per_s == 13.0
