"""``bench check`` names a sitting of a run that ran slower than the others ("sittings
disagree"), with its figures, and says nothing of sittings that agree.

Run folders written here: every replicate's row and its three steady samples (the median at
the row's median), each cell's replicates one percent apart within a sitting, so the spread
within sittings is ~1% of log time and the limit a sitting may move is ~1.03x.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.run.store import check as checks
from bench.run.store.store import CsvAppender
from bench.schema import RESULT_COLUMNS, SAMPLE_COLUMNS

from .test_check import _row

JITTER = (0.99, 1.0, 1.01)


def _cell_rows(sitting: int, cell: str, base: float, device: str, first: int
               ) -> list[dict[str, Any]]:
    rows = []
    for i, j in enumerate(JITTER):
        m = base * j
        rows.append(_row(cell_id=cell, cell_name=f"{cell} {device} cell", device=device,
                         replicate=first + i, sitting=sitting, steady_median_s=m,
                         steady_p10_s=0.9 * m, steady_p90_s=1.1 * m, steady_mean_s=m,
                         samples_per_s=8 / m, cold_first_iter_s=10 * m, cold_pass_s=10 * m))
    return rows


def _write_run(run: Path, paces: dict[int, float], cells: dict[str, str],
               slow_cell: tuple[int, str, float] | None = None,
               records: list[dict[str, Any]] | None = None,
               gpu_paces: dict[int, float] | None = None) -> list[checks.Anomaly]:
    """A run whose sitting ``s`` ran every cell at ``paces[s]`` times its base step time
    (``cells``: cell id -> device), its GPU cells at ``gpu_paces[s]`` where given;
    ``slow_cell`` = (sitting, cell, factor) slows one more."""
    rows: list[dict[str, Any]] = []
    for s, pace in paces.items():
        for k, (cell, device) in enumerate(cells.items()):
            factor = slow_cell[2] if slow_cell and slow_cell[:2] == (s, cell) else 1.0
            if gpu_paces is not None and device == "cuda":
                factor *= gpu_paces[s] / pace
            rows += _cell_rows(s, cell, 0.1 * (k + 1) * pace * factor, device,
                               first=3 * (s - 1))
    run.mkdir(parents=True, exist_ok=True)
    CsvAppender(run / "results.csv", RESULT_COLUMNS).append(rows)
    CsvAppender(run / "samples.csv", SAMPLE_COLUMNS).append(
        [{"cell_id": r["cell_id"], "replicate": r["replicate"], "phase": "steady", "iter": i,
          "batch_size": 8, "resolution": 224, "seconds": x * r["steady_median_s"]}
         for r in rows for i, x in enumerate((0.95, 1.0, 1.05))])
    if records is not None:
        (run / "env.json").write_text(json.dumps({"sittings": records}))
    _, findings = checks.check_run(run)
    return findings


CPU = {f"c{k}": "cpu" for k in range(4)}
GPU = {f"g{k}": "cuda" for k in range(3)}


def test_a_slow_sitting_is_named_with_its_figures(tmp_path: Path) -> None:
    run = tmp_path / "run"
    findings = _write_run(run, {1: 1.0, 2: 1.0, 3: 1.58}, {**CPU, **GPU})
    assert {f.check for f in findings} == {"sittings disagree"}, findings
    # the host's cells alone: the GPU's cells of sitting 3 ran 1.58x too and are named apart
    said = sorted((f.where, f.problem) for f in findings)
    assert said == [
        (f"{run / 'results.csv'} sitting 3",
         "its GPU cells ran 1.58x the step times of the other sittings over 3 cells (beyond "
         "1.03x, the spread within sittings): left out of every verdict"),
        (f"{run / 'results.csv'} sitting 3",
         "its host-CPU cells ran 1.58x the step times of the other sittings over 4 cells "
         "(beyond 1.03x, the spread within sittings): left out of every verdict")]


def test_a_slow_host_is_named_and_its_gpu_is_not(tmp_path: Path) -> None:
    """Sitting 2's host-CPU cells ran slow, its GPU cells did not: only the host is named."""
    run = tmp_path / "run"
    findings = _write_run(run, {1: 1.0, 2: 1.6}, {**CPU, **GPU}, gpu_paces={1: 1.0, 2: 1.0})
    assert [(f.check, f.where) for f in findings] == [
        ("sittings disagree", f"{run / 'results.csv'} sitting 2")]
    assert "its host-CPU cells ran 1.60x" in findings[0].problem
    assert "over 4 cells" in findings[0].problem


def test_sittings_that_agree_have_no_such_finding(tmp_path: Path) -> None:
    findings = _write_run(tmp_path / "run", {1: 1.0, 2: 1.01, 3: 0.995}, {**CPU, **GPU})
    assert findings == []


def test_one_cells_slow_replicates_are_named_with_the_reference_sitting(tmp_path: Path) -> None:
    run = tmp_path / "run"
    findings = _write_run(run, {1: 1.0, 2: 1.0}, CPU, slow_cell=(2, "c1", 1.5))
    assert [(f.check, f.where) for f in findings] == [
        ("sittings disagree", f"{run / 'results.csv'} sitting 2 c1 cpu cell")]
    # three replicates a side: max(3%, 3 x 1% x sqrt(1/3 + 1/3)) = 3%
    assert findings[0].problem == ("its replicates ran 1.50x sitting 1's step time (beyond "
                                   "1.03x): left out of this cell's verdicts")


def test_the_pace_probes_in_env_json_count(tmp_path: Path) -> None:
    """Two shared cells are too few to judge a sitting's pace; the probe that env.json's
    sitting records hold, slow in sitting 2 as its cells are, makes three."""
    two = {"c0": "cpu", "c1": "cpu"}

    def records(slow: float) -> list[dict[str, Any]]:
        return [{"sitting": s, "code": "abcd", "commit": None, "pace": {
            "start": {"cpu_matmul": {"cell_id": "02ab92d368", "steady_p10_s": 0.2 * p}},
            "end": {"cpu_matmul": {"cell_id": "02ab92d368", "steady_p10_s": 0.202 * p}}}}
            for s, p in {1: 1.0, 2: slow}.items()]

    cells = tmp_path / "cells"
    alone = _write_run(cells, {1: 1.0, 2: 1.6}, two)  # no env.json: no probes
    # its cells are left out one by one, and no sitting is named
    assert sorted(f.where for f in alone) == [f"{cells / 'results.csv'} sitting 2 c0 cpu cell",
                                             f"{cells / 'results.csv'} sitting 2 c1 cpu cell"]
    assert all("its replicates ran 1.60x sitting 1's" in f.problem for f in alone)
    run = tmp_path / "probes"
    probed = _write_run(run, {1: 1.0, 2: 1.6}, two, records=records(1.6))
    assert [(f.where, f.problem.split(" (")[0]) for f in probed] == [
        (f"{run / 'results.csv'} sitting 2",
         "its host-CPU cells ran 1.60x the step times of the other sittings over 3 cells")]


def test_the_finding_is_printed_on_the_command_line(tmp_path: Path) -> None:
    from .conftest import run_cli

    run = tmp_path / "run"
    _write_run(run, {1: 1.0, 2: 1.6}, CPU)
    proc = run_cli("check", str(run))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAIL sittings disagree (1 findings)" in proc.stdout
    assert (f"{run / 'results.csv'} sitting 2: its host-CPU cells ran 1.60x the step times "
            "of the other sittings over 4 cells") in proc.stdout
