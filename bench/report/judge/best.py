"""Each side at its best: the fastest CPU cell against the fastest GPU cell of one workload.

Like for like (the same precision and layout on both sides) answers what moving a given
setup to a GPU buys; a buyer also asks what the best each can do buys, the CPU in bf16 with
channels_last where that is its fastest. The CPU-vs-GPU page and the claims both judge it.

Why only where each side's best setting was measured on the other side too: a side's best is
the best of what it ran. A GPU at the best of four precisions against a CPU measured in fp32
alone is not the CPU at its best, and the ratio would credit the GPU with the CPU's unmeasured
bf16 gain (426× where the like-for-like figure was 212×).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from bench.report.analysis.intervals import ratio_ci
from bench.report.analysis.pairs import verdict as pair_verdict
from bench.report.judge.rows import records, texts
from bench.report.vocabulary import Verdict


@dataclass(frozen=True)
class BestAgainstBest:
    """One workload with each side at its best measured setting: the fastest CPU cell
    against the fastest GPU cell of the same model, mode and batch, whatever their
    precision, layout and threads."""

    cpu: Any  # the CPU's fastest cell (a row of the analysis' cells)
    gpu: Any
    speedup: float
    ci_low: float
    ci_high: float
    verdict: Verdict

    @property
    def same_setting(self) -> bool:
        """Whether both bests are the like-for-like setting (the same precision and layout)."""
        return (self.cpu.precision, self.cpu.memory_format) == (self.gpu.precision,
                                                                self.gpu.memory_format)


#: A workload compared best against best: everything but the settings a side may choose.
_BEST_KEY = ["fingerprint_id", "model", "mode", "batch_size", "resolution", "shapes"]
#: The settings a side may choose that both sides have.
_SETTING = ["precision", "memory_format"]
#: Each row's workload, numbered in the workloads' sorted order (a working column).
_WORKLOAD = "_workload"
#: Each row's position in the analysis' cells (a working column).
_ROW = "_row"


def _tried(found: pd.DataFrame, device: str, side: pd.DataFrame) -> np.ndarray:
    """Per row of ``side`` (one device's fastest cells, indexed by workload): whether its
    setting was measured on ``device`` too, in the same workload."""
    tried = set(zip(found[_WORKLOAD].tolist(), found["device"].tolist(),
                    texts(found["precision"]), texts(found["memory_format"])))
    return np.fromiter(((w, device, p, f) in tried for w, p, f in
                        zip(side.index.tolist(), texts(side["precision"]),
                            texts(side["memory_format"]))),
                       dtype=bool, count=len(side))


def best_against_best(cells: pd.DataFrame, pairs: pd.DataFrame) -> tuple[BestAgainstBest, ...]:
    """For each workload of ``pairs`` (one fingerprint's like-for-like pairs) where each
    device's fastest eager cell has a setting the other device measured too, those two cells
    and the ratio of their median steps with its interval.

    Why whole columns at a time, and only the columns it decides on until the end: a tree of
    many machines has thousands of workloads, and a hundred columns a cell; taking them one
    group at a time cost a third of the report's build."""
    eager = ((cells["kind"] == "model") & (cells["compile"] == "off")
             & cells["steady_median_s"].notna() & cells["device"].isin(("cpu", "cuda")))
    narrow = cells.loc[eager, [*_BEST_KEY, "device", *_SETTING, "steady_median_s", "cell_id"]]
    narrow[_ROW] = np.flatnonzero(eager.to_numpy())
    found = narrow.merge(pairs[_BEST_KEY].drop_duplicates(), on=_BEST_KEY, how="inner")
    if found.empty:
        return ()
    found[_WORKLOAD] = found.groupby(_BEST_KEY, sort=True, dropna=False).ngroup()
    # each device's fastest cell of each workload: the first of its group once sorted
    fastest = found.sort_values(["steady_median_s", "cell_id"], kind="stable") \
        .drop_duplicates([_WORKLOAD, "device"]).set_index(_WORKLOAD)
    cpu, gpu = (fastest.loc[fastest["device"] == d] for d in ("cpu", "cuda"))
    both = cpu.index.intersection(gpu.index).sort_values()
    cpu, gpu = cpu.loc[both], gpu.loc[both]
    # neither side at the best of a choice the other was not given
    fair = _tried(found, "cuda", cpu) & _tried(found, "cpu", gpu)
    if not fair.any():
        return ()
    cpu, gpu = (cells.iloc[side.loc[fair, _ROW].to_numpy()].astype(object) for side in (cpu, gpu))
    est, lo, hi = ratio_ci(list(cpu["replicate_medians"]), list(gpu["replicate_medians"]))
    return tuple(
        BestAgainstBest(c, g, float(e), float(low), float(high),
                        Verdict(pair_verdict(float(low), float(high), int(c.n_ok),
                                             int(g.n_ok))))
        for c, g, e, low, high in zip(records(cpu), records(gpu), est, lo, hi))
