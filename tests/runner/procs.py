"""What processes a test left behind, from ``ps``: a test that starts processes must end them."""

from __future__ import annotations

import subprocess
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Proc:
    pid: int
    pgid: int
    ppid: int
    args: str

    def __str__(self) -> str:
        return f"pid {self.pid} pgid {self.pgid} ppid {self.ppid}: {self.args}"


def processes() -> list[Proc]:
    """Every live process. Zombies are left out: they have ended, and wait for a reaper."""
    ps = subprocess.Popen(["ps", "-ww", "-eo", "pid=,pgid=,ppid=,stat=,args="],
                          stdout=subprocess.PIPE, text=True)
    out, _ = ps.communicate(timeout=30)
    procs = []
    for line in out.splitlines():
        pid, pgid, ppid, stat, *args = line.split(None, 4)
        if not stat.startswith("Z") and int(pid) != ps.pid:
            procs.append(Proc(int(pid), int(pgid), int(ppid), args[0] if args else ""))
    return procs


def descendants(root: int, procs: Iterable[Proc] | None = None) -> list[Proc]:
    """The processes below ``root`` in the parent tree (an orphan has left it: see
    ``survivors`` for the other ways to find what a test started)."""
    children: dict[int, list[Proc]] = defaultdict(list)
    for p in processes() if procs is None else procs:
        children[p.ppid].append(p)
    out, todo = [], [root]
    while todo:
        for child in children.pop(todo.pop(), []):
            out.append(child)
            todo.append(child.pid)
    return out


def survivors(marker: str = "", pids: Iterable[int] = (), root: int | None = None
              ) -> list[Proc]:
    """Live processes of a test: whose command line holds ``marker``, whose pid or process
    group is one of ``pids``, or that descend from ``root``."""
    procs = processes()
    wanted = set(pids)
    found = {p for p in procs if (marker and marker in p.args) or p.pid in wanted
             or p.pgid in wanted}
    if root is not None:
        found.update(descendants(root, procs))
    return sorted(found, key=lambda p: p.pid)


def assert_none_survive(marker: str = "", pids: Iterable[int] = (), root: int | None = None,
                        within_s: float = 5.0, keep: Iterable[int] = ()) -> None:
    """Fail unless every such process but those in ``keep`` (a server still meant to run) is
    gone within ``within_s`` (a SIGKILLed process takes a moment to leave the table)."""
    pids, kept = list(pids), set(keep)

    def left_running() -> list[Proc]:
        return [p for p in survivors(marker, pids, root) if p.pid not in kept]

    deadline = time.monotonic() + within_s
    left = left_running()
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = left_running()
    assert not left, "left running:\n" + "\n".join(map(str, left))
