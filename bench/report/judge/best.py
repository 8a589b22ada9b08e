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

import pandas as pd

from bench.report.analysis.intervals import ratio_ci
from bench.report.analysis.pairs import verdict as pair_verdict
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


def _setting(cell: Any) -> tuple[str, str]:
    return (str(cell.precision), str(cell.memory_format))


def _key(group: pd.DataFrame) -> tuple[str, ...]:
    """A workload's key, as text: a missing value (NaN) is equal to itself there."""
    return tuple(str(v) for v in group[_BEST_KEY].iloc[0])


def _both_tried(group: pd.DataFrame, cpu: Any, gpu: Any) -> bool:
    """Whether each side's fastest setting was measured on the other side too, so that
    neither is at the best of a choice the other was not given."""
    tried = {d: set(map(tuple, part[_SETTING].astype(str).to_numpy()))
             for d, part in group.groupby("device")}
    return _setting(gpu) in tried["cpu"] and _setting(cpu) in tried["cuda"]


def best_against_best(cells: pd.DataFrame, pairs: pd.DataFrame) -> tuple[BestAgainstBest, ...]:
    """For each workload of ``pairs`` (one fingerprint's like-for-like pairs) where each
    device's fastest eager cell has a setting the other device measured too, those two cells
    and the ratio of their median steps with its interval."""
    model = cells.loc[(cells["kind"] == "model") & (cells["compile"] == "off")
                      & cells["steady_median_s"].notna()]
    wanted = pairs[_BEST_KEY].drop_duplicates()
    found = model.loc[model["device"].isin(("cpu", "cuda"))].merge(wanted, on=_BEST_KEY,
                                                                    how="inner")
    # each device's fastest cell of each workload: the first of its group once sorted
    fastest = found.sort_values(["steady_median_s", "cell_id"], kind="stable") \
        .drop_duplicates([*_BEST_KEY, "device"]).astype(object)
    every = {_key(g): g for _, g in found.groupby(_BEST_KEY, sort=True, dropna=False)}
    out = []
    for _, group in fastest.groupby(_BEST_KEY, sort=True, dropna=False):
        by = {r.device: r for r in group.itertuples(index=False)}
        if len(by) < 2:
            continue
        cpu, gpu = by["cpu"], by["cuda"]
        if not _both_tried(every[_key(group)], cpu, gpu):
            continue
        est, lo, hi = ratio_ci([cpu.replicate_medians], [gpu.replicate_medians])
        out.append(BestAgainstBest(cpu, gpu, float(est[0]), float(lo[0]), float(hi[0]),
                                   Verdict(pair_verdict(float(lo[0]), float(hi[0]),
                                                        int(cpu.n_ok), int(gpu.n_ok)))))
    return tuple(out)
