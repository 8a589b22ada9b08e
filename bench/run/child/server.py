"""The fork server: imports torch once, then forks a fresh child per replicate.

See ``bench.run.launch`` for the client side and why the server exists.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys

PRELOAD = ("torch", "torchvision", "torchvision.models", "torch.utils.flop_counter")


def serve() -> int:
    """The server loop (``python -m bench.run.child.server``): read tasks, fork, report exits."""
    import importlib
    import warnings

    # Python 3.12 warns about fork() in a threaded process; the server's only threads are
    # idle library pools, and each child starts its own work from scratch.
    warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*fork.*")
    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    from bench.run.child import worker

    torch = sys.modules.get("torch")
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # a stray print (ours or a library's) must never reach the protocol pipe
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the runner decides about interrupts

    def reply(obj: dict[str, object]) -> None:
        out.write((json.dumps(obj) + "\n").encode())

    reply({"event": "ready", "pid": os.getpid()})
    for raw in sys.stdin.buffer:
        task_path = json.loads(raw)["task"]
        if torch is not None and torch.cuda.is_initialized():  # pragma: no cover - guard
            reply({"event": "error", "error": "CUDA initialised in the fork server"})
            return 1
        pid = os.fork()
        if pid == 0:  # the child: a new session, default signals, then the worker
            code = 70
            try:
                os.setsid()
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                out.close()
                code = worker.child_main(task_path)
            except BaseException:
                import traceback

                traceback.print_exc()
            finally:
                os._exit(code)
        reply({"event": "started", "pid": pid})
        _, status = os.waitpid(pid, 0)
        reply({"event": "exited", "pid": pid, "exit": os.waitstatus_to_exitcode(status)})
    return 0


if __name__ == "__main__":
    sys.exit(serve())
