"""``--budget`` on a Slurm run: each shard runs ``bench run --budget`` and its job's time limit
is the budget and the planner's margin (``budget.slurm_minutes``), one planner for all."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from bench.run.cluster import node, slurm
from bench.run.plan.budget import slurm_minutes

from .conftest import run_cli
from .test_slurm import _time_limit, _wait_gone, cluster  # noqa: F401  (the fixture)


def test_a_budget_is_the_jobs_time_limit_and_reaches_each_shards_command() -> None:
    opts = slurm.Options(budget="9m")
    assert opts.parameters("n")["time"] == slurm_minutes(540) == 10
    assert opts.flags() == ["--budget", "9m"], "a resume line that --slurm-time would refuse"
    assert slurm.Options.recorded({"budget": "9m"}).limit_min == 10
    argv = node.shard_argv("smoke", Path("/nowhere"), "r1", 1, 2, budget="9m")
    assert "--budget" in argv and argv[argv.index("--budget") + 1] == "9m"


def test_a_bad_budget_or_a_budget_with_a_time_limit_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(slurm.SlurmError, match=r"--budget 'soon': not a positive duration"):
        slurm.Options(budget="soon").check()
    proc = run_cli("run", "--executor", "slurm", "--profile", "smoke", "--budget", "9m",
                   "--slurm-time", "15", "--reports", str(tmp_path))
    if "needs submitit" in proc.stderr:
        pytest.skip("submitit is not installed")
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("error: --budget sets each shard job's time limit (the "
                                   "budget and the planner's margin); give --budget or "
                                   "--slurm-time, not both")
    assert not any(tmp_path.iterdir()), "nothing written"


@pytest.mark.e2e
def test_a_budgeted_slurm_runs_shard_jobs_carry_its_time_limit(cluster: None,  # noqa: F811
                                                                tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    proc = run_cli("run", "--executor", "slurm", "--profile", "smoke", "--shards", "2",
                   "--budget", "90s", "--reports", str(reports), "--run-id", "b-smoke",
                   "--no-wait")
    assert proc.returncode == 0, proc.stderr
    sub = slurm.Submission.load(slurm.slurm_folder(reports, "b-smoke"))
    jobs = [j[-1] for j in sub.jobs]
    try:
        assert sub.options["budget"] == "90s"
        assert {_time_limit(j) for j in jobs} == {"00:03:00"}  # 90 s + the 60 s margin
    finally:
        subprocess.run(["scancel", *jobs], check=False)
        _wait_gone(jobs, time.monotonic() + 120)
