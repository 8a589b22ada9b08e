"""Which rows answer each question: one selection per question, used by every answer to it.

The advice, the claims, the pages and the home page all ask "which cudnn.benchmark pairs
count?" and "which fingerprints still speak?". Each question has one function here, so that
the claims page, a topic page and the home page can never count different things under the
same words.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import pandas as pd

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
