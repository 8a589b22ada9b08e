"""Estimates learned from committed rows: what each cell cost when this kind of machine last
measured it, so a budget is planned on measurements rather than on round numbers.

Why per cell and in parts: a replicate's wall time is its process overhead (start, build,
bookkeeping), its cold pass, its warm-up and its steady window; the first three do not depend
on the stopping settings, the steady window does. So the parts are kept (medians over the
rows), and a replicate is put back together under the settings it will run with. A cell no
row measured keeps the guess (``bench.run.estimate``), scaled by how far the guesses were
off for the cells that were measured here: that is the machine's calibration.

Which rows: those of runs under ``REPORTS/<machine>/`` whose env.json has this fingerprint,
or, where none has, the same machine name (its hardware) and torch version: a kernel update
changes the fingerprint and not what a convolution costs. Standard library only.
"""

from __future__ import annotations

import csv
import json
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import schema

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


def _parts(row: Mapping[str, str], warmup_iters: int) -> tuple[float, float, float, float] | None:
    """(iteration, cold, steady window, overhead) of one ok row, or None."""
    t, cold = _number(row, "steady_median_s"), _number(row, "cold_pass_s")
    mean, n, wall = _number(row, "steady_mean_s"), _number(row, "steady_iters"), \
        _number(row, "wall_s")
    if None in (t, cold, mean, n, wall):
        return None
    assert t is not None and cold is not None and mean is not None and n is not None
    assert wall is not None
    steady = mean * n
    return t, cold, steady, max(wall - cold - steady - warmup_iters * t, 0.0)


def _warmups(env: Mapping[str, Any]) -> dict[str, int]:
    """Study → its warm-up iterations, from the plan env.json keeps."""
    studies = ((env.get("plan") or {}).get("studies") or {})
    return {name: int(((s or {}).get("settings") or {}).get("warmup_iters") or 0)
            for name, s in studies.items() if isinstance(s, dict)}


#: The rows whose costs estimate their cells' (a repro row's two processes are not one cost).
_LEARNED_KINDS = ("model", "ceiling", "pipeline", "e2e")


def history(reports: Path, env: Mapping[str, Any]) -> dict[str, CellCost]:
    """Cell id → its measured parts on this kind of machine (empty when nothing matches)."""
    found: dict[str, list[tuple[float, float, float, float]]] = {}
    fingerprints: dict[str, str] = {}
    for folder, run_env in _matching(_runs(reports, str(env.get("machine", ""))), env):
        warm = _warmups(run_env)
        for row in _rows(folder / schema.RESULTS_FILE):
            if row.get("status") != "ok" or row.get("kind") not in _LEARNED_KINDS:
                continue
            got = _parts(row, warm.get(row.get("study", ""), 0))
            if got is not None:
                found.setdefault(row["cell_id"], []).append(got)
                fingerprints[row["cell_id"]] = str(run_env.get("fingerprint_id", ""))
    out = {}
    for cid, parts in found.items():
        t, cold, steady, rest = (statistics.median(p[i] for p in parts) for i in range(4))
        out[cid] = CellCost(t, cold, steady, rest, len(parts), fingerprints[cid])
    return out


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
