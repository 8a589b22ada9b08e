"""``--budget``: durations as people write them, the planner every budget shares (whole
studies first, in the profile's order), the runner that stops before a job it expects to end
past the budget, and what a budgeted run says it left (no torch)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.run.execute import runner
from bench.run.plan import budget
from bench.run.plan.budget import Budget, BudgetError, fit_studies, parse_duration
from bench.run.plan.jobs import Job, plan
from bench.run.plan.matrix import select
from bench.run.plan.profiles import load_profile
from bench.run.store.store import RunStore

from .conftest import read_csv
from .fakes import ENV, FakeLauncher


@pytest.mark.parametrize(("text", "seconds"), [
    ("90s", 90.0), ("9m", 540.0), ("1h", 3600.0), ("1h30m", 5400.0), ("1.5h", 5400.0),
    ("2m30s", 150.0), ("120", 120.0), (" 45 S ", 45.0)])
def test_durations_read_as_written(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "0", "-5m", "ninety", "5 minutes", "1d", "m", "inf"])
def test_a_bad_duration_is_one_line_with_the_valid_forms(text: str) -> None:
    with pytest.raises(BudgetError) as err:
        parse_duration(text)
    assert str(err.value) == (f"--budget {text!r}: not a positive duration; valid forms: 90s, "
                              "9m, 1h, 1h30m, or a number of seconds")


@pytest.mark.parametrize("text", ["9000h", "999999999999999h", "4e7"])
def test_a_budget_past_a_year_is_refused_in_one_line(text: str) -> None:
    with pytest.raises(BudgetError) as err:
        parse_duration(text)
    assert str(err.value).startswith(f"--budget {text!r}: more than a year; valid forms: 90s")


@pytest.mark.parametrize(("seconds", "said"), [
    (90, "90 s"), (540, "9 min"), (570, "9.5 min"), (3540, "59 min"), (3600, "1 h"),
    (5400, "1 h 30 min"), (86400 * 2, "48 h")])
def test_a_duration_is_said_as_given_not_rounded_up_a_minute(seconds: float, said: str) -> None:
    assert budget.shown(seconds) == said


def test_greedy_keeps_order_and_skips_a_dear_item_for_cheaper_later_ones() -> None:
    assert budget.greedy([("a", 5), ("b", 50), ("c", 4)], 10) == (["a", "c"], ["b"], 9)
    assert budget.greedy([("a", 11)], 10) == ([], ["a"], 0)


def _jobs(only: tuple[str, ...] = ("modes", "shapes", "repro")) -> list[Job]:
    return plan(select(load_profile("smoke"), list(only)))


def test_whole_studies_fit_in_order_and_their_jobs_run_first() -> None:
    jobs = _jobs()
    seconds = {j.key: 1.0 for j in jobs}  # modes: 8 jobs, shapes: 4, repro: 1
    fit = fit_studies(jobs, seconds, 9.5)
    assert (fit.whole, fit.later, fit.estimate_s, fit.total_s) == (("modes", "repro"),
                                                                    ("shapes",), 9.0, 13.0)
    order = budget.budget_order(jobs, fit)
    assert {j.study.name for j in order[:9]} == {"modes", "repro"}
    assert [j.replicate for j in order[:8]] == [0, 0, 0, 0, 1, 1, 1, 1], "still in rounds"
    assert {j.study.name for j in order[9:]} == {"shapes"}


def test_a_study_sharing_a_cell_with_an_earlier_one_pays_only_for_its_own() -> None:
    """The cpu profile's layout study shares its NCHW cells with the batch study: with room
    for the batch study and layout's own cells only, both fit whole."""
    jobs = plan(load_profile("cpu"))
    seconds = {j.key: 1.0 for j in jobs}
    batch, layout = budget.needs(jobs, "batch"), budget.needs(jobs, "layout")
    assert batch & layout, "the batch and layout studies share a cell"
    fit = fit_studies(jobs, seconds, len(batch | layout))
    assert fit.whole[:2] == ("batch", "layout") and fit.estimate_s == len(batch | layout)
    tight = fit_studies(jobs, seconds, len(batch | layout) - 1)
    assert tight.whole[0] == "batch" and "layout" in tight.later


def _run(tmp_path: Path, limit: float, seconds: float) -> tuple[runner.Runner, list[Job]]:
    prof = select(load_profile("smoke"), ["modes"])
    store = RunStore(tmp_path / "run")
    store.open()
    launcher = FakeLauncher()  # each child ends one 0.2 s poll later on the fake clock
    ctx = runner.RunContext("run1", prof.name, runner.Probe(ENV, [], False))
    r = runner.Runner(launcher, store, ctx, clock=launcher.clock, workdir=tmp_path)
    jobs = plan(prof)
    assert r.run(jobs, set(), Budget(limit, 0.0), {j.key: seconds for j in jobs}) == 0
    return r, jobs


def test_the_runner_stops_before_a_job_expected_to_end_past_the_budget(tmp_path: Path) -> None:
    r, jobs = _run(tmp_path, limit=0.95, seconds=0.3)
    rows = read_csv(tmp_path / "run" / "results.csv")
    # a job starts only if now + its estimate <= 0.95: at 0, .2, .4, .6; not at .8, where the
    # first round taught it that a replicate of this cell takes 0.2 s
    assert len(rows) == 4 and r.budget_stop == jobs[4]
    assert r.finished == {j.key for j in jobs[:4]}
    left = budget.ending(jobs, r.finished, 0.95, r.budget_stop, {j.key: 0.3 for j in jobs})
    assert (left.complete, left.partly, left.untouched, left.left) == ((), (("modes", 4, 8),),
                                                                        (), 4)
    lines = budget.ending_lines(left)
    assert lines[0].startswith("budget 1 s reached: stopped before modes: ")
    assert "4 processes left" in lines[0]
    assert lines[1] == ("begun: modes (4 of 8 processes); replicates run in rounds, so each of "
                        "their cells has as many as the others, or one fewer")


def test_a_budget_that_holds_everything_runs_everything(tmp_path: Path) -> None:
    r, jobs = _run(tmp_path, limit=100.0, seconds=0.3)
    assert r.budget_stop is None and r.finished == {j.key for j in jobs}
    done = budget.ending(jobs, r.finished, 100.0, None, {})
    assert done.complete == ("modes",)
    assert budget.ending_lines(done) == ["budget 100 s: every planned process ran"]


def test_the_runner_learns_a_cells_cost_from_its_first_replicates(tmp_path: Path) -> None:
    """Estimated at 0.01 s, each job takes 0.2 s: after the first round the runner expects
    0.2 s a job, and stops a job earlier than the plan's estimate alone would."""
    r, jobs = _run(tmp_path, limit=1.15, seconds=0.01)
    assert len(r.finished) == 5  # started at 0, .2, .4, .6 (guessed), .8 (0.8 + 0.2 <= 1.15)
    assert r.budget_stop == jobs[5]


def test_a_slurm_time_limit_is_the_budget_and_the_planners_margin() -> None:
    assert budget.slurm_minutes(540) == 10  # 9 min + 1 min margin
    assert budget.slurm_minutes(3600) == 66  # 1 h + 10%
    assert budget.slurm_minutes(1) == 2


@pytest.mark.parametrize(("whole", "later", "said"), [
    ((), ("a", "b"), "no study fits whole; then, while the time lasts: a, b"),
    (("a",), ("b",), "a first, whole (~30 s); then, while the time lasts: b"),
    (("a", "b"), (), "the whole plan fits (~90 s estimated)"),
])
def test_the_budget_line_says_what_fits_after_the_probe(whole: tuple[str, ...],
                                                        later: tuple[str, ...], said: str) -> None:
    """The line ``bench run`` and ``--dry-run`` print: the room is what the probe left, so a
    plan shorter than the budget can still fit no study whole, and the line must not read
    as if the budget were too small for nothing."""
    line = budget.fit_line(budget.StudyFit(whole, later, 30.0, 90.0), 50.0, 35.0)
    assert line.startswith("budget 50 s (35 s left after the probe)")
    assert line.endswith(said)


def test_a_budget_the_probe_spent_is_refused_naming_what_would_do() -> None:
    tight = Budget(10.0, start=100.0)
    line = budget.too_short(tight, 108.0, [3.0, 5.0])
    assert line == ("--budget 10 s: the probe took 8 s of it, and the shortest replicate needs "
                    "~3.0 s: nothing would run, so nothing was written; allow at least 11 s "
                    "(the whole plan: ~16 s)")
    assert budget.too_short(tight, 107.0, [3.0, 5.0]) is None  # the shortest just fits
    assert budget.too_short(tight, 101.0, []) is None  # nothing to run: nothing to refuse
