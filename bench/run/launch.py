"""Starting, waiting for and killing the child processes that run replicates.

Two launchers share one contract (``Launcher.launch(task_path) -> Child``):

* ``SpawnLauncher`` starts ``python -m bench.run.child.worker TASK`` for every replicate. Simple and
  portable, but every child re-imports torch (3 to 4 s on a small machine).
* ``ForkServerLauncher`` starts one server process that imports torch and torchvision once
  and then forks a fresh child per replicate, which brings the per-cell overhead well under a
  second. The server never initialises CUDA (a fork after CUDA init is broken); the children
  do, each in its own new process.

Every child runs in its own session/process group, so a timeout or an interrupt kills the
child *and* anything it started (``os.killpg``), and a Ctrl-C in the terminal reaches the
runner, not the children. Exit codes follow ``subprocess``: negative means killed by that
signal. The runner only sees this module's small interface, so tests can inject a fake.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any, Protocol


class Child(Protocol):
    pid: int

    def wait(self, timeout: float) -> int | None:
        """The exit code once the child has ended, or None if it still runs after timeout."""

    def kill(self) -> None:
        """Kill the child's whole process group; safe to call on a child that has ended."""


class Launcher(Protocol):
    def launch(self, task_path: Path) -> Child: ...

    def close(self) -> None: ...


class LaunchError(RuntimeError):
    """The launcher itself failed (not the child): the replicate is recorded as a crash."""


def _killpg(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


class _PopenChild:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self._proc = proc
        self.pid = proc.pid

    def wait(self, timeout: float) -> int | None:
        try:
            return self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        if self._proc.returncode is not None:
            return  # already reaped
        _killpg(self.pid)
        with contextlib.suppress(Exception):
            self._proc.wait(timeout=10)


class SpawnLauncher:
    """A fresh interpreter per replicate: slow start, nothing shared."""

    def __init__(self, python: str = sys.executable) -> None:
        self.python = python

    def launch(self, task_path: Path) -> Child:
        proc = subprocess.Popen([self.python, "-m", "bench.run.child.worker", str(task_path)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True,
                                env=_child_env())
        return _PopenChild(proc)

    def close(self) -> None:
        return None


def _child_env() -> dict[str, str]:
    """The current environment, with this package importable from the children."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH", "")]))
    return env


class _Lines:
    """Line reader over a pipe with a timeout (select), no partial-line surprises."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._fd = stream.fileno()
        self._buf = b""

    def read(self, timeout: float) -> str | None:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self._fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(self._fd, 65536)
            if not chunk:
                raise LaunchError("fork server exited")
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line.decode()


class _ServerChild:
    def __init__(self, server: ForkServerLauncher, pid: int) -> None:
        self._server = server
        self.pid = pid
        self._code: int | None = None

    def wait(self, timeout: float) -> int | None:
        if self._code is None:
            self._code = self._server._wait_exit(self.pid, timeout)
        return self._code

    def kill(self) -> None:
        if self._code is not None:
            return  # already reaped: its pid may belong to someone else by now
        _killpg(self.pid)
        with contextlib.suppress(LaunchError):
            self._code = self._server._wait_exit(self.pid, 10.0)


class ForkServerLauncher:
    """One pre-imported server; one fork per replicate. Replicates run one at a time.

    The server speaks tagged JSON lines (``started``, ``exited``, ``error``). An ``exited``
    message that arrives late (a child slow to die after SIGKILL) is stashed, never mistaken
    for the answer to the next request; anything unexpected restarts the server.
    """

    def __init__(self, python: str = sys.executable, start_timeout: float = 300.0) -> None:
        self.python = python
        self.start_timeout = start_timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: _Lines | None = None
        self._exits: dict[int, int] = {}

    def _start(self) -> None:
        # The server inherits our stderr (its own errors are worth seeing); its children
        # redirect theirs to per-replicate logs.
        self._proc = subprocess.Popen(
            [self.python, "-m", "bench.run.child.server"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, env=_child_env(), start_new_session=True)
        assert self._proc.stdout is not None
        self._lines = _Lines(self._proc.stdout)
        self._exits = {}
        msg = self._read(self.start_timeout)
        if msg is None or msg.get("event") != "ready":
            self.close()
            raise LaunchError(f"fork server did not start: {msg!r}")

    def _read(self, timeout: float) -> dict[str, Any] | None:
        assert self._lines is not None
        line = self._lines.read(timeout)
        if line is None:
            return None
        try:
            msg = json.loads(line)
        except ValueError:
            self.close()
            raise LaunchError(f"fork server sent garbage: {line[:200]!r}") from None
        if not isinstance(msg, dict):
            self.close()
            raise LaunchError(f"fork server sent garbage: {line[:200]!r}")
        return msg

    def _send(self, msg: dict[str, str]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write((json.dumps(msg) + "\n").encode())
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise LaunchError(f"fork server is gone: {exc}") from None

    def launch(self, task_path: Path) -> Child:
        if self._proc is None or self._proc.poll() is not None:
            self._start()
        self._send({"task": str(task_path)})
        deadline = time.monotonic() + 60.0
        while True:
            msg = self._read(max(0.0, deadline - time.monotonic()))
            if msg is None:
                self.close()  # a late answer must not be read as the next one's
                raise LaunchError("fork server did not answer")
            event = msg.get("event")
            if event == "exited":
                self._exits[int(msg["pid"])] = int(msg["exit"])
            elif event == "started":
                return _ServerChild(self, int(msg["pid"]))
            else:
                self.close()
                raise LaunchError(f"fork server refused the task: {msg}")

    def _wait_exit(self, pid: int, timeout: float) -> int | None:
        deadline = time.monotonic() + timeout
        while pid not in self._exits:
            msg = self._read(max(0.0, deadline - time.monotonic()))
            if msg is None:
                return None
            if msg.get("event") != "exited":
                self.close()
                raise LaunchError(f"unexpected message from the fork server: {msg}")
            self._exits[int(msg["pid"])] = int(msg["exit"])
        return self._exits.pop(pid)

    def close(self) -> None:
        if self._proc is None:
            return
        with contextlib.suppress(Exception):
            assert self._proc.stdin is not None
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            _killpg(self._proc.pid)
            self._proc.wait()
        self._proc = None
