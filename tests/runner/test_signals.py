"""Ctrl-C and SIGTERM at chosen instants: the run always ends with the first signal's exit
code, every row written, and the line that says how to resume, never a traceback.

The hook (``TORCH_KNOBS_SIGNAL``, see ``bench.run.execute.hooks``) has the runner signal itself
at the instant under test, so nothing depends on timing. Through ``fake_cli.py``; the real server's
cases are in ``test_e2e.py``, but for Slurm's warning (SIGUSR2 to every process of the run),
which is here. After each case, ``ps`` shows nothing left running that names the run's folder.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.run.cluster import shards
from bench.run.plan.jobs import plan
from bench.run.plan.profiles import load_profile

from .conftest import ROOT, one_error_line, read_csv, run_fake_cli
from .procs import assert_none_survive, descendants

HOOK = "TORCH_KNOBS_SIGNAL"


@pytest.mark.parametrize(("signals", "code", "statuses"), [
    # the first Ctrl-C stops replicate 1; a second one comes while its child is being stopped
    ("launched@#r1=INT,stopping@#r1=INT", 130, ["ok", "interrupted"]),
    # ... or while the interrupted row is being written
    ("launched@#r1=INT,row-written@#r1=INT", 130, ["ok", "interrupted"]),
    # a SIGTERM first, then the user's Ctrl-C: the first one says how the run ended
    ("launched@#r1=TERM,stopping@#r1=INT", 143, ["ok", "interrupted"]),
    # a Ctrl-C as the run closes down, after its last row
    ("closing=INT", 130, ["ok", "ok", "ok"]),
    # one while the run stops, and one more as it closes down
    ("launched@#r2=INT,closing=INT", 130, ["ok", "ok", "interrupted"]),
])
def test_every_signal_ends_with_its_exit_code_and_the_resume_line(
        tmp_path: Path, tiny_profile: Callable[..., Path], signals: str, code: int,
        statuses: list[str]) -> None:
    out, profile = tmp_path / "run", tiny_profile(replicates=3)
    proc = run_fake_cli("--", "--profile", str(profile), "--out", str(out), "--only", "tiny",
                        env={HOOK: signals})
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last == f"resume with: python -m bench run --profile {profile} --only tiny " \
                   f"--out {out} --resume"
    assert [r["status"] for r in read_csv(out / "results.csv")] == statuses
    assert_none_survive(marker=str(out))  # nothing that names the run folder lives on
    assert run_fake_cli("--", *last.split()[6:]).returncode == 0, "and the line works"


def _wait_for_rows(path: Path, n: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not (path.exists() and len(path.read_text().splitlines()) >= n + 1):
        assert time.monotonic() < deadline, f"{path} never reached {n} rows"
        time.sleep(0.1)


@pytest.mark.parametrize("launcher", ["forkserver", "spawn"])
def test_slurms_warning_to_every_process_ends_the_replicate_in_flight_as_interrupted(
        tmp_path: Path, tiny_profile: Callable[..., Path], launcher: str) -> None:
    """Slurm sends its warning before a time limit (SIGUSR2) to every process of the job's
    step: the runner, its server and the replicate's child, each in a session of its own.
    The runner stops as for SIGTERM; the server and the child are not killed by it."""
    out, profile = tmp_path / "run", str(tiny_profile(replicates=3))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TORCH_KNOBS_FAULT": "hang@#r1"}
    proc = subprocess.Popen([sys.executable, "-m", "bench", "run", "--profile", profile,
                             "--out", str(out), "--launcher", launcher], env=env, cwd=ROOT,
                            stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_rows(out / "results.csv", 1)
        time.sleep(1.0)  # replicate 1 now hangs in its child
        below = [p.pid for p in descendants(proc.pid)]
        assert len(below) == 2, "the runner's server and the hanging child"
        for pid in below:  # Slurm's order is any: theirs first, and they must live on
            os.kill(pid, signal.SIGUSR2)
        time.sleep(0.5)
        assert [p.pid for p in descendants(proc.pid)] == below, "killed by the warning"
        os.kill(proc.pid, signal.SIGUSR2)
        _, err = proc.communicate(timeout=60)
        tree = [proc.pid, *below]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + signal.SIGUSR2, err
    assert "Traceback" not in err
    rows = read_csv(out / "results.csv")
    assert [r["status"] for r in rows] == ["ok", "interrupted"], err
    assert rows[1]["reason"] == "SIGUSR2 during the replicate"
    assert err.strip().splitlines()[-1] == (f"resume with: python -m bench run --profile "
                                            f"{profile} --out {out} --resume")
    assert_none_survive(pids=tree)


OTHER_STUDY = """
[studies.other]
mode = "train"
"""


def test_a_shards_resume_line_finishes_that_shard_and_only_it(
        tmp_path: Path, tiny_profile: Callable[..., Path]) -> None:
    profile, reports = tiny_profile(replicates=2, extra=OTHER_STUDY), tmp_path / "reports"
    proc = run_fake_cli("--", "--profile", str(profile), "--shard", "1/2", "--reports",
                        str(reports), "--run-id", "r-shard1", env={HOOK: "launched@#r1=TERM"})
    assert proc.returncode == 143, proc.stderr
    [out] = reports.glob("*/r-shard1")
    last = proc.stderr.strip().splitlines()[-1]
    assert last == (f"resume with: python -m bench run --profile {profile} --shard 1/2 "
                    f"--out {out} --resume")
    resumed = run_fake_cli("--", *last.split()[6:])
    assert resumed.returncode == 0, resumed.stderr
    mine = {j.cell.cell_id for j in shards.select(plan(load_profile(str(profile))), 1, 2)}
    rows = read_csv(out / "results.csv")
    assert {r["cell_id"] for r in rows} == mine, "no other shard's cell in its folder"
    ok = [(r["cell_id"], r["replicate"]) for r in rows if r["status"] == "ok"]
    assert len(ok) == len(set(ok)) == 2
    before = (out / "results.csv").read_bytes()
    for asked in ([], ["--shard", "2/2"]):  # no shard, or another: refused, nothing written
        refused = run_fake_cli("--", "--profile", str(profile), *asked, "--out", str(out),
                               "--resume")
        assert refused.returncode == 2
        assert "it holds shard 1/2 of a cluster run" in one_error_line(refused)
    assert (out / "results.csv").read_bytes() == before
    whole = tmp_path / "whole"
    assert run_fake_cli("--", "--profile", str(profile), "--out", str(whole)).returncode == 0
    refused = run_fake_cli("--", "--profile", str(profile), "--shard", "1/2", "--out",
                           str(whole), "--resume")
    assert refused.returncode == 2
    assert "it holds a whole run, not a shard" in one_error_line(refused)
