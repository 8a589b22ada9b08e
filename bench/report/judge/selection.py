"""Which rows answer each question: one selection per question, used by every answer to it.

The advice, the claims, the pages and the home page all ask "which cudnn.benchmark pairs
count?" and "which fingerprints still speak?". Each question has one function here, so that
the claims page, a topic page and the home page can never count different things under the
same words.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

import numpy as np
import pandas as pd

from bench import schema
from bench.report.vocabulary import Verdict

#: What a regime's comparison rows are grouped by: machine, device, model family, mode,
#: precision, layout, shapes and batch (each rule drops the axis it compares).
REGIME_COLUMNS = [
    "fingerprint_id",
    "machine",
    "page",
    "device",
    "model_family",
    "mode",
    "precision",
    "memory_format",
    "shapes",
    "batch_size",
]


def current(frame: pd.DataFrame, superseded: Collection[str]) -> pd.DataFrame:
    """``frame`` (keyed by ``page``) without the fingerprints a newer step definition
    superseded: the rows every answer comes from (their machine pages keep them)."""
    if frame.empty or not superseded:
        return frame
    return frame.loc[~frame["page"].isin(list(superseded))]


def judged(frame: pd.DataFrame) -> pd.DataFrame:
    """The comparisons with enough ok replicates on both sides to have a verdict."""
    if frame.empty:
        return frame
    return frame.loc[frame["verdict"] != Verdict.INSUFFICIENT]


def counted_benchmark(pairs: pd.DataFrame) -> pd.DataFrame:
    """The cudnn.benchmark pairs that answer "should I turn it on?".

    Those with cudnn.deterministic off (the default: with it on, cuDNN may choose only among
    deterministic algorithms, another question) whose cold passes met an empty kernel cache
    (or, in rows from before per-replicate caches, the machine's shared one): what a fresh
    machine pays decides, and the warm figures ride along on those rows (``warm_*``). A regime
    measured only with a warm cache answers from its warm pairs, so it is not silently lost;
    the pages say which cache each figure met.
    """
    if pairs.empty:
        return pairs
    pairs = pairs.loc[pairs["cudnn_deterministic"] == "off"]
    if pairs.empty:
        return pairs
    warm = (pairs["kernel_cache"] == "warm").to_numpy()
    regime = pd.util.hash_pandas_object(pairs[REGIME_COLUMNS], index=False).to_numpy()
    cold_regimes = set(regime[~warm].tolist())
    return pairs.loc[~warm | ~np.isin(regime, list(cold_regimes))]


def cold_cache(pairs: pd.DataFrame) -> pd.DataFrame:
    """The pairs whose cold passes met no warm kernel cache: the one-off costs a reader of a
    fresh machine pays (a warm pair's cost is quoted beside them, never instead of them)."""
    if pairs.empty:
        return pairs
    return pairs.loc[pairs["kernel_cache"] != "warm"]


def superseded_pages(machine_summary: pd.DataFrame) -> frozenset[str]:
    """The fingerprints a newer step definition of the same machine superseded (from the
    analysis' machine summary)."""
    if machine_summary.empty:
        return frozenset()
    return frozenset(machine_summary.loc[machine_summary["superseded"].astype(bool), "page"]
                     .astype(str))


#: The settings a re-run check with benchmark on must share with its partner with it off, so
#: that benchmark is the one thing that differs between them (the kernel cache included).
RERUN_SETTINGS = tuple(c for c in schema.AXIS_COLUMNS if c != "cudnn_benchmark")


def benchmark_off_partner(on: Any, off: Iterable[Any]) -> tuple[Any, list[str]]:
    """The re-run check with benchmark off (of ``off``) of ``on``'s fingerprint, model and
    mode that differs from it in the fewest settings, and those settings ((None, []) where
    there is none). The claims page and the determinism page both ask it: only a partner that
    differs in nothing else tells what benchmark did to re-runs."""
    found: tuple[Any, list[str]] = (None, [])
    for o in off:
        if any(str(getattr(o, c)) != str(getattr(on, c))
               for c in ("fingerprint_id", "model", "mode")):
            continue
        differs = [c for c in RERUN_SETTINGS if str(getattr(o, c)) != str(getattr(on, c))]
        if found[0] is None or len(differs) < len(found[1]):
            found = (o, differs)
    return found
