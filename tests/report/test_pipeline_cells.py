"""An input pipeline's figures come from its window past the workers' start-up, and its step
agrees with its throughput as a model cell's does.

A DataLoader hands each worker two batches when it starts; they arrive in a burst after the
first. On the H200 host, windows of 3 to 18 batches timed only that burst (8 workers read
2,351 samples/s where one sustained about 160), and a replicate's median batch (1.91 ms) was a
hundredth of its mean (215 ms), the batch over which the rate is."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from bench.report.analysis.startup import windows

from .builders import axes, env_for, render_tree, result_row

BATCH = 128


def _pipe(workers: int) -> dict[str, Any]:
    return {**axes(model="pipeline", batch_size=BATCH, cudnn_benchmark="n/a",
                   cudnn_deterministic="n/a", cudnn_benchmark_limit=""),
            "num_workers": workers, "decoder": "pil", "images": ""}


def _replicate(env: dict[str, Any], workers: int, replicate: int, first_iter: int,
               seconds: list[float]) -> tuple[dict[str, object], list[dict[str, object]]]:
    """An ok pipeline row and its samples: a cold batch, then ``seconds`` timed from batch
    ``first_iter`` on (the batches before it taken untimed), with the row's figures over
    all of them, as the child writes them."""
    total = sum(seconds)
    row = result_row(env, _pipe(workers), replicate, kind="pipeline", shape_count=1,
                     attempt_id=f"a{replicate}", steady_median_s=sorted(seconds)[len(seconds) // 2],
                     steady_mean_s=total / len(seconds), steady_iters=len(seconds),
                     samples_per_s=BATCH * len(seconds) / total, cold_first_iter_s=1.0,
                     cold_pass_s=1.0, decode_errors=0, cpu_time_s=9.0,
                     tree_peak_rss_bytes=2e9, peak_rss_bytes=6e8, wall_s=8.0)
    ids = {k: row[k] for k in ("schema_version", "run_id", "fingerprint_id", "cell_id",
                               "replicate", "attempt_id")}
    samples = [{**ids, "phase": "cold", "iter": 0, "batch_size": BATCH, "resolution": 224,
                "seconds": 1.0}]
    samples += [{**ids, "phase": "steady", "iter": first_iter + i, "batch_size": BATCH,
                 "resolution": 224, "seconds": s} for i, s in enumerate(seconds)]
    return row, samples


def _rounds(workers: int, wait: float, n: int) -> list[float]:
    """``n`` rounds as a loader in order delivers them: a wait for the first worker's batch,
    the others' already there."""
    return [wait if i % workers == 0 else 0.002 for i in range(n * workers)]


def _tree(write_tree: Any, reps: list[tuple[dict[str, object], list[dict[str, object]]]],
          env: dict[str, Any]) -> Path:
    return write_tree([(env, [r for r, _ in reps], [s for _, ss in reps for s in ss])])


def test_a_pipeline_cells_step_is_its_mean_batch_time(write_tree: Any, tmp_path: Path) -> None:
    env = env_for("box", "r1")
    # past the start-up (16 batches of 8 workers taken first): two whole rounds each
    reps = [_replicate(env, 8, i, 16, _rounds(8, wait, 2)) for i, wait in
            enumerate((1.586, 1.586 + 0.08, 1.586 + 0.32))]
    generated = tmp_path / "docs" / "generated"
    render_tree(_tree(write_tree, reps, env), generated)
    table = next((generated / "fragments").glob("*box*cells.html")).read_text(encoding="utf-8")
    row = next(r for r in table.split("<tr>") if "pipeline cuda" in r)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)
    assert cells[1] == "3 ok", cells
    assert cells[2] == "210 ms ± 20.0 ms", cells  # the mean batches' median and IQR, not 2 ms
    assert cells[3] == "610 samples/s", cells  # 128 / 210 ms: the two agree


def test_a_window_inside_the_start_up_gives_no_rate(write_tree: Any, tmp_path: Path) -> None:
    """Rows written before the child took the start-up untimed: 18 timed batches of 8
    workers, the first 15 of them the burst, leave less than two rounds."""
    env = env_for("box", "r1")
    burst = [0.002] * 7 + [0.17] + [0.002] * 7
    reps = [_replicate(env, 8, i, 1, [*burst, 0.54, 0.07, 0.01]) for i in range(3)]
    generated = tmp_path / "docs" / "generated"
    render_tree(_tree(write_tree, reps, env), generated)
    table = next((generated / "fragments").glob("*box*cells.html")).read_text(encoding="utf-8")
    row = next(r for r in table.split("<tr>") if "pipeline cuda" in r)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)
    assert html.unescape(cells[1]) == "3 ok (3 timed inside the workers' start-up)", cells
    assert cells[2:4] == ["—", "—"], cells
    feeding = html.unescape((generated / "feeding.md").read_text(encoding="utf-8"))
    assert "— (timed inside the workers' start-up)" in feeding
    assert "With 8 workers, every replicate timed only batches the workers were handed" in feeding
    assert "at its best worker count" not in feeding  # no host limit from a burst


def test_the_start_up_is_cut_and_whole_rounds_kept() -> None:
    """A window that began at the first batch after the cold one (iter 1) loses the 3 other
    start-up batches of 2 workers, then its odd batch at the end (a part of a round)."""
    times = [0.001, 0.001, 0.001, 0.3, 0.1, 0.3, 0.1, 0.3, 0.1, 0.5]
    rows = pd.DataFrame([{"fingerprint_id": "f", "run_id": "r", "cell_id": "c",
                          "replicate": 0, "num_workers": 2, "samples_per_s": 99.0,
                          "steady_mean_s": 0.1}])
    samples = pd.DataFrame([{"fingerprint_id": "f", "run_id": "r", "cell_id": "c",
                             "replicate": 0, "phase": "steady", "iter": 1 + i,
                             "batch_size": 8, "seconds": t} for i, t in enumerate(times)])
    got = windows(rows, samples).iloc[0]
    assert got["startup_cut"] == 3
    assert got["window_rate"] == pytest.approx(6 * 8 / 1.2)  # 0.3 0.1 0.3 0.1 0.3 0.1
    assert got["window_batch_s"] == pytest.approx(0.2)
    past = samples.assign(iter=samples["iter"] + 3)  # the child took the start-up untimed
    kept = windows(rows, past).iloc[0]
    assert (kept["startup_cut"], kept["window_rate"], kept["window_batch_s"]) == (0, 99.0, 0.1)
    short = samples.iloc[:6]  # 3 cut, 3 left: one whole round of two workers
    assert windows(rows, short).isna().iloc[0]["window_rate"]


def test_a_steps_consumption_is_the_rate_every_page_quotes_for_it(write_tree: Any) -> None:
    """The feeding page read a step's consumption as the median of its replicates' mean
    rates (4,329 samples/s) where the other pages quote batch over the median step (4,369):
    one step, two figures. The consumption is now the cell's own rate, its interval over
    each replicate's batch over median step."""
    from bench.report.analysis.cells import cell_stats
    from bench.report.analysis.feeding import consumption
    from bench.report.input.load import load_reports

    env = env_for("box", "run-1")
    steps = (0.030, 0.031, 0.029)
    rows = [result_row(env, axes(batch_size=BATCH), i, seconds=s,
                       samples_per_s=BATCH / (s * 1.05))  # a mean step 5% past the median
            for i, s in enumerate(steps)]
    cells = cell_stats(load_reports(write_tree([(env, rows, [])])))
    demand = consumption(cells).iloc[0]
    assert demand["rate"] == pytest.approx(float(cells.iloc[0]["samples_per_s"]))
    assert demand["rate"] == pytest.approx(BATCH / 0.030)
    assert demand["rate_low"] <= demand["rate"] <= demand["rate_high"]
