"""Estimates learned from committed rows (``bench.run.plan.learned``), brought to the machine's
pace now (``bench.run.plan.pace``): the arithmetic on written runs, then the probe for real."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bench.run.execute import probe as probing
from bench.run.execute.launch import ForkServerLauncher
from bench.run.plan import learned, pace
from bench.run.plan.dryrun import pace_line
from bench.run.plan.learned import CellCost
from bench.run.plan.matrix import Cell
from bench.run.plan.profiles import load_profile

ENV = {"fingerprint_id": "f" * 12, "machine": "box", "cpu": {"affinity": 2}}
PLAN = {"studies": {"s": {"settings": {"warmup_iters": 0, "min_time_s": 0.5}},
                    "w": {"settings": {"warmup_iters": 2, "min_time_s": 0.5}}}}
COLUMNS = ("cell_id", "study", "kind", "device", "status", "steady_median_s", "steady_p10_s",
           "steady_mean_s", "steady_iters", "cold_pass_s", "wall_s", "attempt_id", "started_at")


def _row(cell: str, t: float, n: int, cold: float, wall: float, *, study: str = "s",
         device: str = "cpu", kind: str = "model", status: str = "ok",
         p10: float | None = None) -> dict[str, Any]:
    return {"cell_id": cell, "study": study, "kind": kind, "device": device, "status": status,
            "steady_median_s": t, "steady_p10_s": t if p10 is None else p10,
            "steady_mean_s": t, "steady_iters": n, "cold_pass_s": cold, "wall_s": wall}


def _reference(*p10s: float) -> list[dict[str, Any]]:
    """A run's rows of the pace's reference cell (a ceiling, with its own costs too)."""
    return [_row(pace.REFERENCE_ID, p, 5, p, 1.0, kind="ceiling", p10=p) for p in p10s]


def _run(reports: Path, name: str, rows: Sequence[Mapping[str, Any]],
         env: Mapping[str, Any] = ENV) -> None:
    folder = reports / str(env["machine"]) / name
    folder.mkdir(parents=True)
    (folder / "env.json").write_text(json.dumps({**env, "plan": PLAN}), encoding="utf-8")
    with open(folder / "results.csv", "w", newline="", encoding="utf-8") as f:
        out = csv.DictWriter(f, COLUMNS)
        out.writeheader()
        out.writerows(rows)


def _now(p10: float) -> dict[str, Any]:
    return {**ENV, pace.ENV_KEY: {"cell_id": pace.REFERENCE_ID, "steady_p10_s": p10}}


def test_a_cells_parts_are_medians_over_its_ok_rows_of_this_fingerprint(tmp_path: Path) -> None:
    _run(tmp_path, "r1", [_row("a", 0.1, 10, 0.3, 2.0), _row("a", 0.3, 10, 0.5, 4.0),
                          _row("a", 0.2, 10, 0.4, 3.0), _row("a", 9.0, 1, 9.0, 99.0,
                                                             status="error"),
                          _row("w", 0.1, 10, 0.2, 2.0, study="w")])
    _run(tmp_path, "other", [_row("a", 5.0, 10, 5.0, 60.0)],
         env={**ENV, "fingerprint_id": "0" * 12})
    got = learned.history(tmp_path, ENV)
    a = got["a"]
    assert (a.iteration_s, a.cold_s, a.steady_s, a.overhead_s) == \
        pytest.approx((0.2, 0.4, 2.0, 0.6))
    assert (a.rows, a.fingerprint, a.scale) == (3, "f" * 12, 1.0), "the error row left out"
    assert got["w"].overhead_s == pytest.approx(2.0 - 0.2 - 1.0 - 2 * 0.1), "its warm-up apart"


def test_a_pipelines_untimed_start_up_batches_are_not_its_overhead(tmp_path: Path) -> None:
    """A pipeline row's window began where its samples say: past the workers' start-up in a
    row measured so, after the first batch in an older one. What ran before it is planned
    again by the estimate, so the learned overhead leaves it out, and the estimate of the same
    cell under the same rule is the row's wall time again."""
    from bench.run.plan import estimate
    from bench.run.plan.matrix import Settings

    new = {**_row("p", 0.1, 8, 0.5, 3.0, kind="pipeline"), "attempt_id": "n1"}
    old = {**_row("q", 0.1, 8, 0.5, 3.0, kind="pipeline"), "attempt_id": "o1"}
    _run(tmp_path, "r1", [new, old])
    with open(tmp_path / "box" / "r1" / "samples.csv", "w", encoding="utf-8") as f:
        f.write("attempt_id,phase,iter,seconds\n" + "".join(
            f"{a},{phase},{i},0.1\n" for a, first in (("n1", 4), ("o1", 1))
            for phase, i in [("cold", 0), *(("steady", first + k) for k in range(8))]))
    got = learned.history(tmp_path, ENV)
    assert got["p"].overhead_s == pytest.approx(3.0 - 0.5 - 0.8 - 3 * 0.1), "3 start-up batches"
    assert got["q"].overhead_s == pytest.approx(3.0 - 0.5 - 0.8)
    cell = Cell(kind="pipeline", mode="train", batch_size=8, num_workers=2, model="n/a")
    rule = Settings(warmup_iters=0, min_iters=8, min_time_s=0.8, max_time_s=0.8)
    assert estimate.replicate_s(cell, rule, 2, cost=got["p"]) == pytest.approx(3.0)


def test_the_cpu_cells_are_brought_to_the_pace_now(tmp_path: Path) -> None:
    """The run's reference took 0.2 s (median p10), now 0.1 s: its CPU cells cost half, but a
    steady window the stopping rule's 0.5 s made stays 0.5 s, and a CUDA cell is untouched."""
    _run(tmp_path, "r1", [*_reference(0.18, 0.2, 0.25),
                          _row("slow", 0.4, 5, 1.0, 4.0),  # a window of 2.0 s: 5 iterations
                          _row("quick", 0.01, 60, 0.02, 1.0),  # 0.6 s: the time rule's
                          _row("gpu", 0.01, 60, 0.5, 2.0, device="cuda")])
    got = learned.history(tmp_path, _now(0.1))
    slow = got["slow"]
    assert (slow.iteration_s, slow.cold_s, slow.steady_s, slow.overhead_s, slow.scale) == \
        pytest.approx((0.2, 0.5, 1.0, 0.5, 0.5))
    assert got["quick"].steady_s == pytest.approx(0.5) and got["quick"].iteration_s == 0.005
    gpu = got["gpu"]
    assert (gpu.iteration_s, gpu.cold_s, gpu.steady_s, gpu.overhead_s, gpu.scale) == \
        pytest.approx((0.01, 0.5, 0.6, 0.9, 1.0))
    slower = learned.history(tmp_path, _now(0.3))["quick"]
    assert (slower.steady_s, slower.scale) == pytest.approx((0.9, 1.5)), "slower now: longer"


def test_rows_that_cannot_be_paced_only_fill_cells_that_paced_rows_leave(tmp_path: Path) -> None:
    _run(tmp_path, "paced", [*_reference(0.2), _row("a", 0.4, 5, 1.0, 4.0)])
    _run(tmp_path, "unpaced", [_row("a", 4.0, 5, 10.0, 40.0), _row("b", 0.4, 5, 1.0, 4.0)])
    got = learned.history(tmp_path, _now(0.1))
    assert (got["a"].rows, got["a"].iteration_s, got["a"].scale) == (1, 0.2, 0.5)
    assert (got["b"].rows, got["b"].iteration_s, got["b"].scale) == (1, 0.4, 1.0)
    plain = learned.history(tmp_path, ENV)  # no pace now: the newest run's rows, as measured
    assert (plain["a"].rows, plain["a"].iteration_s, plain["a"].scale) == (1, 4.0, 1.0)


def test_a_cell_is_estimated_from_the_newest_run_that_measured_it(tmp_path: Path) -> None:
    """Rows of older code cost more outside their timed windows: the newest run that
    measured a cell gives its parts (by its rows' start, whatever the folders are called),
    and a cell only an older run measured keeps that run's."""
    def at(row: dict[str, Any], day: str) -> dict[str, Any]:
        return {**row, "started_at": f"2026-12-0{day}T10:00:00+00:00"}

    _run(tmp_path, "z-old", [at(_row("a", 0.2, 10, 0.4, 5.0), "3"),
                             at(_row("a", 0.2, 10, 0.4, 5.2), "3"),
                             at(_row("b", 0.1, 10, 0.2, 2.0), "3")])
    _run(tmp_path, "a-new", [at(_row("a", 0.2, 10, 0.4, 2.6), "4")])
    got = learned.history(tmp_path, ENV)
    assert (got["a"].rows, got["a"].overhead_s) == (1, pytest.approx(2.6 - 0.4 - 2.0))
    assert (got["b"].rows, got["b"].overhead_s) == (1, pytest.approx(2.0 - 0.2 - 1.0))


def test_the_pace_is_measured_only_where_a_run_can_be_compared(tmp_path: Path) -> None:
    """A run of this kind of machine that measured the reference and one of the plan's
    cells, ok: without one, the pace would scale nothing."""
    _run(tmp_path, "unpaced", [_row("a", 0.4, 5, 1.0, 4.0)])
    assert not learned.has_reference(tmp_path, ENV, {"a"})
    _run(tmp_path, "failed", [{**_reference(0.2)[0], "status": "error"},
                              _row("a", 0.4, 5, 1.0, 4.0)])
    assert not learned.has_reference(tmp_path, ENV, {"a"})
    _run(tmp_path, "paced", [*_reference(0.2), _row("a", 0.4, 5, 1.0, 4.0, status="error"),
                             _row("b", 0.4, 5, 1.0, 4.0)])
    assert learned.has_reference(tmp_path, ENV, {"b"})
    assert not learned.has_reference(tmp_path, ENV, {"a"}), "its row of a failed"
    assert not learned.has_reference(tmp_path, {**ENV, "machine": "another-box"}, {"b"})


@pytest.mark.parametrize("name", ["cpu", "gpu", "full"])
def test_the_reference_is_the_cpu_ceiling_the_profiles_measure(name: str) -> None:
    ids = {c.cell_id for s in load_profile(name).studies for c in s.cells}
    assert pace.REFERENCE_ID in ids


def test_an_env_without_a_pace_or_with_another_reference_has_none() -> None:
    assert pace.now_s(ENV) is None
    assert pace.now_s({pace.ENV_KEY: {"cell_id": "0" * 10, "steady_p10_s": 0.1}}) is None
    assert pace.now_s({pace.ENV_KEY: {"cell_id": pace.REFERENCE_ID, "steady_p10_s": -1}}) is None
    assert pace.now_s(_now(0.1)) == 0.1


def test_the_dry_run_says_what_the_costs_were_scaled_by() -> None:
    cost = CellCost(0.1, 0.1, 0.5, 0.1, 3, "f" * 12)
    assert pace_line({"a": cost}) == ""
    line = pace_line({"a": replace(cost, scale=0.8), "b": cost})
    assert line.startswith("the CPU cells' measured costs scaled by ×0.80: ")
    assert line.endswith("in the run they come from")


@pytest.mark.e2e
def test_a_real_probe_times_the_pace_when_a_run_can_be_compared(tmp_path: Path) -> None:
    cells = [Cell(model="resnet18"), Cell(device="cuda")]
    with ForkServerLauncher() as launcher, probing.probe_folder() as work:
        bare = probing.probe(launcher, work)
        _run(tmp_path, "r1", [*_reference(0.1),
                              _row(cells[1].cell_id, 0.1, 5, 1, 2, device="cuda")], env=bare.env)
        alone = probing.paced(launcher, work, bare, tmp_path, cells)
        assert alone is bare, "no CPU cell of the plan in that run: nothing to scale"
        _run(tmp_path, "r2", [*_reference(0.1), _row(cells[0].cell_id, 0.1, 5, 1, 2)],
             env=bare.env)
        found = probing.paced(launcher, work, bare, tmp_path, cells)
    now = pace.now_s(found.env)
    assert now is not None and 1e-4 < now < 60
    assert found.fingerprint_id == bare.fingerprint_id, "outside the fingerprint"
    assert learned.history(tmp_path, found.env)[cells[0].cell_id].scale == \
        pytest.approx(now / 0.1)


def test_a_rerun_check_is_estimated_from_its_own_rows(tmp_path: Path) -> None:
    """A bitwise re-run check is two processes of a few seeded steps: its row's wall time is
    the whole job. It used to be planned as twice a timed replicate of its cell (7.8 s where
    the cpu profile's took 2.8 s); its own row now gives it, at the pace now, apart from the
    cell's timed replicates."""
    from bench.run.plan import estimate
    from bench.run.plan.jobs import plan
    from bench.run.plan.matrix import select
    from bench.run.protocol import Probe

    jobs = plan(select(load_profile("smoke"), ["repro"]))
    (job,) = [j for j in jobs if j.op == "repro"]
    cid = job.cell.cell_id
    _run(tmp_path, "r1", [*_reference(0.2),
                          {**_row(cid, 0.4, 5, 1.0, 4.0), "kind": "repro",
                           "steady_median_s": "", "steady_mean_s": "", "steady_iters": "",
                           "cold_pass_s": "", "wall_s": 3.0}])
    got = learned.history(tmp_path, _now(0.1))
    assert cid not in got, "a re-run check's row is not its cell's replicate"
    assert got[learned.repro_key(cid)].overhead_s == pytest.approx(1.5), "at half the pace"
    probe = Probe({**ENV, "cpu": {"affinity": 2}}, ["mobilenet_v3_small"], False)
    (seconds, basis), = [sb for j, sb in zip(jobs, estimate.jobs_basis(jobs, probe, got))
                         if j.op == "repro"]
    assert (seconds, basis) == (pytest.approx(1.5), estimate.MEASURED)
    (guessed, how), = [sb for j, sb in zip(jobs, estimate.jobs_basis(jobs, probe, {}))
                       if j.op == "repro"]
    assert how == estimate.GUESSED and guessed != pytest.approx(1.5)
