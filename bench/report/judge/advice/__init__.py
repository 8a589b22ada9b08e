"""A small rule engine: per regime, what to do with each setting, derived only from the data.

A regime is (machine fingerprint, device, model family, mode, precision, memory format, shape
variability, batch size; CPU vs GPU leaves the batch out, since its curves span batches, and
the memory-format switch leaves the format out, since it is the switch), plus a job length
in iterations where a one-off cost matters (cudnn.benchmark's autotuning). Each rule reads the
comparison rows of that regime and yields a ``Recommendation``: structured fields only, no
prose — the templates turn them into sentences and links. Fed other data, the same rules give
other advice; "no clear difference — leave the default" is a normal outcome.

The record and the decision table are in :mod:`~bench.report.judge.advice.record`; how a regime's
pairs are combined into one answer, in :mod:`~bench.report.judge.advice.summaries`; the rules (and
what each rule and caveat code means), in :mod:`~bench.report.judge.advice.rules`. This package's
face is :func:`recommend`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Union

from bench.report import parallel
from bench.report.analysis import Analysis, analyse
from bench.report.input.load import Dataset
from bench.report.judge.advice.codes import Caveat
from bench.report.judge.advice.record import (
    JOB_LENGTHS,
    MEMORY_CAVEAT_SHARE,
    REGIME_KEY,
    SETTINGS,
    Recommendation,
    decision_columns,
    decision_table,
)
from bench.report.judge.advice.rules import (
    benchmark_rules,
    determinism_rules,
    device_rules,
    switch_rules,
)
from bench.report.vocabulary import Action

__all__ = [
    "JOB_LENGTHS",
    "MEMORY_CAVEAT_SHARE",
    "REGIME_KEY",
    "SETTINGS",
    "Action",
    "Recommendation",
    "decision_columns",
    "decision_table",
    "recommend",
]


def recommend(
    data: Union[Dataset, Analysis], *, job_lengths: Sequence[int] = JOB_LENGTHS
) -> list[Recommendation]:
    """All recommendations, sorted by setting then regime (then job length)."""
    analysis = analyse(data) if isinstance(data, Dataset) else data
    families: list[Callable[[], list[Recommendation]]] = [  # independent: shared out
        lambda: benchmark_rules(analysis.benchmark, job_lengths),
        lambda: determinism_rules(analysis.determinism),
        lambda: switch_rules(analysis.comparisons["precision"], "precision"),
        lambda: switch_rules(analysis.comparisons["memory_format"], "memory_format"),
        lambda: device_rules(analysis.crossovers, analysis.cpu_gpu),
    ]
    recs = [r for found in parallel.fork_map(lambda rules: rules(), families) for r in found]
    cells = analysis.cells
    drifting = set(zip(cells.loc[cells["n_drift"] > 0, "page"],
                       cells.loc[cells["n_drift"] > 0, "anchor"]))
    recs = [
        dataclasses.replace(r, caveats=(*r.caveats, Caveat.STEADY_DRIFT))
        if drifting.intersection(r.evidence)
        else r
        for r in recs
    ]
    order = {s: i for i, s in enumerate(SETTINGS)}
    recs.sort(
        key=lambda r: (
            order[r.setting],
            r.machine,
            r.page,
            r.device,
            r.model_family,
            r.mode,
            r.precision,
            r.memory_format,
            r.shapes,
            int(r.batch_size or 0),
            r.variant_value,
            r.job_length or 0,
        )
    )
    return recs
