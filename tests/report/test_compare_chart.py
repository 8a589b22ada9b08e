"""The Compare page's chart: its rows are the workloads the page asks about (measured on the
most machines, training and the largest batch first, PyTorch's defaults first), never the
first ones of the alphabet; and a GPU box's host CPU is its own series, labelled and hatched
as a CPU, never drawn as the GPU."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from bench.report.judge.machines import Machine
from bench.report.questions.compare import view
from bench.report.questions.compare.model import (
    CHART_ROWS,
    WORKLOAD_KEY,
    ComparePage,
    Table,
    throughput_chart,
)

_SAME: dict[str, Any] = {k: "" for k in WORKLOAD_KEY} | {
    "resolution": 224, "shapes": "static", "compile": "off", "compile_dynamic": "auto"}


def _cell(page: str, device: str, model: str, mode: str, batch: int, precision: str,
          rate: float) -> dict[str, Any]:
    return {**_SAME, "model": model, "mode": mode, "batch_size": batch, "precision": precision,
            "page": page, "machine": page, "fingerprint_id": page, "device": device,
            "cell_id": f"{page}-{device}-{model}-{mode}-{batch}-{precision}",
            "anchor": f"cell-{page}-{device}", "samples_per_s": rate}


def _machine(page: str, gpu: bool) -> Machine:
    return Machine(page=page, machine=page, fingerprint_id=page, title=page,
                   hardware="H200" if gpu else "EPYC")


def _best(by_device: pd.DataFrame) -> pd.DataFrame:
    """Each machine's best per workload over its devices (as ``best_throughput`` keys it)."""
    return (by_device.sort_values("samples_per_s", ascending=False)
            .drop_duplicates(["page", *WORKLOAD_KEY]).sort_values(["page", *WORKLOAD_KEY]))


def _alphabet_hides_training() -> pd.DataFrame:
    """More workloads than the chart draws, all on both machines, named so that the alphabet
    puts every batch-128 training row past ``CHART_ROWS``."""
    rows = []
    for page, device, scale in (("gpu-box", "cuda", 100.0), ("laptop", "cpu", 1.0)):
        for i in range(CHART_ROWS + 4):  # "alexnet" infer rows first in the alphabet
            rows.append(_cell(page, device, "alexnet", "infer", i + 1, "fp32", scale * 50))
        for precision in ("amp-bf16", "fp32"):  # "vit_b_16" last in the alphabet
            rows.append(_cell(page, device, "vit_b_16", "train", 128, precision, scale * 3))
            rows.append(_cell(page, device, "vit_b_16", "train", 8, precision, scale * 2))
    rows.append(_cell("gpu-box", "cuda", "zzz_only_here", "train", 512, "fp32", 9.0))
    return pd.DataFrame(rows)


def test_the_chart_draws_training_at_the_largest_batch_first_not_the_alphabet() -> None:
    by_device = _alphabet_hides_training()
    machines = [_machine("gpu-box", True), _machine("laptop", False)]
    chart = throughput_chart(_best(by_device), by_device, machines)
    assert chart is not None
    got = [(w.workload.model, w.workload.mode, w.workload.batch_size, w.workload.precision)
           for w in chart.rows]
    assert len(got) == CHART_ROWS
    # training first, the largest batch first, the default precision first
    assert got[:4] == [("vit_b_16", "train", 128, "fp32"), ("vit_b_16", "train", 128, "amp-bf16"),
                       ("vit_b_16", "train", 8, "fp32"), ("vit_b_16", "train", 8, "amp-bf16")]
    # then inference, the largest batch first; a workload on one machine compares nothing
    assert [g[2] for g in got[4:]] == list(range(CHART_ROWS + 4, 4 + 4, -1))
    assert all(g[0] != "zzz_only_here" for g in got)
    assert (chart.on_machines, chart.of_machines, chart.candidates) == (2, 2, CHART_ROWS + 8)
    # every row has a figure of every machine: the same workload on each
    assert all(c is not None for w in chart.rows for c in w.cells)


def test_workloads_measured_on_the_most_machines_are_the_rows_and_the_caption_says_so(
        tmp_path: Path) -> None:
    rows = [_cell("a", "cpu", "resnet50", "infer", 1, "fp32", 10.0),
            _cell("b", "cpu", "resnet50", "infer", 1, "fp32", 12.0),
            _cell("b", "cpu", "resnet18", "train", 128, "fp32", 20.0),
            _cell("c", "cpu", "resnet18", "train", 128, "fp32", 30.0),
            _cell("c", "cpu", "mobilenet", "train", 256, "fp32", 30.0)]
    by_device = pd.DataFrame(rows)
    machines = [_machine(p, False) for p in ("a", "b", "c")]
    chart = throughput_chart(_best(by_device), by_device, machines)
    assert chart is not None and (chart.on_machines, chart.of_machines) == (2, 3)
    assert [w.workload.model for w in chart.rows] == ["resnet18", "resnet50"]
    drawn = _drawn(tmp_path, machines, chart)
    assert "on 2 of the 3 machines compared" in drawn["caption"]
    only_one = pd.DataFrame(rows[-1:])
    assert throughput_chart(_best(only_one), only_one, machines) is None


def _gpu_box_bf16_on_its_host_cpu() -> tuple[pd.DataFrame, list[Machine]]:
    """The H200 case: its bf16 cells ran only on its host CPU (147 samples/s), its fp32 ones
    on the GPU (2,477) and the CPU; a CPU-only machine measured both."""
    rows = [_cell("gpu-box", "cuda", "resnet50", "train", 128, "fp32", 2477.0),
            _cell("gpu-box", "cpu", "resnet50", "train", 128, "fp32", 60.0),
            _cell("gpu-box", "cpu", "resnet50", "train", 128, "amp-bf16", 147.0),
            _cell("laptop", "cpu", "resnet50", "train", 128, "fp32", 20.0),
            _cell("laptop", "cpu", "resnet50", "train", 128, "amp-bf16", 25.0)]
    return pd.DataFrame(rows), [_machine("gpu-box", True), _machine("laptop", False)]


def test_a_host_cpu_is_its_own_series_never_the_gpus() -> None:
    by_device, machines = _gpu_box_bf16_on_its_host_cpu()
    chart = throughput_chart(_best(by_device), by_device, machines)
    assert chart is not None
    assert [(s.machine.page, s.device) for s in chart.series] == [
        ("gpu-box", "cuda"), ("gpu-box", "cpu"), ("laptop", "cpu")]
    fp32, bf16 = chart.rows
    assert fp32.workload.precision == "fp32"
    assert [c.samples_per_s if c else None for c in fp32.cells] == [2477.0, 60.0, 20.0]
    # the bf16 figure the GPU box gave is its host CPU's: no GPU bar
    assert [c.samples_per_s if c else None for c in bf16.cells] == [None, 147.0, 25.0]


class _Writer:
    """Records the chart a view asks for instead of queueing it."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, tuple[Any, ...], dict[str, Any]]] = []

    def chart(self, draw: Any, rel: str, *args: Any, **kwargs: Any) -> None:
        self.calls.append((draw, args, kwargs))


def _drawn(tmp_path: Path, machines: list[Machine], chart: Any) -> dict[str, Any]:
    """The view's chart of ``chart``: its words, with the SVG drawn under ``tmp_path``."""
    model = ComparePage(summary=(), machines=tuple(machines), ceilings=(),
                        best=Table((), ()), workloads=(), columns=(), total_workloads=0,
                        priced=None, leads=(), superseded=(), outdated=(), chart=chart)
    writer = _Writer()
    words = view._chart(writer, model)  # type: ignore[arg-type]
    assert words is not None
    ((draw, args, kwargs),) = writer.calls
    svg = tmp_path / "chart.svg"
    draw(*args, svg, **kwargs)
    return {**words, "names": args[1], "svg": svg.read_text(encoding="utf-8")}


def test_the_host_cpus_bars_are_labelled_and_hatched_as_a_cpu(tmp_path: Path) -> None:
    by_device, machines = _gpu_box_bf16_on_its_host_cpu()
    chart = throughput_chart(_best(by_device), by_device, machines)
    drawn = _drawn(tmp_path, machines, chart)
    assert list(drawn["names"]) == ["gpu-box (GPU)", "gpu-box (CPU)", "laptop (CPU)"]
    assert "gpu-box (CPU) 147 samples/s" in drawn["alt"]
    assert "gpu-box (GPU) —" in drawn["alt"]  # bf16: not measured on the GPU
    # the CPUs' bars are hatched (a pattern fill), the GPU's solid: never colour alone. Bars
    # and legend patches: the host CPU's two bars and its legend patch, the laptop's likewise
    svg = drawn["svg"]
    hatched = re.findall(r"fill: url\(#h[0-9a-f]+\)", svg)
    assert len(hatched) == 2 * 3
    solid_blue = re.findall(r"fill: #0072b2", svg)
    assert len(solid_blue) == 1 + 1  # the GPU's one bar and its legend patch
