"""The fork-server launcher against a server that speaks the protocol badly (``fake_server``).

Each test ends by listing, with ``ps``, every process that carries its marker or descends
from the test: none may be left, whatever the server did wrong.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomllib

from bench.run.execute import runner
from bench.run.execute.launch import Exit, ForkServerLauncher, LaunchError
from bench.run.plan.jobs import plan
from bench.run.plan.matrix import Cell, Settings
from bench.run.plan.profiles import parse_profile
from bench.run.protocol import new_task
from bench.run.store.store import RunStore

from . import fake_server
from .conftest import ROOT, read_csv
from .procs import assert_none_survive, survivors

PROFILE = """
[defaults]
replicates = 2
timeout_s = 60.0
[studies.one]
model = "resnet18"
"""


class Fake:
    """Fork-server launchers whose server is ``fake_server`` in one mode, and their marker."""

    def __init__(self) -> None:
        self.marker = f"fake-server-{uuid.uuid4().hex[:12]}"

    def launcher(self, mode: str, **options: float) -> ForkServerLauncher:
        command = [sys.executable, fake_server.__file__, mode, self.marker]
        return ForkServerLauncher(command, start_timeout=30.0, **options)

    def left(self) -> int:
        return len(survivors(self.marker))


@pytest.fixture
def fake() -> Iterator[Fake]:
    made = Fake()
    yield made
    assert_none_survive(made.marker, root=os.getpid())


def _task(tmp_path: Path, name: str, fault: str = "") -> Path:
    task = new_task("measure", Cell(), Settings(), 0, tmp_path, suffix=name, fault=fault)
    task.path.write_text(task.to_json())
    return task.path


def _rows(tmp_path: Path, launcher: ForkServerLauncher) -> list[dict[str, str]]:
    """Run a two-replicate profile whose children hang, as the CLI does; return its rows."""
    store = RunStore(tmp_path / "run")
    store.open()
    ctx = runner.RunContext("run1", "t", runner.Probe({"fingerprint_id": "f", "machine": "m"},
                                                      [], False), fault="hang")
    with launcher:
        r = runner.Runner(launcher, store, ctx, workdir=tmp_path, poll_s=0.05)
        assert r.run(plan(parse_profile(tomllib.loads(PROFILE), "t"))) == 0
        r.close()
    return read_csv(store.results_path)


def test_garbage_on_the_pipe_is_a_launcher_failure_not_a_runner_error(
        tmp_path: Path, fake: Fake) -> None:
    """After the protocol error the server is closed for good: stopping its child must not
    touch its stale pipe (which raised EBADF, and the row read "runner error")."""
    rows = _rows(tmp_path, fake.launcher("garbage"))
    assert [(r["status"], r["reason"]) for r in rows] == [
        ("crash", "launcher failed: fork server sent garbage: message b'this is not a message' "
                  "is not JSON: Expecting value: line 1 column 1 (char 0)")] * 2


def test_the_server_dying_mid_child_takes_the_child_with_it(tmp_path: Path, fake: Fake) -> None:
    rows = _rows(tmp_path, fake.launcher("die"))
    assert [(r["status"], r["reason"]) for r in rows] == [
        ("crash", "launcher failed: fork server exited")] * 2


def test_an_exit_reported_late_is_filed_under_its_own_child(tmp_path: Path, fake: Fake) -> None:
    with fake.launcher("late-exit", stop_wait_s=0.2) as launcher:
        first = launcher.launch(_task(tmp_path, "a", fault="hang"), 60.0)
        assert first.wait(0.2) is None
        t0 = time.monotonic()
        first.stop()  # its exit is late: stop() does not wait for it beyond stop_wait_s
        assert time.monotonic() - t0 < fake_server.LATE_S
        second = launcher.launch(_task(tmp_path, "b"), 60.0)
        assert second.pid != first.pid
        assert second.wait(10.0) == Exit(0), "the late exit is not the second child's"
        assert first.wait(0.0) == Exit(-signal.SIGKILL), "and is kept for the first"


def test_a_ctrl_c_inside_launch_leaves_no_child(tmp_path: Path, fake: Fake) -> None:
    """The Ctrl-C lands between the fork and ``Started``: nobody knows the child's pid yet."""
    seen: list[int] = []

    def interrupt() -> None:
        seen.append(fake.left())  # the server and its new child
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(fake_server.SLOW_S / 2, interrupt)
    with fake.launcher("slow-start") as launcher:
        launcher.launch(_task(tmp_path, "warm-up"), 60.0).wait(10.0)  # the server is up
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                launcher.launch(_task(tmp_path, "a", fault="hang"), 60.0)
        finally:
            timer.cancel()
    assert seen == [2]


def test_the_real_server_loop_sweeps_what_a_child_left_in_its_group(
        tmp_path: Path, fake: Fake) -> None:
    """``honest`` is the real ``serve`` with children that need no torch."""
    with fake.launcher("honest") as launcher:
        child = launcher.launch(_task(tmp_path, "a", fault="orphan"), 60.0)
        assert child.wait(10.0) == Exit(0)
        assert_none_survive(pids=[child.pid])  # its `sleep` was in its group


def test_the_real_server_loop_times_out_and_stops_its_children(tmp_path: Path,
                                                                fake: Fake) -> None:
    with fake.launcher("honest") as launcher:
        slow = launcher.launch(_task(tmp_path, "a", fault="hang"), 0.3)
        t0 = time.monotonic()
        end = slow.wait(10.0)
        assert end == Exit(-signal.SIGTERM, timed_out=True) and time.monotonic() - t0 < 5.0
        stopped = launcher.launch(_task(tmp_path, "b", fault="hang"), 60.0)
        assert stopped.wait(0.2) is None
        stopped.stop()
        assert stopped.wait(0.0) == Exit(-signal.SIGTERM)
        assert_none_survive(pids=[slow.pid, stopped.pid])


def test_a_server_that_cannot_start_is_a_launcher_failure(tmp_path: Path) -> None:
    with ForkServerLauncher([str(tmp_path / "no-such-server")]) as launcher, \
            pytest.raises(LaunchError, match="fork server did not start"):
        launcher.launch(_task(tmp_path, "a"), 60.0)


@pytest.mark.parametrize("fault", ["setsid", "setsid-hang"])
def test_what_a_child_starts_in_a_session_of_its_own_is_killed_with_it(
        tmp_path: Path, fake: Fake, fault: str) -> None:
    """``setsid()`` takes a process out of its group, so the group's kill misses it; it comes
    back to the server (its subreaper) when the child dies, and the server kills it then,
    whether the child exited (setsid) or was timed out (setsid-hang)."""
    with fake.launcher("honest") as launcher:
        child = launcher.launch(_task(tmp_path, "a", fault=fault), 0.5)
        end = child.wait(10.0)
        assert end is not None and end.timed_out == (fault == "setsid-hang")
        assert launcher._server is not None
        server = launcher._server.proc.pid
        assert_none_survive(fake.marker, within_s=5.0, keep=[server])


def test_a_killed_runner_takes_its_server_and_child_along_even_if_the_pipe_stays_open(
        tmp_path: Path, fake: Fake) -> None:
    """A copy of the pipe to the server's stdin held elsewhere (here by a bystander the runner
    started) hides the runner's death from the server's stdin: the kernel's signal must not."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    task = _task(tmp_path, "a", fault="hang")
    proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("runner_proc.py")),
                             fake.marker, str(task)], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    ready = proc.stdout.readline().split()
    assert ready[:1] == ["ready"], ready
    server, child, bystander = map(int, ready[1:])
    try:
        assert survivors(pids=[server, child]), "the server and its hanging child are up"
        proc.kill()
        proc.wait()
        assert_none_survive(pids=[server, child], within_s=5.0)
    finally:
        os.kill(bystander, signal.SIGKILL)
