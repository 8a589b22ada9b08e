"""A fork server that speaks the protocol badly, for the launcher's tests (no torch).

    python tests/runner/fake_server.py MODE MARKER

Its children are forked with the real server's ``fork_child`` (a session of their own, and
death with their server), and they carry ``MARKER`` in their command line, as the server
does, so a test can list whatever survives it. A child reads its task file and does what its
``fault`` says: ``hang`` sleeps, ``orphan`` leaves a process behind in its group and exits 0,
``setsid`` leaves one behind in a session of its own (out of the group's reach) and exits 0,
``setsid-hang`` does that and then sleeps, anything else exits 0 at once. Whatever a child
leaves behind carries the marker too. MODE says how the server misbehaves:

- ``honest``: not at all: it is the real server loop (``serve``) with these children;
- ``garbage``: after ``Started``, a line that is not a message;
- ``late-exit``: it reports a stopped child's end only ``LATE_S`` seconds later;
- ``slow-start``: it forks, then waits ``SLOW_S`` before it says ``Started``;
- ``die``: it exits right after ``Started``, its child still running.

At EOF on stdin it exits without ending its child: that the child dies with it anyway is
part of what is under test.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from bench.run.child.server import fork_child, serve
from bench.run.protocol import Channel, Exited, Message, Ready, Run, Started, Stop, Task, encode

LATE_S = 1.5
SLOW_S = 2.0
MODES = ("honest", "garbage", "late-exit", "slow-start", "die")


def child(task_path: str) -> int:
    fault = Task.from_json(Path(task_path).read_text()).fault
    if fault.startswith("setsid"):  # as a daemonising tool would: a session of its own
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", sys.argv[2]],
                         start_new_session=True)
    if fault in ("hang", "setsid-hang"):
        time.sleep(600)
    elif fault == "orphan":
        subprocess.Popen(["sleep", "600"])
    return 0


def main(mode: str) -> int:
    assert mode in MODES, mode
    if mode == "honest":
        return serve(child)
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)

    def send(msg: Message) -> None:
        out.write(encode(msg))

    def reap(pid: int) -> None:
        _, status = os.waitpid(pid, 0)
        if mode == "late-exit":
            time.sleep(LATE_S)
        send(Exited(pid, os.waitstatus_to_exitcode(status)))

    inbox = Channel(0)
    send(Ready(os.getpid()))
    pid = 0
    while True:
        try:
            msg = inbox.read(3600)
        except EOFError:
            return 0
        if isinstance(msg, Stop) and msg.pid == pid:
            os.killpg(pid, signal.SIGKILL)
            reap(pid)
        elif isinstance(msg, Run):
            task = msg.task
            pid = fork_child(functools.partial(child, task), close_fds=[out.fileno()])
            if mode == "slow-start":
                time.sleep(SLOW_S)
            send(Started(pid))
            if mode == "garbage":
                out.write(b"this is not a message\n")
            elif mode == "die":
                os._exit(1)
            elif Task.from_json(Path(task).read_text()).fault != "hang":
                reap(pid)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
