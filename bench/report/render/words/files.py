"""Every run's files, copied into the site byte for byte and linked as raw data (the Data page
and the machine pages link them). Where one holds a cell that a
spreadsheet would run as a formula (see ``csvsafe``), a spreadsheet-safe copy goes beside it.
Which files those are is read off the loaded rows (their text columns; a sample's ids are its
row's, the loader checks that), and off the raw file where the loader left lines out.
"""

from __future__ import annotations

from pathlib import Path

from bench import schema
from bench.report.input.load import Dataset
from bench.report.render import csvsafe
from bench.report.render.escape import Md, cat, md
from bench.report.render.markdown import Page
from bench.report.render.paths import data_file
from bench.report.render.writer import Writer

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


def copy_runs(writer: Writer, dataset: Dataset, reports_root: Path) -> Copies:
    """Copy every run's files into the site (a safe copy beside a suspect CSV)."""
    copied: Copies = {}
    suspect = suspect_runs(dataset, reports_root)
    for run in sorted(dataset.runs, key=lambda r: str(r.results)):
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


