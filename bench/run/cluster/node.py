"""What a Slurm job runs on its node: one shard, as ``bench run`` in a process of its own.

A shard's folder is found again by its name under whichever machine the node turned out to be
(``shard_dirs``); a resubmitted shard resumes the folder of its kind of node, or starts its own
(``shard_argv``), and notes every job that ran it beside its rows (``note_job``). Standard
library only: submitit pickles :func:`run_shard` by name.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench import schema
from bench.run.cluster import shards

JOBS_FILE = schema.SLURM_JOBS_FILE  # every Slurm job that ran a shard, in its folder


class ShardFailed(RuntimeError):
    """A shard's ``bench run`` ended non-zero: raised in the job, so that Slurm and submitit
    report it FAILED (a returned code would be a COMPLETED job)."""


def shard_dirs(reports: Path, run_id: str, k: int) -> list[Path]:
    """Shard ``k``'s run folder(s): under whichever machine its node turned out to be, and
    ``<run>-shard<k>-<fingerprint>`` where a resubmission met another kind of node."""
    name = shards.run_id(run_id, k)
    folders = [*reports.glob(f"*/{name}"), *reports.glob(f"*/{name}-*")]  # not shard10
    return sorted(p for p in folders if (p / "results.csv").is_file())



def node_env() -> dict[str, Any] | None:
    """This node's environment as ``bench env`` prints it (a probe in a child process, so the
    job's own process never imports torch); None when the probe fails."""
    try:
        done = subprocess.run([sys.executable, "-m", "bench", "env"], capture_output=True,
                              text=True, timeout=600, check=False)
        found = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _fingerprint_of(folder: Path) -> str:
    try:
        env = json.loads((folder / "env.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    return str(env.get("fingerprint_id", "")) if isinstance(env, dict) else ""


def shard_argv(profile: str, reports: Path, run_id: str, k: int, n: int,
               only: Sequence[str] = (),
               env_of_node: Callable[[], dict[str, Any] | None] = node_env,
               budget: str | None = None) -> list[str]:
    """The ``bench run`` arguments of shard ``k``: the folder an earlier job of it left on
    this kind of node (the same fingerprint) resumed, or a new one.

    Why it asks the node: a resubmitted shard can land on a node of the same partition whose
    GPU, driver or software differ. Resuming the first job's folder there is refused (results
    are never mixed), and every resubmission would be refused again; a folder of its own,
    under its machine (suffixed with its fingerprint when the machine's name is the same),
    measures the shard there and is pooled by its fingerprint like any run.
    """
    found = shard_dirs(reports, run_id, k)
    argv = ["run", "--profile", profile, "--shard", f"{k}/{n}",
            *(a for study in only for a in ("--only", study)),
            *(("--budget", budget) if budget else ())]
    name = shards.run_id(run_id, k)
    if not found:
        return [*argv, "--reports", str(reports), "--run-id", name]
    env = env_of_node()
    if env is None:  # no probe answer here: resume, and let bench run say what it finds
        return [*argv, "--out", str(found[0]), "--resume"]
    mine = str(env.get("fingerprint_id", ""))
    same = [f for f in found if _fingerprint_of(f) == mine]
    if same:
        return [*argv, "--out", str(same[0]), "--resume"]
    if (reports / str(env.get("machine", "")) / name).exists():
        name = f"{name}-{mine[:8]}"
    return [*argv, "--reports", str(reports), "--run-id", name]


def run_shard(profile: str, reports: str, run_id: str, k: int, n: int,
              only: Sequence[str] = (), budget: str | None = None) -> int:
    """The function a Slurm job runs: one shard, as ``python -m bench run`` in a process of
    its own (its own main thread and signal handlers, none of the job wrapper's).

    Slurm's warning before a time limit or a preemption (SIGUSR2, which submitit asks for)
    and a cancel's SIGTERM reach every process of the step; they are passed on too, for a
    cluster that signals only this one. The runner handles both (``bench.run.execute.interrupts``):
    the replicate in flight is recorded as interrupted, every row stays, and ``--resume``
    finishes the shard. A non-zero exit raises ``ShardFailed``, so the job is FAILED. With a
    ``budget`` the shard stops cleanly before a replicate that would end past it (exit 0):
    the job's time limit is that budget and a margin, so Slurm's warning never comes first.
    """
    argv = shard_argv(profile, Path(reports), run_id, k, n, only, budget=budget)
    if "--resume" in argv:  # a new folder's env.json names this job; a resumed one's, the first
        note_job(Path(argv[argv.index("--out") + 1]), os.environ.get("SLURM_JOB_ID", ""))
    proc = subprocess.Popen([sys.executable, "-m", "bench", *argv])

    def forward(signum: int, frame: Any) -> None:
        if proc.poll() is None:
            proc.send_signal(signum)

    passed = [sig for sig in (getattr(signal, "SIGUSR2", None), signal.SIGTERM) if sig]
    old = {sig: signal.signal(sig, forward) for sig in passed}
    try:
        code = proc.wait()
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)
    if code:
        how = f"exit code {code}"
        if code < 0:
            with contextlib.suppress(ValueError):
                how = f"signal {signal.Signals(-code).name}"
        raise ShardFailed(f"shard {k}/{n} of run {run_id}: bench run ended with {how}; "
                          "its rows are kept, and --resume submits it again")
    return code


def note_job(folder: Path, job_id: str) -> None:
    """Add ``job_id`` to the shard folder's list of the jobs that ran it (``JOBS_FILE``); a
    new list starts with the first job, the one env.json names. Best effort: a folder that
    cannot be written is the runner's to report, and the shard runs all the same."""
    job_id = job_id.strip()
    listed = job_ids(folder)
    if not job_id or job_id in listed or not folder.is_dir():
        return
    first = "" if listed else _first_job(folder)
    new = [j for j in dict.fromkeys((first, job_id)) if j]
    with contextlib.suppress(OSError), open(folder / JOBS_FILE, "a", encoding="utf-8") as f:
        f.writelines(f"{j}\n" for j in new)


def _first_job(folder: Path) -> str:
    """The Slurm job env.json names: the one that started the folder."""
    try:
        env = json.loads((folder / "env.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    shard = env.get("shard") if isinstance(env, dict) else None
    return str(shard.get("slurm_job_id") or "") if isinstance(shard, dict) else ""


def job_ids(folder: Path) -> list[str]:
    """The jobs ``JOBS_FILE`` lists, oldest first, each once."""
    try:
        text = (folder / JOBS_FILE).read_text(encoding="utf-8")
    except OSError:
        return []
    return list(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))
