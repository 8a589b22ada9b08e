"""Finishing a run that stopped: which of its replicates are done, which folder it is, and the
one command line that resumes it (printed by ``bench run``, a Slurm run and ``bench status``).
"""

from __future__ import annotations

import contextlib
import shlex
import statistics
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from bench import sittings
from bench.run.store import runid
from bench.schema import Status


def completed_keys(rows: Iterable[dict[str, str]], fingerprint_id: str
                   ) -> set[tuple[str, str, int]]:
    """Replicates already ok (or skipped, e.g. no-cuda) under this fingerprint, among the
    complete ``rows`` (``RunStore.open``): a resume does not run them again. Failed and
    interrupted ones run again."""
    done = set()
    for row in rows:
        if row.get("status") in (Status.OK, Status.SKIPPED) and row.get("fingerprint_id") == \
                fingerprint_id:
            with contextlib.suppress(ValueError):
                done.add((row["kind"], row["cell_id"], int(row["replicate"])))
    return done


#: The statuses of a replicate that failed on its own account (an interrupted one was stopped
#: from outside and is not expected to fail again).
FAILED = (Status.OOM, Status.TIMEOUT, Status.CRASH, Status.ERROR)


def retries(rows: Iterable[dict[str, str]], fingerprint_id: str) -> set[tuple[str, str, int]]:
    """Replicates an earlier sitting ran that failed and never ended ok: a resume runs them
    again, but after every replicate not yet tried, since a cell that timed out once is
    likely to spend its whole timeout again, and the budget is better spent on cells that
    have not had their turn."""
    rows = list(rows)
    failed = set()
    for row in rows:
        if row.get("status") in FAILED and row.get("fingerprint_id") == fingerprint_id:
            with contextlib.suppress(ValueError):
                failed.add((row["kind"], row["cell_id"], int(row["replicate"])))
    return failed - completed_keys(rows, fingerprint_id)


def left_out_keys(rows: Sequence[dict[str, str]], fingerprint_id: str,
                  records: object) -> set[tuple[str, str, int]]:
    """Replicates ok under this fingerprint whose sitting disagrees with the run's others
    (``bench.sittings``, as ``bench check`` and the report judge it): no verdict counts them,
    so a resume measures them again, in its own sitting, after every replicate not yet tried
    (its row then replaces theirs: a replicate counts by its last attempt)."""
    mine = [r for r in rows if r.get("fingerprint_id") == fingerprint_id]
    if not mine:
        return set()
    recs = [r for r in records if isinstance(r, dict)] if isinstance(records, list) else []
    verdict = sittings.judge_rows(mine, {mine[0].get("run_id", ""): recs})
    out = set()
    for row in mine:
        obs = sittings.observation(row)
        if obs is not None and verdict.is_left_out(obs.run_id, obs.sitting, obs.cell_id,
                                                   obs.part):
            out.add((row["kind"], row["cell_id"], int(row["replicate"])))
    return out


def earlier_seconds(rows: Iterable[dict[str, str]], fingerprint_id: str,
                    ok_since: Mapping[tuple[str, str], str] | None = None
                    ) -> dict[tuple[str, str], float]:
    """(kind, cell id) → the median wall seconds of its replicates in this run's earlier
    sittings, whatever their status: what the cell costs on this machine, a timeout included,
    which outranks any estimate (estimates learn from ok rows alone).

    A failure is left out once the cell has ended ok after it under this fingerprint, in this
    run or in ``ok_since`` ((kind, cell id) → the newest ok row's ``started_at`` elsewhere): a
    cell that timed out under code since fixed must not keep its timeout as its cost."""
    rows = [r for r in rows if r.get("fingerprint_id") == fingerprint_id]
    newest = dict(ok_since or {})
    for row in rows:
        if row.get("status") == Status.OK:
            key = (row.get("kind", ""), row.get("cell_id", ""))
            newest[key] = max(newest.get(key, ""), row.get("started_at", ""))
    walls: dict[tuple[str, str], list[float]] = {}
    for row in rows:
        key = (row.get("kind", ""), row.get("cell_id", ""))
        if row.get("status") in FAILED and row.get("started_at", "") < newest.get(key, ""):
            continue
        try:
            wall = float(row.get("wall_s") or "")
        except ValueError:  # a row the runner wrote without one (an interrupted replicate)
            continue
        walls.setdefault(key, []).append(wall)
    return {key: statistics.median(w) for key, w in walls.items()}


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
