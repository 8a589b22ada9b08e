"""The Data page, judged: every run's files, its machine page and how many of its rows count."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bench.report.analysis.cells import page_slug
from bench.report.input.load import Dataset, RunFiles
from bench.report.judge.facts import Facts


@dataclass(frozen=True)
class DataRun:
    run: RunFiles
    page: str | None  # its machine page, where there is one
    n_rows: int
    n_replaced: int  # rows a resume replaced (in the file, not counted)


@dataclass(frozen=True)
class DataPage:
    source: Dataset = field(repr=False)  # the loaded rows (their files are copied)
    runs: tuple[DataRun, ...]
    skipped: int  # rows ``--skip-bad-rows`` left out


def data_page(facts: Facts) -> DataPage:
    ds = facts.analysis.source
    counts = ds.results.groupby("source").size().to_dict() if len(ds.results) else {}
    runs = []
    for run in sorted(ds.runs, key=lambda r: str(r.results)):
        page = page_slug(run.machine, run.fingerprint_id)
        key = Path(run.results).as_posix()
        runs.append(DataRun(run, page if page in facts.machines else None,
                            int(counts.get(key, 0)), int(ds.replaced.get(key, 0))))
    return DataPage(ds, tuple(runs), len(ds.skipped))
