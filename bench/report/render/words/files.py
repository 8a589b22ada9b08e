"""Links to every run's files as the site holds them: the raw copy, and a spreadsheet-safe
copy beside a CSV that holds a cell a spreadsheet would run as a formula (see ``csvsafe``).
The Data page copies them (``questions.data.view.copy_runs``); it and the machine pages link
them.
"""

from __future__ import annotations

from pathlib import Path

from bench.report.render.escape import Md, cat, md
from bench.report.render.markdown import Page
from bench.report.render.paths import data_file

#: Each copied run file (relative to the reports root) → its spreadsheet-safe copy in the site,
#: or None where the raw file is safe as it is.
Copies = dict[Path, "str | None"]


def safe_file(rel: Path) -> str:
    """Where the spreadsheet-safe copy of a run's CSV goes, beside the raw copy."""
    return data_file(rel).removesuffix(".csv") + "-safe.csv"


def file_links(p: Page, name: str, rel: Path, copies: Copies) -> Md:
    """A run file's link, labelled raw data, and its spreadsheet-safe copy where it has one."""
    if rel not in copies:
        return Md(md(f"{name} missing"))
    if not name.endswith(".csv"):
        return p.link(name, data_file(rel))
    safe = copies[rel]
    return cat(p.link(name, data_file(rel)), " (raw data)",
               *((" · ", p.link("spreadsheet-safe", safe)) if safe else ()))
