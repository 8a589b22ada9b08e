"""A real run whose second sitting ran on a busy CPU: ``bench check`` names that sitting, and
the report leaves its replicates out of the verdicts.

The smoke profile's ``modes`` study (four CPU cells, two replicates each, measured in rounds
over the cells): sitting 1 is stopped as round two begins (a Ctrl-C as its first ``#r1``
replicate is launched, ``TORCH_KNOBS_SIGNAL``), so it holds replicate 0 of every cell; the
``--resume`` that makes sitting 2 measures the replicates 1 while a CPU burner (two spinning
processes per core, each in its own session, the run as SCHED_BATCH) runs for exactly that
sitting. Sitting 2 is stopped once its last row is written, which spares its closing pace probe
(seconds under the burner); its opening probe and four cells make five cells shared with
sitting 1.

All four cells are needed, not three: on a 2-vCPU VM the burner slows the training steps and
the matmul probe 5-7x but makes the two small inference steps about 2x *faster* (spinning
vCPUs are never halted, so the run's threads wake sooner), and a sitting's pace is the median
over its shared cells: 3 slow of 5 holds, 2 of 4 is a coin toss.

It takes ~10 s of sitting 1 and ~20-30 s of sitting 2 on two cores.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.report.analysis import analyse
from bench.report.input.load import load_reports
from bench.sittings import Agreement

from .conftest import ROOT, read_csv, run_cli

pytestmark = pytest.mark.e2e

RUN = ("run", "--profile", "smoke", "--only", "modes")
HOOK = "TORCH_KNOBS_SIGNAL"
#: Spinning processes per core, each in a session of its own: with the scheduler's autogroups
#: (sched_autogroup_enabled) CPU time is shared between sessions, not processes, so spinners
#: in the test's own session would take one share between them, however many.
SPINNERS_PER_CORE = 2
#: A spinning process that ends itself after two minutes, should a kill ever miss it.
SPIN = "import time\nend = time.monotonic() + 120\nwhile time.monotonic() < end:\n    pass\n"


def _burn(burners: list[subprocess.Popen[bytes]]) -> None:
    """Start the spinners into ``burners`` (one by one: those started are killed even if a
    later start fails)."""
    for _ in range(SPINNERS_PER_CORE * len(os.sched_getaffinity(0))):
        burners.append(subprocess.Popen([sys.executable, "-c", SPIN], start_new_session=True))


def _batch() -> None:
    """The resumed run and its children as SCHED_BATCH: no wake-up preemption, so a thread
    that sleeps between short bursts (a small model's steps) cannot jump ahead of the
    spinners and gets its fair share, no more (on a VM, spinners that keep idle vCPUs awake
    can even make such steps faster than on a quiet machine)."""
    os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))


def _resume_busy(out: Path, hook: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TORCH_KNOBS_FAULT"}
    env.update(PYTHONPATH=str(ROOT), **{HOOK: hook})
    return subprocess.run([sys.executable, "-m", "bench", *RUN, "--out", str(out), "--resume"],
                          capture_output=True, text=True, env=env, timeout=240, cwd=ROOT,
                          preexec_fn=_batch)


def test_a_sitting_on_a_busy_cpu_is_named_and_left_out(tmp_path: Path) -> None:
    out = tmp_path / "reports" / "box" / "run"
    first = run_cli(*RUN, "--out", str(out), env={HOOK: "launched@#r1=INT"}, timeout=240)
    assert first.returncode == 130, first.stderr
    burners: list[subprocess.Popen[bytes]] = []
    try:
        _burn(burners)
        second = _resume_busy(out, "row-written@cpu train b2 r64 fp32 channels_last static "
                                   "#r1=INT")
    finally:
        for p in burners:
            p.kill()
        for p in burners:
            p.wait()
    assert second.returncode == 130, second.stderr

    rows = read_csv(out / "results.csv")
    ok = {(r["cell_id"], r["sitting"]) for r in rows if r["status"] == "ok"}
    both = {c for c, s in ok if s == "1"} & {c for c, s in ok if s == "2"}
    assert len(both) == 4, rows

    check = run_cli("check", str(out))
    found = re.findall(r"sitting (\d+): its host-CPU cells ran ([\d.]+)x the step times of "
                       r"the other sittings over (\d+) cells", check.stdout)
    assert [s for s, _, _ in found] == ["2"], check.stdout
    [(_, pace, cells)] = found
    assert float(pace) > 1.1 and int(cells) == len(both) + 1  # its cells and its pace probe

    analysis = analyse(load_reports(tmp_path / "reports"))
    cells = analysis.cells.set_index("cell_id")
    assert (cells.loc[sorted(both), "n_left_out"] == 1).all(), cells["status_summary"]
    assert (cells.loc[sorted(both), "n_ok"] == 1).all()
    paces = analysis.sittings.set_index("sitting")
    assert paces.loc[2, "agreement"] == Agreement.DISAGREES
