"""No process outlives its owner: the fork server dies with its runner, a child with its
server, and whatever a child started that left its group comes back to the server, which
kills and reaps it.

Why a module of its own: this is the kernel's side of the server's ownership of its children
(Linux's ``prctl``: ``PR_SET_PDEATHSIG`` and ``PR_SET_CHILD_SUBREAPER``; ``/proc`` for the
processes the server has adopted), apart from the loop that forks, times out and reports
them (``bench.run.child.server``). Where there is no ``prctl`` or ``/proc`` each step is a
no-op, and the worker's own alarm is the backstop.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from collections.abc import Callable

#: How often a wait for processes to go looks again: a sweep of the adopted, and the server's
#: wait for its child where it has no pidfd (not Linux).
POLL_S = 0.02
#: After SIGKILL, how long a process is waited for: the server's child when the server shuts
#: down, an adopted orphan in a sweep (a process stuck in the kernel may take longer; the
#: kernel still ends it, and init reaps it).
KILL_WAIT_S = 5.0
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> bool:
    """Linux's ``prctl``; False where it is not there or refuses."""
    if not sys.platform.startswith("linux"):
        return False
    with contextlib.suppress(OSError, AttributeError):
        return bool(ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0)
    return False


def bind_to_runner(runner_pid: int) -> None:
    """In the server: SIGTERM when its runner dies (the runner is its parent), and adopt
    whatever its children's descendants leave behind. A runner already gone by the time
    the request took effect is a SIGTERM now."""
    _prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    if os.getppid() != runner_pid:
        os.kill(os.getpid(), signal.SIGTERM)


def _children_from_proc(me: int) -> set[int]:
    """Every process whose parent is ``me``, zombies included, from /proc/<pid>/stat."""
    found: set[int] = set()
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                with open(f"/proc/{name}/stat", "rb") as f:
                    stat = f.read()
                if int(stat[stat.rindex(b")") + 2:].split()[1]) == me:  # after "(comm) S"
                    found.add(int(name))
    return found


def adopted(exclude: int | None = None) -> list[int]:
    """This process's children other than ``exclude``: as a subreaper, the orphans of its
    children's descendants (zombies included, to be reaped). From /proc (none without it)."""
    me = os.getpid()
    try:
        tasks = os.listdir(f"/proc/{me}/task")
        found: set[int] = set()
        for task in tasks:  # the kernel's own list, where it keeps one
            with open(f"/proc/{me}/task/{task}/children") as f:
                found.update(int(pid) for pid in f.read().split())
    except OSError:
        found = _children_from_proc(me)
    found.discard(exclude if exclude is not None else -1)
    return sorted(found)


def sweep_adopted(exclude: int | None = None, clock: Callable[[], float] = time.monotonic
                  ) -> None:
    """Kill and reap every adopted orphan (and its own group), until none is left; a process
    the kernel holds is given up on after ``KILL_WAIT_S``."""
    give_up = clock() + KILL_WAIT_S
    while (pids := adopted(exclude)) and clock() < give_up:
        for pid in pids:  # each is our child and unreaped: its pid and group are its own
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        for pid in pids:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
        time.sleep(POLL_S)


def die_with_server(server_pid: int) -> None:
    """In a forked child: have the kernel SIGKILL this process when the server dies, so a
    child never outlives a server that was itself killed (Linux's ``PR_SET_PDEATHSIG``;
    elsewhere a no-op, and the worker's own alarm is the backstop)."""
    _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
    if os.getppid() != server_pid:  # the server died before the request took effect
        os._exit(1)
