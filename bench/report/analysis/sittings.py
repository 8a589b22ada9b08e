"""Sittings compared before they are pooled: which replicates the verdicts leave out.

The decision is ``bench.sittings``' (the same ``bench check`` and ``--resume --remeasure``
take); this module feeds it the loaded rows and the pace probes of env.json, and gives the
report two things: ``with_left_out``, the dataset with a ``left_out`` column (a replicate of a
sitting that disagrees: its row stays, its figure leaves every statistic), and
``sitting_paces``, one row per sitting and part of the machine for the machine pages.
"""

from __future__ import annotations

import dataclasses
from typing import Final

import numpy as np
import pandas as pd

from bench import sittings
from bench.report.input.load import Dataset
from bench.schema import Status

#: The column ``with_left_out`` adds to the results.
LEFT_OUT: Final = "left_out"
#: What ``sitting_paces`` returns.
PACE_COLUMNS: Final = ("fingerprint_id", "machine", "run_id", "sitting", "part", "pace",
                       "cells", "limit", "agreement", "left_out_cells")


def judgement(ds: Dataset) -> sittings.Judgement:
    """``bench.sittings.judge`` over every ok timed replicate and every pace probe."""
    res = ds.results
    ok = res.loc[(res["status"] == Status.OK) & res["kind"].isin(sittings.PACED_KINDS)
                 & res["sitting"].notna() & (res["steady_median_s"] > 0)]
    obs = [sittings.Observation(run, int(s), cell, sittings.part_of(dev), float(sec))
           for run, s, cell, dev, sec in zip(ok["run_id"], ok["sitting"], ok["cell_id"],
                                              ok["device"], ok["steady_median_s"])]
    for run in ds.runs:
        for record in run.records:
            obs.extend(sittings.Observation(run.run_id, record.number,
                                            f"{sittings.PROBE_PREFIX}{probe}",
                                            sittings.probe_part(probe), seconds)
                       for _, probe, seconds in record.pace)
    return sittings.judge(obs)


def with_left_out(ds: Dataset, verdict: sittings.Judgement) -> Dataset:
    """The dataset with ``LEFT_OUT``: whether a row's replicate is left out of the verdicts."""
    res = ds.results
    if not verdict.disagreeing() and not verdict.cells:
        return dataclasses.replace(ds, results=res.assign(**{LEFT_OUT: False}))
    out = verdict.left_out()
    sitting = res["sitting"].astype("Int64").fillna(-1).astype(int).to_numpy()
    part = np.where(res["device"].to_numpy(object) == "cuda", "*cuda", "*cpu")
    keys = zip(res["run_id"], sitting, res["cell_id"], part)
    mask = [(r, s, c) in out or (r, s, p) in out for r, s, c, p in keys]
    timed = res["kind"].isin(sittings.PACED_KINDS).to_numpy()
    return dataclasses.replace(ds, results=res.assign(**{LEFT_OUT: np.asarray(mask) & timed}))


def left_out(res: pd.DataFrame) -> np.ndarray:
    """The ``LEFT_OUT`` column as booleans (all False where the frame has none)."""
    if LEFT_OUT not in res.columns:
        return np.zeros(len(res), dtype=bool)
    return res[LEFT_OUT].to_numpy(dtype=bool)


def counted(res: pd.DataFrame) -> np.ndarray:
    """The replicates every statistic counts: ok, and not left out."""
    return (res["status"] == Status.OK).to_numpy() & ~left_out(res)


def sitting_paces(ds: Dataset, verdict: sittings.Judgement) -> pd.DataFrame:
    """One row per judged sitting and part (``PACE_COLUMNS``), with how many of its cells'
    replicates were left out one by one."""
    machines = {r.run_id: (r.fingerprint_id, r.machine) for r in ds.runs}
    rows = []
    for p in verdict.paces:
        fp, machine = machines.get(p.run_id, ("", ""))
        n_cells = sum(c.run_id == p.run_id and c.sitting == p.sitting and c.part is p.part
                      for c in verdict.cells)
        rows.append((fp, machine, p.run_id, p.sitting, p.part.value, p.pace, p.cells, p.limit,
                     p.agreement, n_cells))
    return pd.DataFrame(rows, columns=list(PACE_COLUMNS))


#: What ``left_out_cells`` returns.
CELL_COLUMNS: Final = ("fingerprint_id", "machine", "run_id", "sitting", "part", "cell_id",
                       "cell_name", "anchor", "ratio", "reference", "limit")


def left_out_cells(ds: Dataset, verdict: sittings.Judgement) -> pd.DataFrame:
    """One row per sitting's replicates of a cell left out one by one (``CELL_COLUMNS``):
    their median step time over the reference sitting's, and the limit it passed."""
    machines = {r.run_id: (r.fingerprint_id, r.machine) for r in ds.runs}
    res = ds.results
    names = dict(zip(zip(res["run_id"], res["cell_id"]), res["cell_name"]))
    rows = []
    for c in verdict.cells:
        fp, machine = machines.get(c.run_id, ("", ""))
        rows.append((fp, machine, c.run_id, c.sitting, c.part.value, c.cell_id,
                     names.get((c.run_id, c.cell_id), c.cell_id),
                     f"cell-{fp[:8]}-{c.cell_id}", c.ratio, c.reference, c.limit))
    return pd.DataFrame(rows, columns=list(CELL_COLUMNS))
