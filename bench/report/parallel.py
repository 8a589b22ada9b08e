"""A second core for the report: a forked worker shares a list of independent jobs.

Why: the build is a chain of CPU-bound steps (read every run, compare every axis, render
every page), and on a 2-core machine one core would sit idle through most of it. A forked
child inherits everything already computed, so nothing is sent to it; only its results come
back, pickled into a temporary file. Threads would not do: most of this is pandas and Python
code that holds the GIL.

Both processes take the next job from one queue (a pipe of job numbers) until it is empty, so
the split follows what the jobs really cost, sending the results back included.

The worker is owned here: started, read and reaped inside one call, killed if this process
leaves early (Ctrl-C, an exception), never outliving it. A job the worker took but did not
send back (it died, or its result would not pickle) is done here instead, with a note on
stderr: a broken worker costs time, never results. An exception raised by a job is a result:
it is raised here, the one of the first job in list order, as a plain loop would.

Where forking is not safe or not useful (not Linux, one core, other threads running, fewer
than two jobs, or ``TORCH_KNOBS_REPORT_WORKERS=0``), the jobs simply run here, in order.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: Set to ``0`` to run every job in this process (for debugging, or a fork-hostile host).
ENV_SWITCH = "TORCH_KNOBS_REPORT_WORKERS"
#: Job numbers go through the queue pipe as four-byte tokens; this many fit in its buffer.
_MAX_TOKENS = 4096


def can_fork() -> bool:
    """Whether a forked worker would run on a core of its own, and safely: a process with other
    threads is never forked (the child could wait forever on a lock one of them held)."""
    if sys.platform != "linux" or os.environ.get(ENV_SWITCH, "").strip() == "0":
        return False
    return len(os.sched_getaffinity(0)) >= 2 and threading.active_count() == 1


def fork_map(fn: Callable[[T], R], items: Sequence[T], *, fork: bool | None = None,
             here: Callable[[], object] | None = None) -> list[R]:
    """``[fn(x) for x in items]``, shared with a forked worker (see the module docstring).

    List the slow jobs first: the queue hands them out in order, and a quick last job keeps
    one process from finishing long after the other. ``fork`` overrides :func:`can_fork`.
    Results must pickle; ``fn`` and ``items`` need not (the worker inherits them).
    ``here``: a job for this process alone, done first while the worker starts on the queue
    (what it makes stays here, so it need not pickle: it keeps it in a closure).
    """
    jobs = list(items)
    if not (can_fork() if fork is None else fork) or len(jobs) < 2:
        if here is not None:
            here()
        return [fn(x) for x in jobs]
    outcomes: dict[int, tuple[bool, Any]] = {}
    received: dict[int, tuple[bool, Any]] = {}
    # Objects that exist at the fork stay out of the garbage collector's passes meanwhile: a
    # pass writes to every object it visits, which would copy the shared heap, page by page,
    # in both processes.
    gc.freeze()
    try:
        try:
            worker = _Worker(fn, jobs)
        except OSError as exc:  # no process to spare (EAGAIN, ENOMEM): all of it here
            trouble = f"could not start ({exc})"
            if here is not None:
                here()
        else:
            with worker:
                if here is not None:
                    here()
                for i in worker.take():
                    outcomes[i] = _run(fn, jobs[i])
                received, trouble = worker.collect()
    finally:
        gc.unfreeze()
    outcomes.update(received)
    redo = [i for i in range(len(jobs)) if i not in outcomes]
    if redo and trouble:
        print(f"note: report worker: {trouble}; {len(redo)} job(s) redone here", file=sys.stderr)
    for i in redo:
        outcomes[i] = _run(fn, jobs[i])
    results: list[R] = []
    for i in range(len(jobs)):
        ok, value = outcomes[i]
        if not ok:
            raise value
        results.append(value)
    return results


def _run(fn: Callable[[T], R], item: T) -> tuple[bool, Any]:
    try:
        return True, fn(item)
    except Exception as exc:  # raised in list order by fork_map, like a plain loop
        return False, exc


def _tokens(n: int) -> tuple[list[range], bytes]:
    """The jobs as queue tokens: one per job, or runs of neighbours beyond ``_MAX_TOKENS``."""
    size = -(-n // _MAX_TOKENS)
    groups = [range(k, min(k + size, n)) for k in range(0, n, size)]
    return groups, b"".join(k.to_bytes(4, "little") for k in range(len(groups)))


class _Worker:
    """The forked child, the job queue and the file its results come back in."""

    def __init__(self, fn: Callable[[Any], Any], jobs: list[Any]) -> None:
        self.groups, tokens = _tokens(len(jobs))
        queue_r, queue_w = os.pipe()
        os.write(queue_w, tokens)  # at most 16 KiB: fits the pipe, so this never blocks
        os.close(queue_w)  # before the fork: the queue ends when it is read empty
        self.queue_fd: int | None = queue_r
        self.results: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed by __exit__
        sys.stdout.flush()  # a buffered line would otherwise be printed by both processes
        sys.stderr.flush()
        try:
            pid = os.fork()
        except OSError:
            os.close(queue_r)
            self.results.close()
            raise
        if pid == 0:  # pragma: no cover - the child; its coverage is not collected
            _child(fn, jobs, self)
        self.pid: int | None = pid

    def take(self) -> Iterator[int]:
        """Job numbers taken from the queue until it is empty.

        Every token is four bytes, all written before the fork, and Linux reads a pipe under
        its lock, so a four-byte read is one whole token even with two readers.
        """
        assert self.queue_fd is not None
        while True:
            token = os.read(self.queue_fd, 4)
            if len(token) < 4:
                return
            yield from self.groups[int.from_bytes(token, "little")]

    def collect(self) -> tuple[dict[int, tuple[bool, Any]], str]:
        """Wait for the worker; its outcomes, and what went wrong if it did not send all."""
        assert self.pid is not None
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        code = os.waitstatus_to_exitcode(status)
        trouble = "" if code == 0 else f"exited with {code}" if code > 0 else f"signal {-code}"
        received: dict[int, tuple[bool, Any]] = {}
        self.results.seek(0)
        while True:
            try:
                i, sent = pickle.load(self.results)
            except EOFError:
                break
            except Exception as exc:  # cut short by the worker's death
                trouble = trouble or f"unreadable results ({type(exc).__name__})"
                break
            if isinstance(sent, str):  # the result would not pickle; sent is why
                trouble = trouble or sent
            else:
                received[i] = sent
        return received, trouble

    def __enter__(self) -> _Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        """Kill and reap the worker if it is still there, and close the queue and the file."""
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.pid = None
        if self.queue_fd is not None:
            os.close(self.queue_fd)
            self.queue_fd = None
        self.results.close()


def _child(fn: Callable[[Any], Any], jobs: list[Any], worker: _Worker) -> None:
    """Never returns: the child must not run the parent's cleanup (atexit, open files)."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # a Ctrl-C ends it quietly, no traceback
        gc.disable()  # see fork_map; the child is short-lived
        for i in worker.take():
            outcome = _run(fn, jobs[i])
            try:
                data = pickle.dumps((i, outcome), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as exc:
                why = f"a result would not pickle ({type(exc).__name__}: {exc})"
                data = pickle.dumps((i, why[:300]), protocol=pickle.HIGHEST_PROTOCOL)
            worker.results.write(data)
        worker.results.flush()
        code = 0
    finally:
        os._exit(code)
