"""torch.compile's rule for one workload, shared by its page and home's grid: use the fastest
mode clearly faster than eager (with either kernel cache), else stay eager."""

from __future__ import annotations

import pandas as pd

from bench.report.judge.common import CONFIG_AXES
from bench.report.judge.rows import Pair
from bench.report.judge.selection import judged
from bench.report.vocabulary import Verdict

#: What a compile comparison chooses among (mode, dynamic=, kernel cache); its workload is
#: every other axis.
CHOICES = ("compile", "compile_dynamic", "kernel_cache")
WORKLOAD = [c for c in CONFIG_AXES if c not in CHOICES]


def by_speed(frame: pd.DataFrame) -> pd.DataFrame:
    """Fastest first (stable, so equal speedups keep their order)."""
    return frame.sort_values("speedup", ascending=False, kind="stable")


def faster_pairs(rows: pd.DataFrame) -> pd.DataFrame:
    """One workload's judged pairs clearly faster than eager, fastest first: the first is the
    mode to use; none, stay eager."""
    ok = judged(rows)
    return by_speed(ok.loc[ok["verdict"] == Verdict.FASTER]) if len(ok) else ok


def same_workload(frame: pd.DataFrame, pair: Pair) -> pd.DataFrame:
    """The rows of ``frame`` on ``pair``'s machine and workload, every compile choice."""
    keep = frame["page"].astype(str) == str(pair.page)
    for col in WORKLOAD:
        if col in frame.columns and hasattr(pair, col):
            value = getattr(pair, col)
            keep &= frame[col].isna() if value is None else frame[col].astype(str) == str(value)
    return frame.loc[keep]
