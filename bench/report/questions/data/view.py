"""The data page: every run's files (as :mod:`bench.report.render.words.files` copied them) with the
computed CSVs, and every column of the files described from the schema's own spec, so that what
a reader sees is what the loader checks."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from bench import schema
from bench.report import fmt
from bench.report.questions.answers import Answers
from bench.report.render.buildinfo import BuildInfo
from bench.report.render.escape import Md, cat, md
from bench.report.render.markdown import table
from bench.report.render.paths import COMPARISONS, DATA_PAGE
from bench.report.render.words.context import banner, page, provenance
from bench.report.render.words.files import Copies, file_links
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


def data_page(
    writer: Writer, answers: Answers, copied: Copies, written: Sequence[Path], build: BuildInfo
) -> None:
    """List every run's files (as ``copy_runs`` copied them) and the computed CSVs in
    ``written``, and describe every column."""
    model = answers.data
    p = page(answers, DATA_PAGE)
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
        banners=banner(list(answers.machines.values())),
        provenance=provenance(build, list(answers.machines.values())),
        computed=[
            p.link(path.name, f"{COMPARISONS}/{path.name}")
            for path in sorted(written)
            if path.parent.as_posix().endswith(COMPARISONS) and path.suffix == ".csv"
        ],
    )
