"""What Slurm says about a job: queued, running, ended, forgotten, or no answer.

Why a module of its own: the answer decides whether a shard is submitted again, so a query
that fails must never read as a job that has gone (it may well be running, and a second job
would run its cells twice); that rule, and the commands it asks, are kept in one place.
The command runner is injectable, so tests drive every state without a cluster.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable, Sequence

#: Slurm states of a job that is still queued or running.
ACTIVE = frozenset({"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED",
                    "REQUEUED", "RESIZING", "SIGNALING", "STAGE_OUT"})
#: A job Slurm did not answer about (squeue or scontrol failed: a controller that timed out,
#: a command that could not run). Counted as still active: it may well be running.
UNKNOWN = "UNKNOWN"
#: A job Slurm no longer knows (its ``Invalid job id``): it ended long enough ago.
GONE = "GONE"


Runner = Callable[[Sequence[str]], str]


class QueryError(RuntimeError):
    """A Slurm command that did not answer: its name, and its own first line of error."""


def run_command(command: Sequence[str]) -> str:
    """A Slurm command's output; ``QueryError`` when it cannot run or exits non-zero (an empty
    answer from a controller that timed out is no answer)."""
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, timeout=30,
                              check=False)
    except subprocess.TimeoutExpired:
        raise QueryError(f"{command[0]} did not answer within 30 s") from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise QueryError(f"{command[0]} could not run ({exc})") from None
    if done.returncode:
        said = next((line.strip() for line in (done.stderr + done.stdout).splitlines()
                     if line.strip()), "")
        raise QueryError(f"{command[0]} exited {done.returncode}" + (f": {said}" if said else ""))
    return done.stdout


def _forgotten(exc: QueryError) -> bool:
    """Whether Slurm answered that it does not know the job (``Invalid job id specified``):
    an answer, not a failure."""
    return "invalid job id" in str(exc).lower()


class Queue:
    """A job's state from ``squeue`` while it is queued, from ``scontrol`` once it has ended
    (``sacct`` needs accounting, which many clusters, and this project's test cluster, lack).
    The command runner is injectable, so tests can drive every state."""

    def __init__(self, run: Runner = run_command) -> None:
        self._run = run
        self.errors: dict[str, str] = {}  # job id → why its state is UNKNOWN

    def state(self, job_id: str) -> str:
        """``RUNNING``, ``COMPLETED``, ``CANCELLED``, ``TIMEOUT``, …; ``GONE`` once Slurm no
        longer knows the job; ``UNKNOWN`` when Slurm did not answer (``errors`` says why)."""
        self.errors.pop(job_id, None)
        try:
            out = self._run(["squeue", "-h", "-j", job_id, "-o", "%T"]).strip()
        except QueryError as exc:
            if not _forgotten(exc):
                return self._unknown(job_id, str(exc))
            out = ""
        if out:
            return out.splitlines()[0].strip()
        try:
            text = self._run(["scontrol", "-o", "show", "job", job_id])
        except QueryError as exc:
            return GONE if _forgotten(exc) else self._unknown(job_id, str(exc))
        for word in text.split():
            if word.startswith("JobState="):
                return word.split("=", 1)[1]
        return self._unknown(job_id, "scontrol printed no JobState for it")

    def _unknown(self, job_id: str, why: str) -> str:
        self.errors[job_id] = why
        return UNKNOWN

    def cancel(self, job_id: str) -> None:
        with contextlib.suppress(QueryError):
            self._run(["scancel", job_id])
