"""The data page: every run's files (copied into the site by :func:`copy_runs`) with the
computed CSVs, and every column of the files described from the schema's own spec, so that what
a reader sees is what the loader checks."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from bench import schema
from bench.report import fmt
from bench.report.questions.answers import Shared
from bench.report.questions.data.model import DataPage
from bench.report.render import csvsafe, dataset
from bench.report.render.buildinfo import BuildInfo
from bench.report.render.escape import Md, cat, md
from bench.report.render.markdown import table
from bench.report.render.paths import COMPARISONS, DATA_PAGE, data_file
from bench.report.render.words.context import banner, page, provenance
from bench.report.render.words.files import Copies, file_links, safe_file
from bench.report.render.writer import Writer

#: How a column's type reads on the page.
_TYPE_WORDS = {"str": "text", "int": "integer", "float": "number"}


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


def rows_text(rows: int, replaced: int) -> str:
    """``161``, or ``161 (+1 replaced)`` where a resume ran a replicate again: the file holds
    both attempts, the pages count the last."""
    return f"{rows:,}" + (f" (+{replaced:,} replaced)" if replaced else "")


def copy_runs(writer: Writer, model: DataPage, reports_root: Path) -> Copies:
    """Copy every run's files into the site, a spreadsheet-safe copy beside a CSV that may
    hold a formula: one of the runs the model names, or one whose lines the loader left out
    (those lines were never looked at)."""
    copied: Copies = {}
    for run in (d.run for d in model.runs):
        prefixes = (f"{reports_root / run.results}:", f"{reports_root / run.samples}:")
        suspect = run.results in model.formulas or any(
            line.startswith(prefixes) for line in model.skipped_lines)
        for rel, name in (
            (run.results, schema.RESULTS_FILE),
            (run.samples, schema.SAMPLES_FILE),
            (run.env, schema.ENV_FILE),
        ):
            source = reports_root / rel
            if source.is_file():
                writer.copy(source, data_file(rel))
                copied[rel] = None
                if suspect and name != schema.ENV_FILE and not csvsafe.file_is_safe(source):
                    writer.safe_copy(source, safe_file(rel))
                    copied[rel] = safe_file(rel)
    return copied


def write_downloads(writer: Writer, model: DataPage) -> list[str]:
    """The whole pooled dataset and its datapackage.json (:mod:`bench.report.render.dataset`)."""
    return dataset.write_dataset(writer, model.results, model.samples)


def data_page(writer: Writer, model: DataPage, shared: Shared, copied: Copies,
              written: Sequence[Path], build: BuildInfo) -> None:
    """List every run's files (as :func:`copy_runs` copied them) and the computed CSVs in
    ``written``, and describe every column."""
    p = page(shared, DATA_PAGE)
    rows = []
    for d in model.runs:
        run = d.run
        links = [file_links(p, name, rel, copied) for rel, name in (
            (run.results, schema.RESULTS_FILE), (run.samples, schema.SAMPLES_FILE),
            (run.env, schema.ENV_FILE))]
        machine = p.machine_link(run.machine, d.page) if d.page is not None else md(run.machine)
        rows.append([machine, str(run.run_id), str(run.fingerprint_id)[:12],
                     rows_text(d.n_rows, d.n_replaced), *links])
    writer.page(
        DATA_PAGE,
        "data.md.j2",
        p=p,
        table=table(["Machine", "Run", "Fingerprint", "Result rows", "Results", "Samples",
                     "Environment"], rows) if rows else None,
        skipped=model.skipped,
        schema_version=schema.SCHEMA_VERSION,
        results_columns=column_table(schema.RESULT_SPEC),
        samples_columns=column_table(schema.SAMPLE_SPEC),
        banners=banner(list(shared.machines.values())),
        provenance=provenance(build, list(shared.machines.values())),
        downloads=dataset.dataset_files(written),
        licence=Md(f"[{dataset.LICENSE['title']}]({dataset.LICENSE['path']})"),
        cite=f"torch-knobs results, built from commit {build.commit or 'unknown'} on "
             f"{build.day}, {dataset.LICENSE['name']}",
        computed=[
            p.link(path.name, f"{COMPARISONS}/{path.name}")
            for path in sorted(written)
            if path.parent.as_posix().endswith(COMPARISONS) and path.suffix == ".csv"
        ],
    )
