"""The CPU-vs-GPU page's model: typed pairs, where the GPU starts to win and which batches
below it were too thin to tell, the pair an answer quotes, and the inference tails it lists,
all chosen by the model."""

from __future__ import annotations

from typing import Any

from bench.report.analysis import analyse
from bench.report.input.load import load_reports
from bench.report.judge.facts import Facts
from bench.report.judge.machines import machines_of
from bench.report.questions.cpu_gpu.model import CpuGpuPair, cpu_gpu_page

from .builders import axes, cell, env_for

ENV = env_for("gpu-box", "run-1")


def _curve(cpu: list[float | None], gpu: list[float], batch: int) -> list[dict[str, object]]:
    return (cell(ENV, axes(device="cpu", mode="infer", batch_size=batch, cpu_threads=""), cpu)
            + cell(ENV, axes(mode="infer", batch_size=batch), gpu))


def test_the_gpu_wins_from_a_batch_with_a_thin_one_below(write_tree: Any) -> None:
    rows = (_curve([0.004, None, None], [0.006] * 3, 1)  # too few replicates
            + _curve([0.004] * 3, [0.006] * 3, 4)  # the CPU is faster
            + _curve([0.06, 0.061, 0.059], [0.006] * 3, 16)
            + _curve([1.0, 1.01, 0.99], [0.01] * 3, 128))
    a = analyse(load_reports(write_tree([(ENV, rows, [])])))
    model = cpu_gpu_page(Facts(analysis=a, machines=machines_of(a.machines), recs=(),
                               regimes=(), claims=()))
    (s,) = model.sections
    assert all(isinstance(r, CpuGpuPair) for r in s.rows) and len(s.rows) == 4
    assert (s.crossing.curves, s.crossing.batches, s.crossing.thin) == (1, (16,), (1,))
    assert not s.crossing.all_thin
    assert s.top is not None and s.top.batch_size == 128  # the clearly faster pair, fastest
    assert [r.batch_size for r in s.tails] == [1, 16]
    assert "batch_size" in s.top_columns and "batch_size" not in s.columns
    assert len(model.pairs) == 4
