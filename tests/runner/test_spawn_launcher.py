"""The spawn launcher's children, fresh interpreters, are owned as the fork server's are: timed
out with their groups, with what they started that left the group (``setsid()``), and ended
with their server when the runner is SIGKILLed. After each case ``ps`` shows that nothing the
test started survives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from bench.run.execute.launch import Exit, SpawnLauncher

from .conftest import ROOT
from .procs import assert_none_survive, survivors

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


#: A child that starts two grandchildren carrying its last argument but one (a marker): one in
#: its group, one in a session of its own (as a daemonising tool does), then sleeps.
ESCAPER = ("import subprocess, sys, time; mark = sys.argv[-2]; "
           "sleep = [sys.executable, '-c', 'import time; time.sleep(600)', mark]; "
           "subprocess.Popen(sleep); subprocess.Popen(sleep, start_new_session=True); "
           "time.sleep(600)")

#: A runner that launches ``ESCAPER`` through the spawn launcher and waits to be killed.
RUNNER = f"""
import sys, time
from pathlib import Path
from bench.run.execute.launch import SpawnLauncher
launcher = SpawnLauncher([sys.executable, "-c", {ESCAPER!r}, sys.argv[1]])
child = launcher.launch(Path(sys.argv[2]), 600.0)
print("ready", child.pid, flush=True)
time.sleep(600)
"""

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="PR_SET_CHILD_SUBREAPER and PR_SET_PDEATHSIG are Linux's")


def _up(marker: str, count: int, within_s: float = 20.0, runner: int = -1) -> None:
    """Wait until ``count`` processes carrying ``marker`` run besides the server (and the
    ``runner`` process, when it carries the marker too)."""
    deadline = time.monotonic() + within_s
    while len([p for p in survivors(marker) if "bench.run.child.server" not in p.args
               and p.pid != runner]) < count:
        assert time.monotonic() < deadline, survivors(marker)
        time.sleep(0.05)


@linux_only
@pytest.mark.parametrize("how", ["timeout", "stop"])
def test_what_a_child_started_in_a_session_of_its_own_dies_with_it(tmp_path: Path,
                                                                   how: str) -> None:
    """The group's kill misses a process that left the group; it used to live on, with PPID 1,
    after the spawned child's timeout."""
    marker = f"torch-knobs-test-{uuid.uuid4().hex}"
    with SpawnLauncher([sys.executable, "-c", ESCAPER, marker], grace_s=0.5) as launcher:
        child = launcher.launch(tmp_path / "task.json", 5.0 if how == "timeout" else 60.0)
        _up(marker, 3, within_s=4.0)  # the child and both grandchildren
        if how == "stop":
            child.stop()
        end = child.wait(0.1)
        while end is None:
            end = child.wait(0.1)
        assert end == Exit(-signal.SIGTERM, timed_out=how == "timeout")
        assert launcher._server is not None
        assert_none_survive(marker, keep=[launcher._server.proc.pid])
    assert_none_survive(marker)


@linux_only
def test_a_killed_runner_takes_its_spawned_child_and_grandchildren_along(
        tmp_path: Path) -> None:
    """SIGKILL to the runner: the spawned child and what it started used to live on."""
    marker = f"torch-knobs-test-{uuid.uuid4().hex}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", RUNNER, marker, str(tmp_path / "task.json")],
                            stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().split()[:1] == ["ready"]
        _up(marker, 3, runner=proc.pid)  # the child and both grandchildren
    finally:
        proc.kill()
        proc.wait()
    assert_none_survive(marker, within_s=10.0)
