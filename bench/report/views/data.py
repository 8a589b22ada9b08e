"""The data page: copies every run's files into the site and lists them with the computed CSVs."""

from __future__ import annotations

from pathlib import Path

from bench import schema
from bench.report.analysis.cells import page_slug
from bench.report.escape import Md, md
from bench.report.pages import table
from bench.report.paths import COMPARISONS, DATA_PAGE, data_file
from bench.report.views.inputs import Inputs
from bench.report.writer import Writer


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
        computed=[
            p.link(path.name, f"{COMPARISONS}/{path.name}")
            for path in sorted(writer.written)
            if path.parent.as_posix().endswith(COMPARISONS) and path.suffix == ".csv"
        ],
    )
    return copied
