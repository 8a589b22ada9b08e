"""Each side at its best: the fastest CPU cell against the fastest GPU cell of one workload.

Like for like (the same precision and layout on both sides) answers what moving a given
setup to a GPU buys; a buyer also asks what the best each can do buys, the CPU in bf16 with
channels_last where that is its fastest. The CPU-vs-GPU page and the claims both judge it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from bench.report.analysis.bootstrap import ratio_ci
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


def best_against_best(cells: pd.DataFrame, pairs: pd.DataFrame) -> tuple[BestAgainstBest, ...]:
    """For each workload of ``pairs`` (one fingerprint's like-for-like pairs), each device's
    fastest eager cell and the ratio of their median steps with its interval."""
    model = cells.loc[(cells["kind"] == "model") & (cells["compile"] == "off")
                      & cells["steady_median_s"].notna()]
    wanted = pairs[_BEST_KEY].drop_duplicates()
    found = model.loc[model["device"].isin(("cpu", "cuda"))].merge(wanted, on=_BEST_KEY,
                                                                    how="inner")
    # each device's fastest cell of each workload: the first of its group once sorted
    fastest = found.sort_values(["steady_median_s", "cell_id"], kind="stable") \
        .drop_duplicates([*_BEST_KEY, "device"]).astype(object)
    out = []
    for _, group in fastest.groupby(_BEST_KEY, sort=True, dropna=False):
        by = {r.device: r for r in group.itertuples(index=False)}
        if len(by) < 2:
            continue
        cpu, gpu = by["cpu"], by["cuda"]
        est, lo, hi = ratio_ci([cpu.replicate_medians], [gpu.replicate_medians])
        out.append(BestAgainstBest(cpu, gpu, float(est[0]), float(lo[0]), float(hi[0]),
                                   Verdict(pair_verdict(float(lo[0]), float(hi[0]),
                                                        int(cpu.n_ok), int(gpu.n_ok)))))
    return tuple(out)
