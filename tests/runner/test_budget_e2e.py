"""A budgeted run on a real CPU: it stops cleanly inside its budget (plus the replicate under
way), exit 0, with the resume line; the folder, copied to a second checkout of the same
fingerprint, resumes there and completes; the merged run holds every planned row once, in two
sittings, each recorded with the code it ran, and ``bench check`` is clean but for the code the
second checkout changed; the resume's dry run there says what is left, writing nothing. A copy
resumed under another fingerprint is refused in one line naming the facts that differ, its dry
run too."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.fingerprint import fingerprint_id
from bench.run.plan.jobs import plan
from bench.run.plan.matrix import select
from bench.run.plan.profiles import load_profile

from .conftest import ROOT, one_error_line, read_csv, run_cli, run_fake_cli
from .fakes import LIVE_ENV

STUDIES = ("--only", "modes", "--only", "shapes")
#: The budget: long enough that a sitting's two ends of pace probes (about 2 s each on a quiet
#: machine, several times that on a busy one) leave room for replicates.
BUDGET_S = 20.0
#: Replicates per cell: the smoke profile's two would let its 12 processes (about 6 s of work)
#: fit the budget whole on a quiet, fast machine; ten (60 processes) cannot, however fast.
REPLICATES = 10


def _profile(where: Path) -> Path:
    """The smoke profile with ``REPLICATES`` replicates per cell."""
    text = (ROOT / "bench" / "profiles" / "smoke.toml").read_text(encoding="utf-8")
    assert "\nreplicates = 2\n" in text
    path = where / "smoke-more.toml"
    path.write_text(text.replace("\nreplicates = 2\n", f"\nreplicates = {REPLICATES}\n", 1),
                    encoding="utf-8")
    return path


def _checkout(where: Path) -> Path:
    """A second checkout: the package copied elsewhere, run from there."""
    shutil.copytree(ROOT / "bench", where / "bench",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return where


@pytest.mark.e2e
def test_a_budgeted_run_stops_in_time_and_a_copy_resumes_it_elsewhere(tmp_path: Path) -> None:
    first = tmp_path / "first" / "run"
    profile = _profile(tmp_path)
    t0 = time.monotonic()
    proc = run_cli("run", "--profile", str(profile), *STUDIES, "--budget", f"{BUDGET_S:g}s",
                   "--out", str(first), timeout=300)
    took = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr
    rows = read_csv(first / "results.csv")
    planned = plan(select(load_profile(str(profile)), ["modes", "shapes"]))
    assert 0 < len(rows) < len(planned), "the budget stopped it part of the way"
    longest = max(float(r["wall_s"]) for r in rows)
    assert took <= BUDGET_S + longest + 5.0, (took, longest)  # 5 s: the interpreter's start
    assert f"budget {BUDGET_S:g} s reached: stopped before " in proc.stderr
    [hint] = [ln.removeprefix("resume with: ") for ln in proc.stderr.splitlines()
              if ln.startswith("resume with: ")]
    assert hint.endswith(f"--out {first} --budget {BUDGET_S:g}s --resume"), hint

    second = _checkout(tmp_path / "checkout")
    with open(second / "bench" / "run" / "plan" / "budget.py", "a", encoding="utf-8") as f:
        f.write("# a change in the second checkout's measuring code\n")
    copy = tmp_path / "elsewhere" / "run"
    shutil.copytree(first, copy)
    # its dry run says what the resume has left, and whether it fits, writing nothing
    before = {f.name: f.read_bytes() for f in copy.iterdir()}
    preview = subprocess.run(
        [sys.executable, "-m", "bench", "run", "--profile", str(profile), *STUDIES, "--out",
         str(copy), "--resume", "--budget", "1h", "--dry-run"], capture_output=True, text=True,
        timeout=300, cwd=second, env={**os.environ, "PYTHONPATH": str(second)})
    assert preview.returncode == 0, preview.stderr
    ok = sum(r["status"] == "ok" for r in rows)
    assert (f"resuming {copy} (sitting 2): {ok} of {len(planned)} processes already done, "
            f"{len(planned) - ok} left") in preview.stdout, preview.stdout
    assert f"{len(planned) - ok} processes, estimated" in preview.stdout
    assert "the whole plan fits" in preview.stdout
    assert {f.name: f.read_bytes() for f in copy.iterdir()} == before
    done = subprocess.run(
        [sys.executable, "-m", "bench", "run", "--profile", str(profile), *STUDIES, "--out",
         str(copy), "--resume"], capture_output=True, text=True, timeout=300, cwd=second,
        env={**os.environ, "PYTHONPATH": str(second)})
    assert done.returncode == 0, done.stderr
    merged = read_csv(copy / "results.csv")
    keys = [(r["kind"], r["cell_id"], r["replicate"]) for r in merged if r["status"] == "ok"]
    assert len(keys) == len(set(keys)) == len(planned), "every planned row once"
    assert {r["sitting"] for r in merged} == {"1", "2"}
    # env.json keeps the first sitting's facts and a record of each sitting: its budget and
    # the code it ran (the copy has no git to name a commit)
    one, two = json.loads((copy / "env.json").read_text())["sittings"]
    assert (one["sitting"], one["budget_s"], two["sitting"], two["budget_s"]) == (1, BUDGET_S,
                                                                                  2, None)
    assert one["code"] != two["code"] and two["commit"] is None
    for record in (one, two):  # real replicates: some of each sitting's time was measurement
        assert 0 < record["timed_s"] < record["wall_s"], record
    assert f"sitting 2 runs other measuring code ({two['code']}) than sitting 1" in done.stderr
    check = run_cli("check", str(copy))
    failed = [ln.split(None, 1)[1].split(" (")[0] for ln in check.stdout.splitlines()
              if ln.lstrip().startswith("FAIL")]
    # the files, rows and samples of the two sittings agree; a drifting steady state, or one
    # sitting's step time beyond the other's, is the tiny model's timing noise on a busy
    # machine, not the resume's doing; the code differs
    timing = {"steady drift", "sittings disagree"}
    assert "measuring code" in failed and set(failed) <= timing | {"measuring code"}, \
        check.stdout + check.stderr


def test_a_copy_resumed_under_another_fingerprint_names_what_differs(tmp_path: Path) -> None:
    profile = tmp_path / "p.toml"
    profile.write_text('[defaults]\nmodel = "resnet18"\nresolution = 32\nreplicates = 2\n'
                       "[studies.s]\n")
    run = tmp_path / "run"
    assert run_fake_cli("--", "--profile", str(profile), "--out", str(run)).returncode == 0
    other = tmp_path / "other.json"
    env = json.loads(json.dumps(LIVE_ENV))
    env["torch"]["version"] = "2.15.0"
    env["fingerprint_id"] = fingerprint_id(env)
    other.write_text(json.dumps(env))
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    before = {f.name: f.read_bytes() for f in copy.iterdir()}
    for dry in ((), ("--dry-run",)):  # its dry run is refused alike
        proc = run_fake_cli("--env", str(other), "--", "--profile", str(profile), "--out",
                            str(copy), "--resume", *dry)
        assert proc.returncode == 2
        line = one_error_line(proc)
        assert f"cannot resume {copy}: it was measured on fingerprint" in line
        assert 'torch.version "2.15.0" here, "2.14.1" there' in line
    assert {f.name: f.read_bytes() for f in copy.iterdir()} == before  # nothing written
