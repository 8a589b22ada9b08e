"""The data page: copies every run's files into the site and lists them with the computed CSVs,
and describes every column of the files from the schema's own spec, so that what a reader sees
is what the loader checks."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from bench import schema
from bench.report import fmt
from bench.report.analysis.cells import page_slug
from bench.report.escape import Md, cat, md
from bench.report.pages import table
from bench.report.paths import COMPARISONS, DATA_PAGE, data_file
from bench.report.views.inputs import Inputs
from bench.report.writer import Writer

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


def data_page(writer: Writer, data: Inputs, reports_root: Path) -> set[Path]:
    """Copy every run's files into the site and list them; returns the copied paths."""
    here = DATA_PAGE
    p = data.page(here)
    copied: set[Path] = set()
    rows = []
    counts = (
        data.dataset.results.groupby("source").size().to_dict() if len(data.dataset.results) else {}
    )
    for run in sorted(data.dataset.runs, key=lambda r: str(r.results)):
        links = []
        for rel, name in (
            (run.results, schema.RESULTS_FILE),
            (run.samples, schema.SAMPLES_FILE),
            (run.env, schema.ENV_FILE),
        ):
            source = reports_root / rel
            if source.is_file():
                writer.copy(source, data_file(rel))
                copied.add(rel)
                links.append(p.link(name, data_file(rel)))
            else:
                links.append(Md(md(f"{name} missing")))
        page = page_slug(run.machine, run.fingerprint_id)
        machine = p.machine_link(run.machine, page) if page in data.machines else md(run.machine)
        rows.append(
            [
                machine,
                str(run.run_id),
                str(run.fingerprint_id)[:12],
                str(counts.get(Path(run.results).as_posix(), 0)),
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
            for path in sorted(writer.written)
            if path.parent.as_posix().endswith(COMPARISONS) and path.suffix == ".csv"
        ],
    )
    return copied
