"""The fork server: imports torch once, then forks, times out, ends and reaps one child per task.

Why a server: every replicate needs a fresh process, and a fresh interpreter re-imports torch
and torchvision (3 to 4 s on a small machine). Forking a process that has already imported
them brings that under a second. The server never initialises CUDA (a fork after CUDA init is
broken); each child does, on its own.

Why the server owns its children (as asv's does): only the process that forked a child knows
for certain whether it has been reaped, so only it can signal the child's process group
without the risk of hitting a recycled pid. So the server, not its runner:

- times each child out: SIGTERM to the child's group at ``Run.timeout_s``, SIGKILL after
  ``TERM_GRACE_S``, and an ``Exited`` message with ``timed_out`` set;
- ends the running child on ``Stop``, when its runner goes away (EOF on stdin) and when it is
  terminated itself (SIGTERM), before it exits; a ``Run`` that comes while a stopped child is
  still dying waits until that child's ``Exited`` has gone out;
- signals a group only while its leader is unreaped (a zombie keeps its pid and its group):
  it notices an exit with ``waitid(WNOWAIT)``, sweeps the group (whatever the child started
  dies with it), and only then reaps;
- cannot outlive its runner: it sees EOF on stdin when the runner goes, and on Linux the
  kernel also sends it SIGTERM then (``PR_SET_PDEATHSIG``: the pipe can stay open when
  another process holds a copy of it); either way it ends its child before it exits;
- is its children's subreaper (``PR_SET_CHILD_SUBREAPER``): whatever a child started that
  left its group (``setsid()``) comes back to the server when that child dies, instead of to
  init, and the server kills and reaps it after every replicate.

The kernel's part of that ownership (the death signals, the subreaper, the sweep of what the
server adopts) is ``bench.run.child.orphans``.

Each child runs in a session of its own (a Ctrl-C in the terminal reaches the runner, not
the children) and asks the kernel to kill it if the server dies (``orphans.die_with_server``).
SIGUSR2 is ignored by the server and its children (``WARNING``): Slurm's warning before a time
limit goes to every process of a job's step, whatever its session, and its default action
would kill them; the runner, which gets it too, decides, as it does for a Ctrl-C.
A ``Run`` may ask the server to import something first, once (``Run.warm``: what
``torch.compile`` imports, for a compiled CPU cell), so its children share it.
Run as ``python -m bench.run.child.server``; messages are ``bench.run.protocol``'s. With
``--exec`` (the spawn launcher) nothing is preloaded and each forked child ``exec``s a fresh
interpreter for its task, keeping its session and its death with the server: the same
ownership, for a launcher whose children share nothing.
"""

from __future__ import annotations

import contextlib
import gc
import math
import os
import select
import signal
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from io import FileIO
from typing import Any, NoReturn

from bench.run.child import orphans
from bench.run.protocol import (
    TERM_GRACE_S,
    WARM_COMPILE,
    Channel,
    Exited,
    Message,
    ProtocolError,
    Ready,
    Refused,
    Run,
    Started,
    Stop,
    encode,
)

PRELOAD = ("torch", "torchvision", "torchvision.models", "torch.utils.flop_counter")
#: Slurm's warning before a job's time limit or preemption (absent on Windows): the runner's
#: to act on; ignored here, and by every child, which inherits SIG_IGN across fork and exec.
WARNING = getattr(signal, "SIGUSR2", None)


def share_heap() -> None:
    """Leave what the server has imported out of its children's garbage collection.

    Why: a child's full collection otherwise walks every object it inherited (torch's,
    torchvision's, Inductor's after a compile warm-up: 330,000 to 420,000), writing to each,
    so the kernel copies nearly every page of the server's heap into the child. That took
    0.25 s of a pipeline cell's untimed build after a compile warm-up, against 0.03 s before
    it. ``gc.freeze`` (the standard library's answer for a process that forks without
    ``exec``) moves them to a generation no collection visits; the objects a child makes
    are collected as before, and a user's own process, which does not fork, pays no such
    copies.
    """
    gc.collect()
    gc.freeze()


def preload() -> Any | None:
    """Import ``PRELOAD`` (what is not installed is the child's to report) and share it with
    every child; torch, or None without it."""
    import importlib

    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    share_heap()
    return sys.modules.get("torch")


def ignore_warning() -> None:
    """Ignore ``WARNING`` (SIGUSR2) in this process and, by inheritance, in its children."""
    if WARNING is not None:
        signal.signal(WARNING, signal.SIG_IGN)


def fork_child(run: Callable[[], int], close_fds: Sequence[int] = ()) -> int:
    """Fork a child in a new session that dies with this process; return its pid.

    The child closes ``close_fds`` (the protocol pipe must never be written by it, and must
    see EOF when the server dies), runs ``run`` and exits with its code, its output flushed
    first: ``os._exit`` skips the interpreter's own flush. SIGINT and SIGTERM are blocked
    across the fork until the child has its own (default) handlers: a child stopped as soon
    as it is born must die of the signal, not run the server's handler and print its traceback.
    """
    server = os.getpid()
    for stream in (sys.stdout, sys.stderr):  # nothing buffered here is printed twice
        stream.flush()
    stopping = {signal.SIGINT, signal.SIGTERM}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, stopping)
    try:
        pid = os.fork()
    finally:
        if os.getpid() == server:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    if pid:
        return pid
    code = 70
    try:
        for sig in stopping:
            signal.signal(sig, signal.SIG_DFL)
        ignore_warning()  # as the server: the runner acts on Slurm's warning
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        os.setsid()
        orphans.die_with_server(server)
        for fd in close_fds:
            os.close(fd)
        code = run()
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


class Replicate:
    """A forked child as its server sees it: running, being ended, or ended and unreaped."""

    def __init__(self, pid: int, timeout_s: float, clock: Callable[[], float],
                 grace_s: float = TERM_GRACE_S) -> None:
        self.pid = pid
        self.clock = clock
        self.grace_s = grace_s
        self.deadline = clock() + timeout_s
        self.timed_out = False
        self.kill_at: float | None = None  # set when SIGTERM went out
        self.fd: int | None = None  # a pidfd, readable once the child has ended
        self.exit: Exited | None = None  # set once reaped: from then on its pid is not ours
        self.reported = False  # whether ``exit`` has gone out to the runner
        with contextlib.suppress(AttributeError, OSError):
            self.fd = os.pidfd_open(pid)

    def ended(self) -> bool:
        """Whether the child has exited. It stays unreaped: its pid and group stay its own."""
        if self.exit is not None:
            return True
        return os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None

    def end(self, timed_out: bool = False) -> None:
        """Start ending the child: SIGTERM to its group now, SIGKILL after the grace."""
        if self.kill_at is None:
            self.timed_out = timed_out
            self._signal(signal.SIGTERM)
            self.kill_at = self.clock() + self.grace_s

    def tick(self) -> None:
        """Act on the clock: the timeout, then the end of the grace."""
        if self.kill_at is None and self.clock() >= self.deadline:
            self.end(timed_out=True)
        elif self.kill_at is not None and self.clock() >= self.kill_at:
            self._signal(signal.SIGKILL)
            self.kill_at = math.inf

    def wake_in(self) -> float | None:
        """Seconds until ``tick`` has something to do (None: nothing but the child's end)."""
        if self.fd is None:
            return orphans.POLL_S
        due = self.deadline if self.kill_at is None else self.kill_at
        return None if due == math.inf else max(0.0, due - self.clock())

    def reap(self) -> Exited:
        """Sweep the ended child's group, then reap it (only now may its pid be reused), then
        what it left outside its group, which has come back to the server."""
        if self.exit is not None:
            return self.exit
        self._signal(signal.SIGKILL)
        # A SIGTERM between the reaping and the record of it would have the shutdown signal
        # a pid that may already be another process's; it waits until the record is made.
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        try:
            _, status = os.waitpid(self.pid, 0)
            self.exit = Exited(self.pid, os.waitstatus_to_exitcode(status), self.timed_out)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        orphans.sweep_adopted(clock=self.clock)
        return self.exit

    def shut_down(self) -> Exited | None:
        """End and reap the child before the server exits; give up on one the kernel holds.
        Returns the exit still to be reported (None: reported already, or given up on)."""
        if self.exit is not None:
            return None if self.reported else self.exit
        self.end()
        give_up = self.clock() + self.grace_s + orphans.KILL_WAIT_S
        while not self.ended():
            if self.clock() >= give_up:
                return None
            self.tick()
            select.select([] if self.fd is None else [self.fd], [], [], orphans.POLL_S)
        return self.reap()

    def _signal(self, sig: int) -> None:
        if self.exit is not None:  # reaped: the pid may be anyone's now
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)


class _Terminated(Exception):
    """SIGTERM to the server: end the running child, then exit."""


def _terminated(signum: int, frame: object) -> None:
    raise _Terminated


def _no_warm(name: str) -> None:
    """A server with nothing to warm (``--exec``: every child a fresh interpreter)."""


@dataclass
class _Loop:
    """The server loop's state: the protocol pipe out, the inbox, the running child and a task
    sent while a stopped child was still dying."""

    target: Callable[[str], int]
    cuda_initialised: Callable[[], bool]
    clock: Callable[[], float]
    grace_s: float
    out: FileIO
    warm: Callable[[str], None] = _no_warm
    inbox: Channel = field(default_factory=lambda: Channel(sys.stdin.fileno()))
    rep: Replicate | None = None
    queued: Run | None = None

    def reply(self, msg: Message) -> None:
        self.out.write(encode(msg))

    def start(self, run: Run) -> None:
        if run.warm:
            self.warm(run.warm)
        try:
            pid = fork_child(lambda: self.target(run.task), close_fds=[self.out.fileno()])
        except OSError as exc:  # out of memory or processes: this task fails, not the server
            self.reply(Refused(f"fork failed: {exc}"))
            return
        # known before it is announced
        self.rep = Replicate(pid, run.timeout_s, self.clock, self.grace_s)
        self.reply(Started(pid))

    def handle(self, msg: Message) -> int | None:
        if isinstance(msg, Stop):
            if self.rep is not None and self.rep.pid == msg.pid:
                self.rep.end()
        elif not isinstance(msg, Run):
            self.reply(Refused(f"the server takes run and stop, not {msg}"))
        elif self.cuda_initialised():  # pragma: no cover - a guard against a future preload
            self.reply(Refused("CUDA initialised in the fork server"))
            return 1
        elif self.rep is None:
            self.start(msg)
        elif self.queued is None:  # it starts once the running child is reaped and reported
            self.queued = msg
        else:
            self.reply(Refused(f"child {self.rep.pid} is still running and a task waits"))
        return None

    def step(self) -> int | None:
        """One message handled, or one wait for a message or the child; then the child's
        deadlines and end. An exit code when the server must stop."""
        try:
            msg = self.inbox.pending()
        except ProtocolError as exc:
            self.reply(Refused(str(exc)))
            return None
        if msg is not None:
            code = self.handle(msg)
            if code is not None:
                return code
        else:
            rep = self.rep
            fds = [self.inbox.fileno()]
            if rep is not None and rep.fd is not None:
                fds.append(rep.fd)
            if self.inbox.fileno() in select.select(fds, [], [],
                                                    rep.wake_in() if rep else None)[0]:
                self.inbox.fill()
        if self.rep is not None:
            self.rep.tick()
            if self.rep.ended():
                self.reply(self.rep.reap())
                self.rep.reported = True
                self.rep = None
                if self.queued is not None:
                    self.start(self.queued)
                    self.queued = None
        return None

    def shut_down(self) -> None:
        """End the running child and whatever it left, and report its end if anyone listens."""
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one shutdown at a time
        end = self.rep.shut_down() if self.rep is not None else None
        orphans.sweep_adopted(clock=self.clock)
        if end is not None:
            with contextlib.suppress(OSError):  # for a runner still listening
                self.reply(end)


def serve(target: Callable[[str], int], cuda_initialised: Callable[[], bool] = lambda: False,
          clock: Callable[[], float] = time.monotonic, runner_pid: int | None = None,
          grace_s: float = TERM_GRACE_S, warm: Callable[[str], None] = _no_warm) -> int:
    """The server loop on stdin and stdout: ``Run`` forks ``target(task_path)``, ``Stop`` ends
    it, every end is reported with ``Exited``. Returns at EOF (0) or SIGTERM (143): its
    runner's death is either (``runner_pid``: the parent it was started by). ``grace_s`` is
    what a child has between SIGTERM and SIGKILL; ``warm`` imports what a ``Run`` names, before
    its fork."""
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # a stray print (ours or a library's) must never reach the protocol pipe
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the runner decides about interrupts
    ignore_warning()  # ... and about Slurm's warning, which reaches every process
    signal.signal(signal.SIGTERM, _terminated)
    runner = os.getppid() if runner_pid is None else runner_pid
    loop = _Loop(target, cuda_initialised, clock, grace_s, out, warm)
    loop.reply(Ready(os.getpid()))
    try:
        orphans.bind_to_runner(runner)
        while True:
            code = loop.step()
            if code is not None:
                return code
    except (EOFError, BrokenPipeError):  # the runner has gone: its child goes too
        return 0
    except _Terminated:
        return 143
    finally:
        loop.shut_down()


class Warmer:
    """``Run.warm`` in the preloading server: each named set imported once, before a fork.

    ``compile`` makes, and drops, ``torch.compile`` of an empty module: that imports what a
    child's ``torch.compile(model)`` would, and compiles nothing (the wrapper is never
    called). A set this server does not know, or one that fails, is left to the child, which
    imports what it needs and reports what goes wrong itself.
    """

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.done: set[str] = set()

    def __call__(self, name: str) -> None:
        if name in self.done or self.torch is None:
            return
        self.done.add(name)
        if name == WARM_COMPILE and hasattr(self.torch, "compile"):
            with contextlib.suppress(Exception):
                self.torch.compile(self.torch.nn.Identity())
        share_heap()


def exec_target(command: Sequence[str]) -> Callable[[str], int]:
    """For ``--exec``: a forked child that becomes ``command TASK``, a fresh interpreter.

    It has its session, its death with the server (the kernel keeps that across ``exec``)
    and its closed protocol pipe from ``fork_child`` already; its stdin (the runner's pipe to
    the server) and stdout (the server's stderr) go to /dev/null, as a spawned child's did.
    """
    def run(task: str) -> int:
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        os.execvp(command[0], [*command, task])  # returns only by raising (fork_child: 70)

    return run


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bench.run.child.server``: torch preloaded, a fork per task; or, with
    ``--exec [--grace S] -- COMMAND...`` (the spawn launcher), nothing preloaded and every
    task ``exec``'d as ``COMMAND TASK``: a fresh interpreter, with the same ownership."""
    import warnings

    runner = os.getppid()  # before the imports: a runner that dies meanwhile is noticed
    ignore_warning()  # and a Slurm warning during them (torch's import) kills nothing
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--exec"]:
        grace_s = float(args[2]) if args[1:2] == ["--grace"] else TERM_GRACE_S
        command = args[args.index("--") + 1:]
        return serve(exec_target(command), runner_pid=runner, grace_s=grace_s)

    # Python 3.12 warns about fork() in a threaded process; the server's only threads are
    # idle library pools, and each child starts its own work from scratch.
    warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*fork.*")
    torch = preload()
    from bench.run.child import worker

    return serve(worker.child_main,
                 lambda: torch is not None and bool(torch.cuda.is_initialized()),
                 runner_pid=runner, warm=Warmer(torch))


def exit_now(code: int) -> NoReturn:
    """Exit without the interpreter's teardown, output flushed first.

    Why: by the time ``main`` returns, every child is reaped and the protocol pipe is done
    with; tearing torch's modules down took the preloading server 0.2-0.3 s, which the runner
    waits for at the end of every run.
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_now(main())
