"""The real fork server (torch preloaded, real children): it owns, times out and ends them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.run.execute.launch import Child, Exit, ForkServerLauncher, LaunchError, _Server
from bench.run.plan.matrix import Cell, Settings
from bench.run.protocol import TERM_GRACE_S, WARM_COMPILE, Exited, Record, Task, new_task

from .procs import assert_none_survive, survivors

pytestmark = pytest.mark.e2e

CELL = Cell(model="mobilenet_v3_small", resolution=32)


@pytest.fixture
def launcher() -> Iterator[ForkServerLauncher]:
    """A server of the test's own, for the tests that end it or change what it holds; nothing
    it started outlives it (what ran before it, the module's shared server, may)."""
    before = [p.pid for p in survivors(root=os.getpid())]
    with ForkServerLauncher(stop_wait_s=0.0) as made:
        yield made
    assert_none_survive(root=os.getpid(), keep=before)


@pytest.fixture(scope="module")
def _one_server() -> Iterator[ForkServerLauncher]:
    with ForkServerLauncher(stop_wait_s=0.0) as made:
        yield made
    assert_none_survive(root=os.getpid())


@pytest.fixture
def shared(_one_server: ForkServerLauncher) -> Iterator[ForkServerLauncher]:
    """One server for the module's tests that leave it as they found it (it takes seconds of
    imports to start), each of which must leave no child of it behind."""
    yield _one_server
    server = _one_server._server  # None until a first launch starts it
    if server is not None:
        assert server.proc.poll() is None, "the shared server is still there"
        assert_none_survive(root=server.proc.pid, keep=[server.proc.pid])


def _task(tmp_path: Path, op: str, name: str, fault: str = "") -> Task:
    task = new_task(op, CELL, Settings(), 0, tmp_path, suffix=name, fault=fault)
    task.path.write_text(task.to_json())
    return task


def _end(child: Child, within_s: float) -> tuple[Exit, float]:
    t0 = time.monotonic()
    end = child.wait(0.1)
    while end is None and time.monotonic() - t0 < within_s:
        end = child.wait(0.1)
    assert end is not None, f"no end reported within {within_s} s"
    return end, time.monotonic() - t0


def _server(launcher: ForkServerLauncher) -> _Server:
    assert launcher._server is not None
    return launcher._server


def test_a_late_exit_is_not_the_next_launchs_answer(tmp_path: Path,
                                                    shared: ForkServerLauncher) -> None:
    """A stopped child slow to report its death: its ``Exited`` comes before the next
    ``Started`` and is filed under its own pid."""
    first = shared.launch(_task(tmp_path, "measure", "h", fault="hang").path, 60.0)
    assert first.wait(0.5) is None
    first.stop()  # stop_wait_s=0: its exit is left unread in the pipe
    probe = _task(tmp_path, "probe", "p")
    second = shared.launch(probe.path, 120.0)
    assert second.pid != first.pid
    assert _end(second, 120.0)[0] == Exit(0)
    assert first.wait(0.0) == Exit(-signal.SIGTERM)
    assert Record.from_json(Path(probe.result_path).read_text()).status == "ok"


def test_the_server_times_its_child_out(tmp_path: Path, shared: ForkServerLauncher) -> None:
    child = shared.launch(_task(tmp_path, "measure", "h", fault="hang").path, 1.0)
    end, took = _end(child, 30.0)
    assert end == Exit(-signal.SIGTERM, timed_out=True)
    assert 0.9 < took < 1.0 + TERM_GRACE_S + 2.0
    assert_none_survive(pids=[child.pid])


def test_eof_on_its_stdin_has_the_server_end_its_child(tmp_path: Path,
                                                        launcher: ForkServerLauncher) -> None:
    """The runner has gone (closed, or killed): the server ends its child itself (SIGTERM,
    and says so), not only through the child's dying with it (that would be SIGKILL)."""
    child = launcher.launch(_task(tmp_path, "measure", "h", fault="hang").path, 60.0)
    assert child.wait(0.3) is None
    server = _server(launcher)
    assert server.proc.stdin is not None
    server.proc.stdin.close()
    assert server.channel.read(30.0) == Exited(child.pid, -signal.SIGTERM)
    assert server.proc.wait(30.0) == 0
    launcher.close()
    assert_none_survive(pids=[child.pid, server.proc.pid])


def test_sigterm_to_the_server_ends_its_child_first(tmp_path: Path,
                                                    launcher: ForkServerLauncher) -> None:
    child = launcher.launch(_task(tmp_path, "measure", "h", fault="hang").path, 60.0)
    assert child.wait(0.3) is None
    server = _server(launcher).proc
    server.send_signal(signal.SIGTERM)
    assert _end(child, 30.0)[0] == Exit(-signal.SIGTERM)
    assert server.wait(30.0) == 143
    with pytest.raises(LaunchError, match="fork server exited"):  # and the launcher knows
        _server(launcher).read(5.0)
    assert_none_survive(pids=[child.pid, server.pid])


def test_a_childs_last_prints_reach_its_log(tmp_path: Path, launcher: ForkServerLauncher,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The forked child leaves through ``os._exit``, which flushes nothing by itself, and its
    stdout (a file) is block-buffered, as it is wherever PYTHONUNBUFFERED is not set."""
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)  # the server starts at the launch
    task = _task(tmp_path, "probe", "p")
    assert _end(launcher.launch(task.path, 120.0), 120.0)[0] == Exit(0)
    assert Path(task.log_path).read_text().splitlines()[-1:] == ["replicate ended: ok"]


def test_a_sigterm_after_the_reaping_never_signals_the_reaped_pid(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The shutdown that a SIGTERM starts while a reaped child is being swept must not
    signal that pid again (it may be another process's by then), and still reports it."""
    from bench.run.child import orphans, server

    pid = server.fork_child(lambda: 0)
    rep = server.Replicate(pid, 60.0, time.monotonic)
    while not rep.ended():
        time.sleep(0.01)

    def terminated(**_: object) -> None:
        raise server._Terminated

    monkeypatch.setattr(orphans, "sweep_adopted", terminated)
    with pytest.raises(server._Terminated):
        rep.reap()
    monkeypatch.undo()
    signalled: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "killpg", lambda p, s: signalled.append((p, s)))
    end = rep.shut_down()
    assert signalled == []
    assert end is not None and end.pid == pid and end.code == 0
    rep.reported = True
    assert rep.shut_down() is None


def test_a_warmed_server_imports_the_compiler_once_and_still_forks_working_children(
        tmp_path: Path, launcher: ForkServerLauncher) -> None:
    """``Run.warm = "compile"``: the server imports what torch.compile imports before the
    fork (compiling nothing, initialising no CUDA), and its child does its task as ever."""
    probe = _task(tmp_path, "probe", "w")
    assert _end(launcher.launch(probe.path, 120.0, WARM_COMPILE), 120.0)[0] == Exit(0)
    assert Record.from_json(Path(probe.result_path).read_text()).status == "ok"
    said = subprocess.run(
        [sys.executable, "-c", "import sys, torch; from bench.run.child.server import Warmer; "
         "before = 'torch._inductor.compile_fx' in sys.modules; w = Warmer(torch); "
         "w('compile'); w('compile'); w('no-such-set'); "
         "print(before, 'torch._inductor.compile_fx' in sys.modules, "
         "torch.cuda.is_initialized(), sorted(w.done))"],
        capture_output=True, text=True, check=True, timeout=120)
    assert said.stdout.split("\n")[0] == "False True False ['compile', 'no-such-set']"


def test_the_server_leaves_what_it_imported_out_of_its_childrens_collections() -> None:
    """``preload`` and every warm-up end in ``gc.freeze``: a child's full collection does not
    walk (and so copy) the hundreds of thousands of objects torch and Inductor leave in the
    server's heap, while the objects the child makes are collected as before."""
    script = textwrap.dedent("""
        import gc, os
        from bench.run.child import server
        before = gc.get_freeze_count()
        torch = server.preload()
        loaded = gc.get_freeze_count()
        server.Warmer(torch)("compile")
        warmed = gc.get_freeze_count()
        pid = os.fork()
        if pid == 0:
            junk = [[] for _ in range(1000)]
            junk.append(junk)  # a cycle: only a collection frees it
            del junk
            # (the count is the frozen objects still alive: a few die by refcount after the fork)
            os._exit(0 if gc.collect() > 1000 and gc.get_freeze_count() > loaded else 3)
        print(before, loaded > 300_000, warmed > loaded, os.waitpid(pid, 0)[1])
        """)
    said = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, timeout=120)
    assert said.stdout.split("\n")[0] == "0 True True 0"
