"""The spawn launcher owns its ``Popen`` children: it times them out and ends their groups."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

from bench.run.launch import Exit, SpawnLauncher

from .procs import assert_none_survive

#: A child that starts a grandchild in its group, then sleeps (the task path is its argv[1]).
SLEEPER = ("import subprocess, sys, time; subprocess.Popen(['sleep', '600']); "
           "print('up', flush=True); time.sleep(600)")
STUBBORN = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "time.sleep(600)")


def _launcher(code: str, grace_s: float = 2.0) -> SpawnLauncher:
    return SpawnLauncher([sys.executable, "-c", code], grace_s=grace_s)


def test_a_child_past_its_timeout_is_ended_with_its_group(tmp_path: Path) -> None:
    with _launcher(SLEEPER) as launcher:
        child = launcher.launch(tmp_path / "task.json", 1.0)
        t0 = time.monotonic()
        end = child.wait(0.1)
        while end is None:
            end = child.wait(0.1)
        assert end == Exit(-signal.SIGTERM, timed_out=True)
        assert 0.8 < time.monotonic() - t0 < 4.0
    assert_none_survive(pids=[child.pid])  # the grandchild too: same group


def test_a_child_that_ignores_sigterm_gets_sigkill_after_the_grace(tmp_path: Path) -> None:
    with _launcher(STUBBORN, grace_s=0.3) as launcher:
        child = launcher.launch(tmp_path / "task.json", 60.0)
        assert child.wait(0.5) is None  # time to install its handler
        child.stop()
        assert child.wait(0.0) == Exit(-signal.SIGKILL)
    assert_none_survive(pids=[child.pid])


def test_a_child_that_ended_is_not_signalled_again(tmp_path: Path) -> None:
    with _launcher("raise SystemExit(3)") as launcher:
        child = launcher.launch(tmp_path / "task.json", 60.0)
        end = child.wait(10.0)
        assert end == Exit(3)
        child.stop()  # its pid is reaped and may be someone else's by now
        assert child.wait(0.0) == Exit(3)
