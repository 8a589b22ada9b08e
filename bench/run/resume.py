"""Finishing a run that stopped: which of its replicates are done, which folder it is, and the
one command line that resumes it (printed by ``bench run``, a Slurm run and ``bench status``).
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Iterable, Sequence
from pathlib import Path

from bench.run import runid


def completed_keys(rows: Iterable[dict[str, str]], fingerprint_id: str
                   ) -> set[tuple[str, str, int]]:
    """Replicates already ok (or skipped, e.g. no-cuda) under this fingerprint, among the
    complete ``rows`` (``RunStore.open``): a resume does not run them again. Failed and
    interrupted ones run again."""
    done = set()
    for row in rows:
        if row.get("status") in ("ok", "skipped") and row.get("fingerprint_id") == \
                fingerprint_id:
            with contextlib.suppress(ValueError):
                done.add((row["kind"], row["cell_id"], int(row["replicate"])))
    return done


def latest_run(root: Path, machine: str, profile: str) -> Path | None:
    """The newest run directory of this machine and profile, for ``--resume`` without --out."""
    runs = sorted(p for p in (root / machine).glob(runid.pattern(profile)) if p.is_dir())
    return runs[-1] if runs else None


def resume_command(profile: str, only: Sequence[str] = (), *, executor: str = "local",
                   shards: int | None = None, rest: Sequence[str] = ()) -> str:
    """The whole command that finishes a run, quoted for a shell: ``python -m bench run``
    with its executor (a local run names none), profile, shard count (a Slurm run's), studies,
    then ``rest`` (the folder, or the Slurm options and the run id) and ``--resume``."""
    argv = ["python", "-m", "bench", "run",
            *(("--executor", executor) if executor != "local" else ()), "--profile", profile,
            *(("--shards", str(shards)) if shards is not None else ()),
            *(a for study in only for a in ("--only", study)), *rest, "--resume"]
    return " ".join(shlex.quote(a) for a in argv)
