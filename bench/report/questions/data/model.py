"""The Data page, judged: every run's files, its machine page and how many of its rows count,
what copying the files into the site needs to know of them, and the pooled rows and samples
to download (Arrow tables typed by the schema: see :mod:`bench.report.render.dataset`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa

from bench import schema
from bench.report.analysis.cells import page_slugs
from bench.report.input.load import RunFiles
from bench.report.judge.facts import Facts
from bench.report.render import csvsafe
from bench.report.render.dataset import arrow_table

#: The columns of results.csv that hold free text (closed sets and numbers cannot run).
FREE_TEXT = tuple(c.name for c in schema.RESULT_SPEC if c.type == "str" and not c.choices)


@dataclass(frozen=True)
class DataRun:
    run: RunFiles
    page: str | None  # its machine page, where there is one
    n_rows: int
    n_replaced: int  # rows a resume replaced (in the file, not counted)


@dataclass(frozen=True)
class DataPage:
    runs: tuple[DataRun, ...]  # by their results.csv's path (the order they are copied in)
    skipped: int  # rows ``--skip-bad-rows`` left out
    #: the lines the loader left out, ``path:line: problem`` (their files were never read
    #: through, so a copy of them may hold a formula)
    skipped_lines: tuple[str, ...] = ()
    #: the runs (their results.csv) with a free-text value a spreadsheet would run as a formula
    formulas: frozenset[Path] = frozenset()
    #: every loaded result row and timed sample, pooled (what the dataset files hold)
    results: pa.Table = field(default_factory=pa.table, repr=False)
    samples: pa.Table = field(default_factory=pa.table, repr=False)


def formula_runs(results: pd.DataFrame) -> frozenset[Path]:
    """The runs whose loaded rows hold a free-text value that would run as a formula
    (``render.csvsafe``); a sample's ids are its row's, so its samples.csv holds none else."""
    out: set[Path] = set()
    for col in FREE_TEXT:
        bad = csvsafe.unsafe_values(results[col].to_numpy(dtype=object))
        if bad:
            out.update(Path(s) for s in results.loc[results[col].isin(bad), "source"].unique())
    return frozenset(out)


def data_page(facts: Facts) -> DataPage:
    ds = facts.analysis.source
    counts = ds.results.groupby("source").size().to_dict() if len(ds.results) else {}
    runs = []
    pages = page_slugs(ds.results)
    for run in sorted(ds.runs, key=lambda r: str(r.results)):
        page = pages.get(run.fingerprint_id)
        key = Path(run.results).as_posix()
        runs.append(DataRun(run, page if page in facts.machines else None,
                            int(counts.get(key, 0)), int(ds.replaced.get(key, 0))))
    return DataPage(tuple(runs), len(ds.skipped), tuple(ds.skipped),
                    formula_runs(ds.results), arrow_table(ds.results, schema.RESULT_SPEC),
                    arrow_table(ds.samples, schema.SAMPLE_SPEC))
