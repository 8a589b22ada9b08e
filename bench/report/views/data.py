"""The data page: copies every run's files into the site and lists them with the computed CSVs,
and describes every column of the files from the schema's own spec, so that what a reader sees
is what the loader checks.

A run's files are copied byte for byte and linked as raw data. Where one holds a cell that a
spreadsheet would run as a formula (see ``csvsafe``), a spreadsheet-safe copy goes beside it.
Which files those are is read off the loaded rows (their text columns; a sample's ids are its
row's, the loader checks that), and off the raw file where the loader left lines out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from bench import schema
from bench.report import csvsafe, fmt
from bench.report.analysis.cells import page_slug
from bench.report.escape import Md, cat, md
from bench.report.load import Dataset
from bench.report.pages import Page, table
from bench.report.paths import COMPARISONS, DATA_PAGE, data_file
from bench.report.views.inputs import Inputs
from bench.report.writer import Writer

#: How a column's type reads on the page.
_TYPE_WORDS = {"str": "text", "int": "integer", "float": "number"}
#: The columns of results.csv that hold free text (closed sets and numbers cannot run).
_FREE_TEXT = tuple(c.name for c in schema.RESULT_SPEC if c.type == "str" and not c.choices)

#: Each copied run file (relative to the reports root) → its spreadsheet-safe copy in the site,
#: or None where the raw file is safe as it is.
Copies = dict[Path, "str | None"]


def safe_file(rel: Path) -> str:
    """Where the spreadsheet-safe copy of a run's CSV goes, beside the raw copy."""
    return data_file(rel).removesuffix(".csv") + "-safe.csv"


def suspect_runs(dataset: Dataset, reports_root: Path) -> set[Path]:
    """The runs (their results.csv) whose CSVs may hold a cell that runs as a formula."""
    res = dataset.results
    out: set[Path] = set()
    for col in _FREE_TEXT:
        bad = csvsafe.unsafe_values(res[col].to_numpy(dtype=object))
        if bad:
            out.update(Path(s) for s in res.loc[res[col].isin(bad), "source"].unique())
    for run in dataset.runs:  # lines the loader left out were never looked at
        prefixes = (f"{reports_root / run.results}:", f"{reports_root / run.samples}:")
        if any(line.startswith(prefixes) for line in dataset.skipped):
            out.add(run.results)
    return out


def file_links(p: Page, name: str, rel: Path, copies: Copies) -> Md:
    """A run file's link, labelled raw data, and its spreadsheet-safe copy where it has one."""
    if rel not in copies:
        return Md(md(f"{name} missing"))
    if not name.endswith(".csv"):
        return p.link(name, data_file(rel))
    safe = copies[rel]
    return cat(p.link(name, data_file(rel)), " (raw data)",
               *((" · ", p.link("spreadsheet-safe", safe)) if safe else ()))


def code(text: str) -> Md:
    """A name from the schema as inline code (escaped text instead if it is not a plain name)."""
    return Md(f"`{text}`") if re.fullmatch(r"[A-Za-z0-9_./-]+", text) else md(text)


def column_table(spec: Sequence[schema.Column]) -> Md:
    """One file's columns: name, type, allowed values, whether required, what it holds."""
    rows = [
        [
            code(c.name),
            _TYPE_WORDS.get(c.type, c.type),
            cat(*(part for i, v in enumerate(c.choices) for part in ((", " if i else ""), code(v))))
            if c.choices
            else fmt.MISSING,
            "yes" if c.required else "no",
            c.doc,
        ]
        for c in spec
    ]
    return table(["Column", "Type", "Allowed values", "Required", "What it holds"], rows)


def copy_runs(writer: Writer, data: Inputs, reports_root: Path) -> Copies:
    """Copy every run's files into the site (a safe copy beside a suspect CSV)."""
    copied: Copies = {}
    suspect = suspect_runs(data.dataset, reports_root)
    for run in sorted(data.dataset.runs, key=lambda r: str(r.results)):
        for rel, name in (
            (run.results, schema.RESULTS_FILE),
            (run.samples, schema.SAMPLES_FILE),
            (run.env, schema.ENV_FILE),
        ):
            source = reports_root / rel
            if source.is_file():
                writer.copy(source, data_file(rel))
                copied[rel] = None
                if run.results in suspect and name != schema.ENV_FILE and not \
                        csvsafe.file_is_safe(source):
                    writer.safe_copy(source, safe_file(rel))
                    copied[rel] = safe_file(rel)
    return copied


def rows_text(rows: int, replaced: int) -> str:
    """``161``, or ``161 (+1 replaced)`` where a resume ran a replicate again: the file holds
    both attempts, the pages count the last."""
    return f"{rows:,}" + (f" (+{replaced:,} replaced)" if replaced else "")


def data_page(
    writer: Writer, data: Inputs, copied: Copies, written: Sequence[Path]
) -> None:
    """List every run's files (as ``copy_runs`` copied them) and the computed CSVs in
    ``written``, and describe every column."""
    here = DATA_PAGE
    p = data.page(here)
    rows = []
    counts = (
        data.dataset.results.groupby("source").size().to_dict() if len(data.dataset.results) else {}
    )
    for run in sorted(data.dataset.runs, key=lambda r: str(r.results)):
        links = [
            file_links(p, name, rel, copied)
            for rel, name in (
                (run.results, schema.RESULTS_FILE),
                (run.samples, schema.SAMPLES_FILE),
                (run.env, schema.ENV_FILE),
            )
        ]
        page = page_slug(run.machine, run.fingerprint_id)
        machine = p.machine_link(run.machine, page) if page in data.machines else md(run.machine)
        rows.append(
            [
                machine,
                str(run.run_id),
                str(run.fingerprint_id)[:12],
                rows_text(counts.get(Path(run.results).as_posix(), 0),
                          data.dataset.replaced.get(Path(run.results).as_posix(), 0)),
                *links,
            ]
        )
    writer.page(
        here,
        "data.md.j2",
        p=p,
        table=table(
            ["Machine", "Run", "Fingerprint", "Result rows", "Results", "Samples", "Environment"],
            rows,
        )
        if rows
        else None,
        skipped=len(data.dataset.skipped),
        schema_version=schema.SCHEMA_VERSION,
        results_columns=column_table(schema.RESULT_SPEC),
        samples_columns=column_table(schema.SAMPLE_SPEC),
        computed=[
            p.link(path.name, f"{COMPARISONS}/{path.name}")
            for path in sorted(written)
            if path.parent.as_posix().endswith(COMPARISONS) and path.suffix == ".csv"
        ],
    )
