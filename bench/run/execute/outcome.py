"""One child process, launched and waited for: how it ended (``Outcome``).

What the runner and the probe share: the task written, the child launched through the
launcher (which owns it, and alone may signal it), then its result file read, or, when it left
none, why not (a timeout, a signal, an exit code with the last line it printed). A child that
could not write its own files exits ``durable.SCRATCH_EXIT``: that is the scratch space's
fault, raised as ``ScratchError``, never the child's outcome.
"""

from __future__ import annotations

import contextlib
import signal
from dataclasses import dataclass
from pathlib import Path

from bench.run.execute import hooks
from bench.run.execute.launch import Launcher, LaunchError
from bench.run.protocol import ProtocolError, Record, Task, warm_for
from bench.run.store import durable
from bench.run.store.durable import ScratchError
from bench.schema import Status


@dataclass(frozen=True)
class Outcome:
    """How one child ended: its status and reason, and its record if it left one."""

    status: str
    reason: str = ""
    record: Record | None = None


def run_child(launcher: Launcher, task: Task, timeout_s: float, *, poll_s: float = 0.2,
              hook: hooks.Hook = hooks.none, target: str = "") -> Outcome:
    """Launch one task and wait for it; ``hook`` is told when it is ``launched`` and when a
    signal is ``stopping`` it (``target``: the job it runs). ``OSError`` when the task file
    cannot be written; a Ctrl-C or SIGTERM has the child stopped, then goes on up."""
    task.path.write_text(task.to_json(), encoding="utf-8")
    try:
        child = launcher.launch(task.path, timeout_s, warm_for(task))
    except LaunchError as exc:
        return Outcome(Status.CRASH, f"launcher failed: {exc}")
    try:
        hook("launched", target)
        end = child.wait(poll_s)
        while end is None:
            end = child.wait(poll_s)
    except LaunchError as exc:
        child.stop()
        return Outcome(Status.CRASH, f"launcher failed: {exc}")
    except BaseException:  # Ctrl-C or SIGTERM: the child's owner ends it, then we stop
        hook("stopping", target)
        child.stop()
        raise
    if end.timed_out:
        return Outcome(Status.TIMEOUT, f"no result after {timeout_s:g} s; process group killed")
    result = Path(task.result_path)
    if result.exists():
        try:
            record = Record.from_json(result.read_text(encoding="utf-8"))
        except (ProtocolError, UnicodeDecodeError) as exc:  # garbage: its row says so
            return Outcome(Status.CRASH, f"unreadable result: {exc}")
        return Outcome(record.status, record.reason, record)
    if end.code == durable.SCRATCH_EXIT:
        raise _child_scratch_error(task)
    tail = log_tail(Path(task.log_path))
    how = _signal_name(end.code) if end.code < 0 else f"exit code {end.code}"
    return Outcome(Status.CRASH, f"{how} without a result" + (
        f"; last output: {tail}" if tail else ""))


def _child_scratch_error(task: Task) -> ScratchError:
    """Why a child could not write its files: the line it left in its log if it could,
    else its exit code (a full disk may refuse that line too)."""
    tail = log_tail(Path(task.log_path), limit=400)
    why = tail.partition(durable.SCRATCH_MARK)[2].strip()
    return ScratchError(Path(task.result_path).parent, OSError(
        why or f"a child could not write its files there (exit code {durable.SCRATCH_EXIT})"))


def _signal_name(code: int) -> str:
    with contextlib.suppress(ValueError):
        return signal.Signals(-code).name
    return f"signal {-code}"


def log_tail(path: Path, limit: int = 200) -> str:
    """The last non-blank line of a child's log (at most ``limit`` characters), or ``""``."""
    with contextlib.suppress(OSError):
        with open(path, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - 4096))
            lines = [ln.strip() for ln in f.read(4096).decode(errors="replace").splitlines()]
        lines = [ln for ln in lines if ln]
        if lines:
            return lines[-1][:limit]
    return ""
