"""Writes the generated part of the site: pages, fragments, CSVs, copied files and charts.

Every CSV it writes is safe to open in a spreadsheet (``csvsafe``); a run's own files are
copied as they are, labelled raw data where they are linked, with a safe copy beside any
that needs one.

Every path goes through :meth:`Writer.path`, which refuses anything outside ``generated/``:
names in those paths come from the data (machine names, run folders), and a slug alone is one
mistake away from ``../``.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd

from bench.report import csvsafe
from bench.report.paths import GENERATED


class Writer:
    """Writes pages and charts under the generated folder, refusing paths that escape it.

    Charts are the slowest part of a build (matplotlib), so with a ``pool`` they are drawn in
    worker processes while pages render here; :meth:`finish` waits for them and re-raises the
    first failure.
    """

    def __init__(
        self, docs_dir: Path, env: jinja2.Environment, pool: Executor | None = None
    ) -> None:
        self.docs_dir = docs_dir
        self.env = env
        self.pool = pool
        self.pending: list[Future[Path]] = []
        self.written: list[Path] = []

    def chart(self, draw: Callable[..., Path], rel: str, *args: Any, **kwargs: Any) -> None:
        """Draw a chart: ``draw(*args, path, **kwargs)``, now or in the pool."""
        out = self.path(rel)
        if self.pool is None:
            draw(*args, out, **kwargs)
        else:
            self.pending.append(self.pool.submit(draw, *args, out, **kwargs))
        self.written.append(out)

    def finish(self) -> None:
        for future in self.pending:
            future.result()
        self.pending.clear()

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

    def page(self, rel: str, template: str, **context: Any) -> None:
        text = self.env.get_template(template).render(**context)
        out = self.path(rel)
        out.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
        self.written.append(out)

    def copy(self, source: Path, rel: str) -> None:
        out = self.path(rel)
        shutil.copyfile(source, out)
        self.written.append(out)

    def csv(self, rel: str, frame: pd.DataFrame) -> None:
        """A computed table as CSV, safe to open in a spreadsheet (see ``csvsafe``)."""
        self.text(rel, csvsafe.to_csv(frame))

    def safe_copy(self, source: Path, rel: str) -> None:
        """A copy of the CSV file ``source`` whose cells cannot run as formulas."""
        out = self.path(rel)
        csvsafe.copy_safe(source, out)
        self.written.append(out)
