"""An input pipeline's timed window, past its workers' start-up.

A DataLoader hands each of its workers ``schema.PREFETCH_FACTOR`` batches when it starts. They
are all in work at once and arrive in a burst after the first, so a window that times them
reads a rate the workers never sustain. The child takes them before its window
(``Settings.feeding``); rows measured before it did timed them: on the H200 host, every one
of their 3 to 18 timed batches with 2 to 16 workers.

A replicate's window is read from its samples: the ``iter`` of its first timed batch is how
many batches were taken before it. The start-up batches it still holds are cut and the rate
recomputed over the whole rounds of the workers that remain, where at least
``schema.MIN_ROUNDS`` do; with fewer, the replicate gives no rate (timed inside the start-up).
A window that starts past the start-up keeps its row's own figures.
"""

from __future__ import annotations

import math
from typing import Any, Final

import pandas as pd

from bench import schema

#: What ``windows`` returns per row: the delivered rate and mean batch time over the window
#: past start-up (NaN where too little of it was timed), and how many timed batches were cut.
WINDOW_COLUMNS: Final = ("window_rate", "window_batch_s", "startup_cut")
_KEY = ["fingerprint_id", "run_id", "cell_id", "replicate"]


def windows(rows: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """``WINDOW_COLUMNS`` for each ok pipeline or e2e row of ``rows``, on its index."""
    steady = samples.loc[samples["phase"] == "steady", [*_KEY, "iter", "batch_size", "seconds"]]
    steady = steady.loc[steady["cell_id"].isin(set(rows["cell_id"]))]
    blocks = dict(iter(steady.groupby(_KEY, sort=False)))
    out = [_window(r, blocks.get(tuple(getattr(r, k) for k in _KEY)))
           for r in rows.itertuples(index=False)]
    return pd.DataFrame(out, index=rows.index, columns=list(WINDOW_COLUMNS))


def _window(row: Any, block: pd.DataFrame | None) -> tuple[float, float, int]:
    rate, batch_s = float(row.samples_per_s), float(row.steady_mean_s)
    if block is None or block.empty:  # nothing says where its window began: as written
        return rate, batch_s, 0
    workers = 0 if pd.isna(row.num_workers) else int(row.num_workers)
    block = block.sort_values("iter", kind="stable")
    cut = max(0, schema.startup_batches(workers) - int(block["iter"].iloc[0]))
    if cut == 0:
        return rate, batch_s, 0
    size = schema.round_size(workers)
    kept = block.iloc[cut:]
    kept = kept.iloc[: len(kept) // size * size]
    seconds = float(kept["seconds"].sum())
    if len(kept) < schema.MIN_ROUNDS * size or seconds <= 0:
        return math.nan, math.nan, cut
    return float(kept["batch_size"].sum()) / seconds, seconds / len(kept), cut
