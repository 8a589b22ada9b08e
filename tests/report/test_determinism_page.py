"""The determinism page answers for every machine it lists: a CPU-only one is told the switch
does not apply (cuDNN is CUDA-only) before its re-run checks, and a cost is called "no
measurable cost" only where the intervals rule out a slowdown beyond δ."""

from __future__ import annotations

import re
from pathlib import Path

from .builders import axes, cell, env_for, render_tree, result_row

GPU = env_for("gpu-box", "run-1")
CPU = env_for("cpu-box", "run-1", gpu=False)


def _page(write_tree, tmp_path: Path, runs: list) -> str:
    generated = tmp_path / "generated"
    render_tree(write_tree(runs), generated)
    return (generated / "determinism.md").read_text()


def _answer(page: str, machine: str) -> str:
    found = re.search(rf'<div class="tk-answer" id="[^"]*" markdown>\n(\*\*{machine} .*?)\n', page)
    assert found, f"no answer for {machine}"
    return found.group(1)


def _cpu_rows(equal: str = "true") -> list:
    cpu = axes(device="cpu", model="resnet18")
    return [*cell(CPU, cpu, [0.10] * 3),
            result_row(CPU, cpu, kind="repro", repro_bitwise_equal=equal)]


def _gpu_rows(on_times: list[float]) -> list:
    rows = cell(GPU, axes(), [0.10] * 3) + cell(GPU, axes(cudnn_deterministic="on"), on_times)
    return [*rows, result_row(GPU, axes(), kind="repro", repro_bitwise_equal="true"),
            result_row(GPU, axes(cudnn_deterministic="on"), kind="repro",
                       repro_bitwise_equal="true")]


def test_a_cpu_machine_is_answered_not_applicable_before_its_checks(write_tree, tmp_path):
    """Its section used to show a bitwise re-run check and no answer at all."""
    page = _page(write_tree, tmp_path, [(CPU, _cpu_rows(), []), (GPU, _gpu_rows([0.10] * 3), [])])
    text = _answer(page, "cpu-box")
    assert "not applicable" in text and "cuDNN runs on CUDA GPUs only" in text
    assert "two fresh processes gave bitwise-equal results in the configuration checked" in text
    assert "#repro-" in text  # the check it rests on
    section = page.split("## On cpu-box")[1].split("## On")[0]
    assert section.index("Not applicable here") < section.index("Re-run checks")
    assert "Not applicable" not in page.split("## On gpu-box")[1]
    assert "not applicable" not in _answer(page, "gpu-box")


def test_a_cpu_only_site_still_answers_and_counts_unequal_checks(write_tree, tmp_path):
    page = _page(write_tree, tmp_path, [(CPU, _cpu_rows("false"), [])])
    text = _answer(page, "cpu-box")
    assert "not applicable" in text
    assert "bitwise-equal results in 0 of 1 configuration checked (the others differed" in text


def test_no_measurable_cost_only_where_the_interval_rules_out_a_slowdown(write_tree, tmp_path):
    """A +0.4% median change inside 0.99–1.01× is no measurable cost, per the Methodology."""
    tight = _answer(_page(write_tree, tmp_path / "a", [(GPU, _gpu_rows([0.10] * 3), [])]),
                    "gpu-box")
    assert "no clear difference; no measurable cost: the 95% intervals" in tight
    assert "rule out a slowdown beyond 3%" in tight
    wide = _answer(_page(write_tree, tmp_path / "b",
                         [(GPU, _gpu_rows([0.13, 0.08, 0.10]), [])]), "gpu-box")
    assert "(no clear difference)" in wide and "no measurable cost" not in wide


def test_a_benchmark_rerun_that_differs_in_the_kernel_cache_too_concludes_nothing(
        write_tree, tmp_path):
    """The H200: re-runs differed with benchmark on and a warm cache, and were equal with it
    off and a fresh one. "Bitwise re-runs also needed cudnn.benchmark off" blamed benchmark
    for what the cache may have done; with a matching off check, the conclusion stands."""
    on = result_row(GPU, axes(cudnn_benchmark="on", kernel_cache="warm"), kind="repro",
                    repro_bitwise_equal="false", repro_max_abs_diff=0.351)
    page = _page(write_tree, tmp_path, [(GPU, [*_gpu_rows([0.10] * 3), on], [])])
    text = " ".join(_answer(page, "gpu-box").split())
    assert "but the check with it off differs in kernel cache too" in text, text
    assert "also needed cudnn.benchmark off" not in text
    warm_off = result_row(GPU, axes(kernel_cache="warm"), kind="repro",
                          repro_bitwise_equal="true")
    page = _page(write_tree, tmp_path / "b", [(GPU, [*_gpu_rows([0.10] * 3), on, warm_off],
                                               [])])
    assert "bitwise re-runs also needed cudnn.benchmark off" in _answer(page, "gpu-box")
