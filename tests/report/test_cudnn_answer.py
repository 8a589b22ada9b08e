"""The cudnn.benchmark answer's "up to" figures: each true of every pair it covers."""

from __future__ import annotations

from typing import Any

from bench.report import analysis
from bench.report.input.load import load_reports
from bench.report.judge.common import ordered
from bench.report.judge.machines import unknown_machine
from bench.report.questions.cudnn.model import CudnnPair, benchmark_summary, cudnn_section
from bench.report.questions.cudnn.view import _costs

from .builders import axes, cell, env_for

ENV = env_for("box", "run-1")
GIB = 2.0**30


def _pair(model: str, off_bytes: float, on_bytes: float) -> list[dict[str, object]]:
    """A benchmark off/on pair whose whole-run peak memory grows from ``off_bytes``."""
    times = [0.100, 0.101, 0.099]
    return (cell(ENV, axes(model=model), times, peak_mem_allocated_bytes=off_bytes,
                 cold_peak_mem_allocated_bytes=off_bytes)
            + cell(ENV, axes(model=model, cudnn_benchmark="on"), [t * 0.8 for t in times],
                   peak_mem_allocated_bytes=on_bytes, cold_peak_mem_allocated_bytes=on_bytes))


def test_the_memory_growths_up_to_holds_in_bytes_and_in_share_each_on_its_own(
        write_tree: Any) -> None:
    """The largest growth in bytes (+1 GiB, +10%) is not the largest in share (+0.5 GiB,
    +100%): "up to +10%" would be exceeded by the smaller model's pair."""
    root = write_tree([(ENV, _pair("resnet50", 10 * GIB, 11 * GIB)
                        + _pair("resnet18", 0.5 * GIB, 1.0 * GIB), [])])
    summary = benchmark_summary(analysis.analyse(load_reports(root)).benchmark)
    assert summary.memory_extra == GIB
    assert summary.memory_share is not None and abs(summary.memory_share - 1.0) < 1e-9
    assert "peak memory grows by up to 1.00 GiB (up to +100%)" in _costs(summary)


def test_a_section_hands_its_view_typed_pairs_and_what_they_add_up_to(write_tree: Any) -> None:
    """The view reads rows, label columns and the chart's choices off the model, no frame."""
    root = write_tree([(ENV, _pair("resnet50", 10 * GIB, 11 * GIB)
                        + _pair("resnet18", 0.5 * GIB, 1.0 * GIB), [])])
    pairs = ordered(analysis.analyse(load_reports(root)).benchmark)
    s = cudnn_section(unknown_machine("box"), pairs)
    assert [type(r) for r in s.rows] == [CudnnPair, CudnnPair]
    assert [r.model for r in s.rows] == list(pairs["model"])
    assert s.columns == s.summary.columns == ("model", "mode")
    assert s.summary.total == 2 and isinstance(s.summary.quoted, CudnnPair)
    assert s.pays_back == any(r.pays_back for r in s.rows)
    assert s.no_saving == (not s.pays_back)
    assert all(r.break_even_iters is not None for r in s.break_even)
