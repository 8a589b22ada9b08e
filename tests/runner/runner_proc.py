"""A runner that dies while a copy of its fork server's stdin stays open elsewhere (no torch).

    python tests/runner/runner_proc.py MARKER TASK

It starts ``fake_server.py honest MARKER`` (the real server loop), launches TASK (give it a
child that hangs) and starts a bystander that holds a copy of the pipe to the server's
stdin, as any process the runner started with that descriptor open would. It prints
``ready SERVER CHILD BYSTANDER`` (pids) and waits to be killed. With the copy open, the
server sees no EOF when the runner dies: only the kernel's signal on its parent's death can
tell it.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from bench.run.execute.launch import ForkServerLauncher

HERE = Path(__file__).resolve().parent


def main(marker: str, task: str) -> int:
    launcher = ForkServerLauncher([sys.executable, str(HERE / "fake_server.py"), "honest", marker],
                                  start_timeout=30.0)
    child = launcher.launch(Path(task), 600.0)
    server = launcher._server
    assert server is not None and server.proc.stdin is not None
    fd = server.proc.stdin.fileno()
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)",
                                  "bystander"], pass_fds=[fd])
    print("ready", server.proc.pid, child.pid, bystander.pid, flush=True)
    time.sleep(600)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
