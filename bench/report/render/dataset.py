"""The whole pooled dataset to download: every loaded result row as one Parquet file and one
CSV file, every timed sample as a second Parquet file, each fingerprint's rows as a CSV of its
own (what a machine page links), and a Frictionless Data Package (``datapackage.json``) that
describes them.

Why from ``bench.schema``'s column spec: the Table Schema a reader validates against is the
spec the loader checks, so the two cannot drift apart. Why Arrow: a tree can hold 100k rows and
a million samples, and pyarrow types, writes and filters them a column at a time, while the
pages render beside it.

The CSVs are safe to open in a spreadsheet (``csvsafe``: a text cell that would run as a
formula starts with ``'``); the Parquet files hold the values as loaded. An empty cell is
"no value" in both: a null, never ``""`` or 0.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from bench import schema
from bench.report.render import csvsafe
from bench.report.render.escape import slug
from bench.report.render.paths import DATA
from bench.report.render.writer import Writer

NAME = "torch-knobs-results"
RESULTS_CSV = f"{DATA}/{NAME}.csv"
RESULTS_PARQUET = f"{DATA}/{NAME}.parquet"
SAMPLES_PARQUET = f"{DATA}/torch-knobs-samples.parquet"
DATAPACKAGE = f"{DATA}/datapackage.json"
#: One CSV per fingerprint: the rows its section of a machine page shows.
FINGERPRINTS = f"{DATA}/fingerprints"
#: The data's licence; the code's is MIT (``LICENSE`` at the repository's root).
LICENSE = {"name": "CC-BY-4.0", "path": "https://creativecommons.org/licenses/by/4.0/",
           "title": "Creative Commons Attribution 4.0"}
PARQUET_MEDIATYPE = "application/vnd.apache.parquet"

#: Where each row came from, beside the spec's columns: its file, relative to the reports
#: root, so that two run folders of one run id stay apart.
SOURCE = schema.Column("source", required=True,
                       doc="the run file the row was read from, relative to the reports root")
_ARROW = {"str": pa.string(), "int": pa.int64(), "float": pa.float64()}
_TABLE_TYPES = {"str": "string", "int": "integer", "float": "number"}


def boolean(c: schema.Column) -> bool:
    """A closed column whose only values are true and false: a boolean (as the loader reads)."""
    return bool(c.choices) and set(c.choices) == {"true", "false"}


def columns(spec: Sequence[schema.Column]) -> tuple[schema.Column, ...]:
    """A file's columns in the dataset: the spec's, then where each row came from."""
    return (*spec, SOURCE)


def arrow_table(frame: pd.DataFrame, spec: Sequence[schema.Column]) -> pa.Table:
    """The loaded ``frame`` (``bench.report.input.load``'s typing) as an Arrow table typed by
    ``spec``, a column at a time; empty text becomes null."""
    cols = columns(spec)
    fields = [pa.field(c.name, pa.bool_() if boolean(c) else _ARROW[c.type]) for c in cols]
    table = pa.Table.from_pandas(frame[[c.name for c in cols]], schema=pa.schema(fields),
                                 preserve_index=False)
    arrays = [pc.if_else(pc.equal(col, ""), pa.scalar(None, pa.string()), col)
              if col.type == pa.string() else col for col in table.columns]
    return pa.Table.from_arrays(arrays, schema=table.schema)


def field_schema(c: schema.Column) -> dict[str, Any]:
    """One column as a Table Schema field: its type, what it holds, and the loader's rules."""
    out: dict[str, Any] = {"name": c.name, "description": c.doc}
    constraints: dict[str, Any] = {}
    if boolean(c):
        out.update(type="boolean", trueValues=["true"], falseValues=["false"])
    else:
        out["type"] = _TABLE_TYPES[c.type]
        if c.choices:
            constraints["enum"] = list(c.choices)
        if c.type in ("int", "float"):
            constraints["minimum"] = 0  # finite and never negative, as the loader checks
    if c.required:
        constraints["required"] = True
    if constraints:
        out["constraints"] = constraints
    return out


def table_schema(spec: Sequence[schema.Column]) -> dict[str, Any]:
    return {"fields": [field_schema(c) for c in columns(spec)], "missingValues": [""]}


def safe_table(table: pa.Table) -> pa.Table:
    """``table`` with every text cell that would run as a formula prefixed with ``'``; only the
    distinct values of a text column are looked at."""
    arrays = []
    for col in table.columns:
        if col.type == pa.string():
            bad = csvsafe.unsafe_values(pc.unique(col).drop_null().to_numpy(zero_copy_only=False))
            if bad:
                col = pc.if_else(pc.is_in(col, value_set=pa.array(bad, pa.string())),
                                 pc.binary_join_element_wise("'", col, ""), col)
        arrays.append(col)
    return pa.Table.from_arrays(arrays, schema=table.schema)


def csv_bytes(table: pa.Table, *, safe: bool = False) -> bytes:
    """``table`` as spreadsheet-safe CSV (``safe``: it is already): a header, ``\\n`` line
    ends, nulls empty."""
    buf = io.BytesIO()
    pcsv.write_csv(table if safe else safe_table(table), buf,
                   pcsv.WriteOptions(quoting_style="needed"))
    return buf.getvalue()


def _csv_writer(safe: pa.Table) -> Callable[[Path], int]:
    return lambda path: path.write_bytes(csv_bytes(safe, safe=True))


def by_fingerprint(table: pa.Table) -> list[tuple[str, pa.Table]]:
    """``table``'s rows of each fingerprint, in file order within each: one sort and slices,
    not a pass over every row per fingerprint."""
    ordered = table.take(pc.sort_indices(table, [("fingerprint_id", "ascending")]))
    counts = ordered.group_by("fingerprint_id", use_threads=False).aggregate(
        [("fingerprint_id", "count")])
    out, start = [], 0
    for fp, n in zip(counts.column("fingerprint_id").to_pylist(),
                     counts.column("fingerprint_id_count").to_pylist(), strict=True):
        out.append((str(fp), ordered.slice(start, n)))
        start += n
    return out


def fingerprint_csv(fingerprint_id: str) -> str:
    """Where one fingerprint's rows are, as CSV (its section of a machine page links it)."""
    return f"{FINGERPRINTS}/{slug(fingerprint_id)}.csv"


def _resource(writer: Writer, rel: str, name: str, title: str,
              spec: Sequence[schema.Column] | None) -> dict[str, Any]:
    """A written file as a Data Package resource, with its size and hash (a reader can check
    a download is whole): with ``spec``, the CSV a Table Schema describes; without, a Parquet
    file, whose own schema carries the same column types."""
    data = writer.path(rel).read_bytes()
    typed: dict[str, Any] = (
        {"type": "table", "format": "csv", "mediatype": "text/csv", "encoding": "utf-8",
         "schema": table_schema(spec)} if spec is not None else
        {"type": "file", "format": "parquet", "mediatype": PARQUET_MEDIATYPE})
    return {"name": name, "title": title, "path": rel.rsplit("/", 1)[-1], **typed,
            "bytes": len(data), "hash": f"sha256:{hashlib.sha256(data).hexdigest()}"}


def write_dataset(writer: Writer, results: pa.Table, samples: pa.Table) -> list[str]:
    """Write the pooled results (Parquet and CSV), the samples (Parquet), one CSV per
    fingerprint and the datapackage.json; returns the paths, the package last."""
    writer.file(RESULTS_PARQUET, lambda p: pq.write_table(results, p))
    writer.file(SAMPLES_PARQUET, lambda p: pq.write_table(samples, p))
    safe = safe_table(results)
    writer.file(RESULTS_CSV, _csv_writer(safe))
    for fp, rows in by_fingerprint(safe):
        writer.file(fingerprint_csv(fp), _csv_writer(rows))
    package = {
        "name": NAME,
        "title": "torch-knobs: PyTorch settings measured",
        "description": "Every result row the site's pages are computed from, one per "
                       "replicate of each cell (failures included), with its machine, "
                       "fingerprint and run; and every timed sample. Schema version "
                       f"{schema.SCHEMA_VERSION}.",
        "licenses": [LICENSE],
        "resources": [
            _resource(writer, RESULTS_CSV, "results", "Result rows", schema.RESULT_SPEC),
            _resource(writer, RESULTS_PARQUET, "results-parquet",
                      "Result rows, as Parquet (the same rows and columns)", None),
            _resource(writer, SAMPLES_PARQUET, "samples", "Every timed iteration, as Parquet "
                      "(the columns of samples.csv, and source)", None),
        ],
    }
    writer.text(DATAPACKAGE, json.dumps(package, indent=2) + "\n")
    return [RESULTS_CSV, RESULTS_PARQUET, SAMPLES_PARQUET, DATAPACKAGE]


def dataset_files(written: Sequence[Path]) -> list[str]:
    """Of the files written, the dataset's (for the Data page's links), in a fixed order."""
    names = {p.as_posix() for p in written}
    return [rel for rel in (RESULTS_CSV, RESULTS_PARQUET, SAMPLES_PARQUET, DATAPACKAGE)
            if any(n.endswith(rel) for n in names)]
