"""Estimates learned from committed rows: what each cell cost when this kind of machine last
measured it, so a budget is planned on measurements rather than on round numbers.

Why per cell and in parts: a replicate's wall time is its process overhead (start, build,
bookkeeping), its cold pass, its warm-up and its steady window; the first three do not depend
on the stopping settings, the steady window does. So the parts are kept (medians over the
rows), and a replicate is put back together under the settings it will run with. A cell no
row measured keeps the guess (``bench.run.plan.estimate``), scaled by how far the guesses were
off for the cells that were measured here: that is the machine's calibration.

Which rows: those of runs under ``REPORTS/<machine>/`` whose env.json has this fingerprint,
or, where none has, the same machine name (its hardware) and torch version: a kernel update
changes the fingerprint and not what a convolution costs. Standard library only.

At what pace: a run that measured the CPU's reference ceiling (``bench.run.plan.pace``) gives the
pace its rows were measured at; where the probe measured the pace now too, that run's CPU
cells are scaled by the ratio (``CellCost.scale``), and its rows are preferred over those of
runs that cannot be scaled.
"""

from __future__ import annotations

import contextlib
import csv
import json
import statistics
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import schema
from bench.run.plan import pace
from bench.run.plan.pipelines import PIPELINE_KINDS
from bench.schema import Status

#: The calibration needs this many measured cells before it scales a guess.
MIN_CALIBRATION_CELLS = 3


@dataclass(frozen=True)
class CellCost:
    """One cell's measured parts (medians over its ok rows)."""

    iteration_s: float  # a steady iteration
    cold_s: float  # the cold pass
    steady_s: float  # the steady window (the stopping rule's)
    overhead_s: float  # the rest of the replicate's wall time, warm-up apart
    rows: int
    fingerprint: str
    #: now against then (``bench.run.plan.pace``): 0.8 where the CPU runs a fifth faster now than
    #: in the runs these rows come from; 1.0 where it was not measured, or not a CPU cell
    scale: float = 1.0


def _runs(reports: Path, machine: str) -> list[tuple[Path, dict[str, Any]]]:
    out = []
    for env_file in sorted((reports / machine).glob(f"*/{schema.ENV_FILE}")):
        try:
            env = json.loads(env_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(env, dict):
            out.append((env_file.parent, env))
    return out


def _matching(runs: list[tuple[Path, dict[str, Any]]], env: Mapping[str, Any]
              ) -> list[tuple[Path, dict[str, Any]]]:
    """This fingerprint's runs; else those of the same torch on this machine."""
    same = [r for r in runs if r[1].get("fingerprint_id") == env.get("fingerprint_id")]
    if same:
        return same
    torch = (env.get("torch") or {}).get("version")
    return [r for r in runs if (r[1].get("torch") or {}).get("version") == torch]


def _number(row: Mapping[str, str], name: str) -> float | None:
    try:
        value = float(row.get(name) or "")
    except ValueError:
        return None
    return value if value >= 0 else None


def _parts(row: Mapping[str, str], warmup_iters: int, scale: float = 1.0,
           min_time_s: float = 0.0) -> tuple[float, float, float, float] | None:
    """(iteration, cold, steady window, overhead) of one ok row, or None; at a pace ``scale``
    times the row's, where the steady window keeps what ``min_time_s`` (the stopping rule's
    least) made of it. ``warmup_iters``: the untimed iterations the row ran between its cold
    pass and its window, which the estimate adds back under the settings it plans with."""
    t, cold = _number(row, "steady_median_s"), _number(row, "cold_pass_s")
    mean, n, wall = _number(row, "steady_mean_s"), _number(row, "steady_iters"), \
        _number(row, "wall_s")
    if None in (t, cold, mean, n, wall):
        return None
    assert t is not None and cold is not None and mean is not None and n is not None
    assert wall is not None
    if row.get("kind") in PIPELINE_KINDS:  # batches arrive in bursts: the mean is their cost
        t = mean
    steady = mean * n
    # the numerics check is estimated apart (``estimate.numerics_s``), wherever its rows are
    rest = max(wall - cold - steady - warmup_iters * t - (_number(row, "num_time_s") or 0.0),
               0.0)
    window = max(steady * scale, min(steady, min_time_s))
    return t * scale, cold * scale, window, rest * scale


def _settings(env: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Study → its stopping settings, from the plan env.json keeps."""
    studies = ((env.get("plan") or {}).get("studies") or {})
    return {name: ((s or {}).get("settings") or {}) for name, s in studies.items()
            if isinstance(s, dict)}


def _reference_s(rows: Iterable[Mapping[str, str]]) -> float | None:
    """The median p10 of a run's ok rows of the pace's reference cell, or None."""
    found = [t for r in rows
             if r.get("cell_id") == pace.REFERENCE_ID and r.get("status") == Status.OK
             for t in [_number(r, "steady_p10_s")] if t]
    return statistics.median(found) if found else None


def _scale(now: float | None, rows: list[dict[str, str]]) -> float | None:
    """Now against the run of ``rows``, or None where either pace is unknown."""
    then = _reference_s(rows)
    return now / then if now and then else None


def has_reference(reports: Path, env: Mapping[str, Any], cells: Collection[str]) -> bool:
    """Whether a run the estimate learns from measured the pace's reference and one of
    ``cells`` (ids): only then is the pace worth measuring now."""
    for folder, _ in _matching(_runs(reports, str(env.get("machine", ""))), env):
        rows = list(_rows(folder / schema.RESULTS_FILE))
        if _reference_s(rows) is not None and any(
                r.get("cell_id") in cells and r.get("status") == Status.OK for r in rows):
            return True
    return False


#: One row's (iteration, cold, steady window, overhead), its fingerprint and its scale.
_Part = tuple[tuple[float, float, float, float], str, float]

#: The rows whose costs estimate their cells' jobs.
_LEARNED_KINDS = ("model", "ceiling", "repro", *PIPELINE_KINDS)


def repro_key(cell_id: str) -> str:
    """Where ``history`` keeps a cell's bitwise re-run check: a job of two processes of a few
    seeded steps each, whose row's wall time is the whole job, not a replicate's parts."""
    return f"repro:{cell_id}"


def history(reports: Path, env: Mapping[str, Any]) -> dict[str, CellCost]:
    """Cell id → its measured parts on this kind of machine (empty when nothing matches), and
    ``repro_key(cell id)`` → a re-run check's whole job (its ``overhead_s``),
    brought to the pace ``env`` records (``bench.run.plan.pace``) where the run that measured them
    says at which pace it did: then only the rows that can be so scaled estimate a cell.
    Each cell's parts are the medians of its rows in the newest run that measured it: the
    measuring code's own costs change from one version to the next, and the pace corrects
    only for the machine's speed. (On the 2-core VM, what the ``cpu`` profile's model and
    ceiling replicates spent outside their cold passes and steady windows went from 42.6 s
    in the run of 2026-12-03 to 12.6 s on 2026-12-04.)"""
    now = pace.now_s(env)
    #: cell id → run → (parts, fingerprint, scale) of each of its rows there, scaled or
    #: needing no scale
    paced: dict[str, dict[int, list[_Part]]] = {}
    plain: dict[str, dict[int, list[_Part]]] = {}
    #: (cell id, run) → when that run last measured the cell (its rows' newest start)
    when: dict[tuple[str, int], str] = {}
    runs = _matching(_runs(reports, str(env.get("machine", ""))), env)
    for index, (folder, run_env) in enumerate(runs):
        settings = _settings(run_env)
        rows = [r for r in _rows(folder / schema.RESULTS_FILE)
                if r.get("status") == Status.OK and r.get("kind") in _LEARNED_KINDS]
        scale = _scale(now, rows)
        began = _windows_began(folder / schema.SAMPLES_FILE,
                               {r.get("attempt_id", "") for r in rows
                                if r.get("kind") in PIPELINE_KINDS})
        for row in rows:
            cpu = row.get("device") == "cpu"
            k = scale if scale and cpu else 1.0
            st = settings.get(row.get("study", ""), {})
            warm = int(st.get("warmup_iters") or 0)
            if row.get("attempt_id") in began:  # a pipeline's: its start-up batches too
                warm = began[row.get("attempt_id", "")] - 1
            if row.get("kind") == "repro":
                wall = _number(row, "wall_s")
                got = None if wall is None else (0.0, 0.0, 0.0, wall * k)
                cid = repro_key(row["cell_id"])
            else:
                got = _parts(row, warm, k, float(st.get("min_time_s") or 0.0))
                cid = row["cell_id"]
            if got is not None:
                (paced if scale or not cpu else plain).setdefault(cid, {}).setdefault(
                    index, []).append((got, str(run_env.get("fingerprint_id", "")), k))
                when[(cid, index)] = max(when.get((cid, index), ""),
                                         str(row.get("started_at") or ""))
    out = {}
    for cid, by_run in {**plain, **paced}.items():
        measured = by_run[max(by_run, key=lambda i: (when[(cid, i)], i))]
        t, cold, steady, rest = (statistics.median(m[0][i] for m in measured) for i in range(4))
        _, fingerprint, k = measured[-1]
        out[cid] = CellCost(t, cold, steady, rest, len(measured), fingerprint, k)
    return out


def newest_ok(reports: Path, env: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    """(kind, cell id) → the ``started_at`` of its newest ok row in the runs under ``reports``
    of ``env``'s fingerprint: a resume lets it outdate an older failure of the cell
    (``resume.earlier_seconds``)."""
    out: dict[tuple[str, str], str] = {}
    for folder, run_env in _runs(reports, str(env.get("machine", ""))):
        if run_env.get("fingerprint_id") != env.get("fingerprint_id"):
            continue
        for row in _rows(folder / schema.RESULTS_FILE):
            if row.get("status") == Status.OK:
                key = (row.get("kind", ""), row.get("cell_id", ""))
                out[key] = max(out.get(key, ""), row.get("started_at") or "")
    return out


def _windows_began(path: Path, attempts: Collection[str]) -> dict[str, int]:
    """Attempt id → the batch its timed window began at (its first steady ``iter`` in
    ``samples.csv``), for the ``attempts`` of input pipelines.

    Why: a pipeline's window begins past the batches its workers were handed at start-up
    (``schema.feeding_window``) in rows measured so, and right after the first batch in older
    rows; the rows do not say which. What ran untimed before the window is part of neither
    the cold pass nor the window, and the estimate plans it again for the run to come."""
    if not attempts:
        return {}
    out: dict[str, int] = {}
    for sample in _rows(path):
        attempt = sample.get("attempt_id", "")
        if attempt in attempts and sample.get("phase") == "steady":
            with contextlib.suppress(ValueError):
                it = int(sample.get("iter", ""))
                out[attempt] = min(out.get(attempt, it), it)
    return {a: i for a, i in out.items() if i >= 1}


def _rows(path: Path) -> Iterable[dict[str, str]]:
    try:
        with open(path, newline="", encoding="utf-8") as f:
            yield from csv.DictReader(f)
    except (OSError, csv.Error, UnicodeDecodeError):
        return


def calibration(pairs: Iterable[tuple[float, float]]) -> float:
    """The median of measured over guessed seconds, over (measured, guessed) pairs; 1.0
    with fewer than ``MIN_CALIBRATION_CELLS`` of them."""
    ratios = [m / g for m, g in pairs if g > 0]
    return statistics.median(ratios) if len(ratios) >= MIN_CALIBRATION_CELLS else 1.0
