"""Writes the generated part of the site: pages, fragments, CSVs, copied files and charts.

Charts are not drawn here: :meth:`Writer.chart` leaves an empty file where the chart goes and
records a :class:`Chart` job, and :mod:`bench.report.render.drawing` draws them all
afterwards, while MkDocs reads the pages (matplotlib is the slowest part of a build).

Every CSV it writes is safe to open in a spreadsheet (``csvsafe``); a run's own files are
copied as they are, labelled raw data where they are linked, with a safe copy beside any
that needs one.

Every path goes through :meth:`Writer.path`, which refuses anything outside ``generated/``:
names in those paths come from the data (machine names, run folders), and a slug alone is one
mistake away from ``../``.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import jinja2
import pandas as pd

from bench.report.judge.rows import Table
from bench.report.render import csvsafe
from bench.report.render.escape import Md
from bench.report.render.markdown import fragment_placeholder, rendered_table
from bench.report.render.paths import GENERATED, fragment_file, slug


@dataclass(frozen=True)
class Chart:
    """A chart to draw: ``draw(*args, path, **kwargs)``. Plain data, so it pickles."""

    draw: Callable[..., Path]
    path: Path
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __call__(self) -> Path:
        return self.draw(*self.args, self.path, **self.kwargs)


class Writer:
    """Writes pages under the generated folder, refusing paths that escape it.

    ``written`` lists every file in the order written, ``charts`` the charts still to draw.
    """

    def __init__(self, docs_dir: Path, env: jinja2.Environment) -> None:
        self.docs_dir = docs_dir
        self.env = env
        self.written: list[Path] = []
        self.charts: list[Chart] = []

    def chart(self, draw: Callable[..., Path], rel: str, *args: Any, **kwargs: Any) -> None:
        """A chart ``draw(*args, path, **kwargs)``, drawn later (see the module docstring).

        The empty file stands in for it until then, so the site's file list is complete.
        """
        out = self.path(rel)
        out.touch()
        self.charts.append(Chart(draw, out, args, kwargs))
        self.written.append(out)

    def path(self, rel: str) -> Path:
        if not rel.startswith(f"{GENERATED}/") or ".." in rel.split("/"):
            raise ValueError(f"refusing to write outside {GENERATED}/: {rel!r}")
        out = self.docs_dir / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        return out

    def text(self, rel: str, text: str) -> None:
        out = self.path(rel)
        out.write_text(text, encoding="utf-8")
        self.written.append(out)

    def table(self, page: str, name: str, headers: Sequence[object],
              rows: Iterable[Sequence[object]]) -> Md:
        """A table of ``page`` (docs-relative) written as an HTML fragment, line for line the
        HTML MkDocs makes of ``markdown.table(headers, rows)``, which
        :mod:`bench.report.render.mkdocs_hooks` splices into the page after Markdown; its
        placeholder goes where the table would. Why: the comparison pages' tables of every
        configuration on every machine were 13 of the 15 MB of Markdown a site of 500 runs
        gives MkDocs, and two thirds of its time; the machine pages' tables bypass Markdown the
        same way. ``name``: the table's slug on its page (its section's anchor, and which)."""
        fragment = slug(f"{PurePosixPath(page).stem}--{name}")
        self.text(fragment_file(fragment), rendered_table(headers, rows))
        return fragment_placeholder(fragment)

    def page(self, rel: str, template: str, **context: Any) -> None:
        text = self.env.get_template(template).render(**context)
        out = self.path(rel)
        out.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
        self.written.append(out)

    def copy(self, source: Path, rel: str) -> None:
        out = self.path(rel)
        shutil.copyfile(source, out)
        self.written.append(out)

    def file(self, rel: str, write: Callable[[Path], object]) -> None:
        """A file another library writes (``write(path)``: Parquet, a CSV of Arrow's), recorded
        like the rest."""
        out = self.path(rel)
        write(out)
        self.written.append(out)

    def csv(self, rel: str, frame: pd.DataFrame | Table) -> None:
        """A computed table as CSV, safe to open in a spreadsheet (see ``csvsafe``)."""
        self.text(rel, csvsafe.to_csv(frame.frame() if isinstance(frame, Table) else frame))

    def safe_copy(self, source: Path, rel: str) -> None:
        """A copy of the CSV file ``source`` whose cells cannot run as formulas."""
        out = self.path(rel)
        csvsafe.copy_safe(source, out)
        self.written.append(out)
