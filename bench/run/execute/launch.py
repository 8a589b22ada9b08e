"""Starting the child processes that run replicates, and learning how they ended.

Two launchers share one contract: ``launch(task_path, timeout_s) -> Child``, then
``child.wait(poll_s) -> Exit | None`` until it returns how the child ended, or
``child.stop()`` to have it ended early (a Ctrl-C). Whoever owns a child's process times it
out and kills it; the runner never signals a pid:

* ``ForkServerLauncher`` talks to one fork server (``bench.run.child.server``) that imports
  torch and torchvision once and forks a fresh child per replicate, which brings the per-cell
  overhead well under a second. The server forks, times out, ends and reaps its children;
  ``stop()`` is a message to it. Closing the launcher closes the server's stdin, and the
  server ends its running child before it exits (and a child dies with its server anyway).
* ``SpawnLauncher`` runs ``python -m bench.run.child.worker TASK`` for every replicate, a
  fresh interpreter that re-imports torch (3 to 4 s on a small machine). Its children are
  owned the same way: by the same server loop, run without torch, which forks and ``exec``s
  each one. So both launchers give the same guarantees.

Every child runs in its own session, so a Ctrl-C in the terminal reaches the runner and not
the children, and ending a child ends its group. On Linux the server is also its children's
subreaper, so what a child started that left the group (``setsid()``) is killed after it,
and the server and its child die with the runner even when it is SIGKILLed
(``PR_SET_PDEATHSIG``); elsewhere the server notices its runner's end only as EOF on its
stdin, and what left the group is not found. Exit codes follow ``subprocess``: negative
means killed by that signal. A launcher has one owner, who opens it with ``with``.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Callable, Protocol, TypeVar

from bench.run import protocol

L = TypeVar("L", bound="_Owned")

#: How long the server may take to answer a ``Run`` (a fork: milliseconds, unless it is stuck).
ANSWER_S = 60.0
#: Beyond a child's timeout and grace, how long the launcher waits for the server to report
#: its end before it takes the server for broken.
REPORT_MARGIN_S = 30.0
#: How long a closed server may take to end its child and exit before it is killed: the
#: child's grace, and this margin.
CLOSE_MARGIN_S = 3.0
CLOSE_WAIT_S = protocol.TERM_GRACE_S + CLOSE_MARGIN_S
#: How long the spawn launcher's server (no torch to import) may take to start.
SPAWN_START_S = 60.0


@dataclass(frozen=True)
class Exit:
    """How a child ended: its exit code, and whether its owner ended it at its timeout."""

    code: int
    timed_out: bool = False


class Child(Protocol):
    pid: int

    def wait(self, poll_s: float) -> Exit | None:
        """How the child ended, or None if it still runs after ``poll_s`` seconds."""

    def stop(self) -> None:
        """Have the child's owner end it now; safe on a child that has ended. Never raises."""


class Launcher(Protocol):
    def launch(self, task_path: Path, timeout_s: float, warm: str = "") -> Child: ...

    def close(self) -> None: ...

    def __enter__(self) -> Launcher: ...

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...


class LaunchError(RuntimeError):
    """The launcher itself failed (not the child): the replicate is recorded as a crash."""


class _Owned:
    """A launcher is opened by one owner with ``with``; leaving the block closes it."""

    def __enter__(self: L) -> L:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        raise NotImplementedError


def _child_env() -> dict[str, str]:
    """The current environment, with this package importable from the children."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH", "")]))
    return env


# -- fork server: the server owns its children -------------------------------------------

class _Server:
    """One running fork server: its process, its pipe, and what it has said about children.

    Once closed (asked to, or after it broke the protocol) it is never read or written again,
    so no stale pipe is touched: every later call says the server is gone.
    """

    def __init__(self, command: Sequence[str], start_timeout: float,
                 close_wait_s: float = CLOSE_WAIT_S) -> None:
        self.close_wait_s = close_wait_s
        # The server inherits our stderr (its own errors are worth seeing); its children
        # redirect theirs to per-replicate logs.
        try:
            self.proc = subprocess.Popen(list(command), stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, env=_child_env(),
                                         start_new_session=True)
        except OSError as exc:
            raise LaunchError(f"fork server did not start: {exc}") from None
        assert self.proc.stdout is not None
        self.channel = protocol.Channel(self.proc.stdout.fileno())
        self.closed = False
        self.exits: dict[int, Exit] = {}  # by pid, as reported
        try:
            msg = self.read(start_timeout)
        except BaseException:  # a Ctrl-C while it imports torch: it must not linger
            self.close()
            raise
        if not isinstance(msg, protocol.Ready):
            self.close()
            raise LaunchError(f"fork server did not start: {msg!r}")

    def send(self, msg: protocol.Message) -> None:
        if self.closed:
            raise LaunchError("fork server is gone")
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(protocol.encode(msg))
            self.proc.stdin.flush()
        except OSError as exc:
            self.close()
            raise LaunchError(f"fork server is gone: {exc}") from None

    def read(self, timeout: float) -> protocol.Message | None:
        """The next message (None after ``timeout``); exits are filed as they come."""
        if self.closed:
            raise LaunchError("fork server is gone")
        try:
            msg = self.channel.read(timeout)
        except EOFError:
            self.close()
            raise LaunchError("fork server exited") from None
        except protocol.ProtocolError as exc:
            self.close()
            raise LaunchError(f"fork server sent garbage: {exc}") from None
        if isinstance(msg, protocol.Started):
            self.exits.pop(msg.pid, None)  # a recycled pid: the old exit is not this child's
        elif isinstance(msg, protocol.Exited):
            self.exits[msg.pid] = Exit(msg.code, msg.timed_out)
        return msg

    def wait_exit(self, pid: int, timeout: float) -> Exit | None:
        deadline = time.monotonic() + timeout
        while pid not in self.exits:
            msg = self.read(max(0.0, deadline - time.monotonic()))
            if msg is None:
                return None
            if not isinstance(msg, protocol.Exited):
                self.close()
                raise LaunchError(f"unexpected message from the fork server: {msg}")
        return self.exits[pid]

    def close(self) -> None:
        """EOF to the server, which ends its running child and exits; killed if it does not
        (its children die with it)."""
        if self.closed:
            return
        self.closed = True
        assert self.proc.stdin is not None and self.proc.stdout is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=self.close_wait_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


class _ServerChild:
    def __init__(self, server: _Server, pid: int, timeout_s: float, stop_wait_s: float,
                 clock: Callable[[], float], grace_s: float = protocol.TERM_GRACE_S) -> None:
        self._server = server
        self.pid = pid
        self._stop_wait_s = stop_wait_s
        self._clock = clock
        self._backstop = clock() + timeout_s + grace_s + REPORT_MARGIN_S
        self._exit: Exit | None = None

    def wait(self, poll_s: float) -> Exit | None:
        if self._exit is None:
            self._exit = self._server.wait_exit(self.pid, poll_s)
            if self._exit is None and self._clock() >= self._backstop:
                self._server.close()
                raise LaunchError("fork server did not report the end of its child")
        return self._exit

    def stop(self) -> None:
        """A ``Stop`` message; the exit is waited for a little, and read later if it is late.
        A server that is gone has taken its child with it."""
        if self._exit is not None or self._server.closed:
            return
        with contextlib.suppress(LaunchError):
            self._exit = self._server.exits.get(self.pid)
            if self._exit is None:
                self._server.send(protocol.Stop(self.pid))
                self._exit = self._server.wait_exit(self.pid, self._stop_wait_s)


class ForkServerLauncher(_Owned):
    """One pre-imported server; one fork per replicate. Replicates run one at a time.

    ``command`` starts the server (a test can start a fake one that speaks the protocol
    badly). ``stop()`` waits ``stop_wait_s`` for the stopped child's ``Exited``; one that
    arrives later (a child slow to die) comes before the next ``Started`` and is filed by
    pid, never taken for the answer to the next request. Anything else unexpected closes the
    server, and the next launch starts a new one.
    """

    def __init__(self, command: Sequence[str] | None = None, start_timeout: float = 300.0,
                 stop_wait_s: float = protocol.TERM_GRACE_S + 3.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.command = list(command or [sys.executable, "-m", "bench.run.child.server"])
        self.start_timeout = start_timeout
        self.stop_wait_s = stop_wait_s
        self.clock = clock
        self.grace_s = protocol.TERM_GRACE_S  # what the server gives a child after SIGTERM
        self._server: _Server | None = None

    def _ready_server(self) -> _Server:
        server = self._server
        if server is None or server.closed or server.proc.poll() is not None:
            if server is not None:
                server.close()
            server = self._server = _Server(self.command, self.start_timeout,
                                            self.grace_s + CLOSE_MARGIN_S)
        return server

    def launch(self, task_path: Path, timeout_s: float, warm: str = "") -> Child:
        server = self._ready_server()
        try:
            server.send(protocol.Run(str(task_path), timeout_s, warm))
            deadline = time.monotonic() + ANSWER_S
            while True:
                msg = server.read(max(0.0, deadline - time.monotonic()))
                if isinstance(msg, protocol.Started):
                    return _ServerChild(server, msg.pid, timeout_s, self.stop_wait_s,
                                        self.clock, self.grace_s)
                if not isinstance(msg, protocol.Exited):  # a late exit is filed, nothing else:
                    server.close()  # an answer a later launch could mistake for its own
                    raise LaunchError("fork server did not answer" if msg is None else
                                      f"fork server refused the task: {msg}")
        except BaseException:
            # Interrupted between the fork and its ``Started`` (a Ctrl-C): the server does not
            # know nobody waits for its child. Closing it ends the child too.
            server.close()
            raise

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None


# -- spawn: a fresh interpreter per child, owned the same way ----------------------------

class SpawnLauncher(ForkServerLauncher):
    """A fresh interpreter per replicate: slow start, nothing shared. ``command`` is what
    runs a task (its path is appended); ``grace_s`` is what a child has between SIGTERM and
    SIGKILL.

    Why through a server: a child's owner must outlive it, to kill what it left outside its
    group after a timeout and to end it when the runner is killed. So the children are not
    the runner's ``Popen``s but those of a small server of their own (the fork server's loop
    in ``--exec`` mode, standard library only, nothing preloaded), which forks and ``exec``s
    ``command TASK`` for every task: each child is a new interpreter, with every guarantee
    of the fork server's children.
    """

    def __init__(self, command: Sequence[str] | None = None,
                 grace_s: float = protocol.TERM_GRACE_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        run = list(command or [sys.executable, "-m", "bench.run.child.worker"])
        super().__init__([sys.executable, "-m", "bench.run.child.server", "--exec",
                          "--grace", repr(float(grace_s)), "--", *run],
                         start_timeout=SPAWN_START_S, stop_wait_s=grace_s + CLOSE_MARGIN_S,
                         clock=clock)
        self.grace_s = grace_s


def by_name(name: str) -> Launcher:
    """The launcher ``--launcher`` names: ``spawn`` (a fresh interpreter per child), else the
    fork server (torch imported once)."""
    return SpawnLauncher() if name == "spawn" else ForkServerLauncher()
