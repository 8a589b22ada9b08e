"""The data to download: the pooled dataset validates as a Frictionless Data Package, its
Parquet and CSV hold the same rows, it is licensed CC-BY-4.0 apart from the code, and every
topic page and machine page links the CSV of the figures it shows."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import ROOT, Built

from bench import schema
from bench.report.input.load import load_reports
from bench.report.render import dataset

#: The generated pages that show figures, each with its download line.
PAGES = ("claims.md", "cudnn-benchmark.md", "dynamic-shapes.md", "determinism.md",
         "precision.md", "cpu-vs-gpu.md", "torch-compile.md", "feeding.md", "compare.md",
         "snippets/home.md")
_DOWNLOAD = re.compile(r"^Download: (.+)$", re.M)
_LINK = re.compile(r"\[([^\]]+)\]\(([^)#]+)\)")


def _frictionless() -> Any:
    try:
        import frictionless
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("frictionless is not installed (the test dependency group has it)")
        pytest.skip("frictionless is not installed")
    return frictionless


def _data(site: Built) -> Path:
    return site.generated / "data"


def test_the_datapackage_validates(fixture_site: Built) -> None:
    frictionless = _frictionless()
    report = frictionless.validate(str(_data(fixture_site) / "datapackage.json"))
    assert report.valid, report.flatten(["rowNumber", "fieldName", "type", "note"])[:10]
    package = json.loads((_data(fixture_site) / "datapackage.json").read_text())
    assert [r["name"] for r in package["resources"]] == ["results", "results-parquet",
                                                           "samples"]
    assert {r["path"] for r in package["resources"]} == {
        Path(p).name for p in (dataset.RESULTS_CSV, dataset.RESULTS_PARQUET,
                               dataset.SAMPLES_PARQUET)}


def test_a_broken_download_does_not_validate(fixture_site: Built, tmp_path: Path) -> None:
    """The validation above can fail: a value outside its column's allowed set, and a file
    that is not the one the package hashed."""
    frictionless = _frictionless()
    for name in ("datapackage.json", "torch-knobs-results.parquet",
                 "torch-knobs-samples.parquet"):
        (tmp_path / name).write_bytes((_data(fixture_site) / name).read_bytes())
    text = (_data(fixture_site) / "torch-knobs-results.csv").read_text()
    (tmp_path / "torch-knobs-results.csv").write_text(text.replace('"train"', '"fly"', 1))
    report = frictionless.validate(str(tmp_path / "datapackage.json"))
    assert not report.valid
    types = {e.type for task in report.tasks for e in task.errors}
    assert "constraint-error" in types and "hash-count" in types, types


def test_the_field_types_come_from_the_schema(fixture_site: Built) -> None:
    package = json.loads((_data(fixture_site) / "datapackage.json").read_text())
    fields = {f["name"]: f for f in package["resources"][0]["schema"]["fields"]}
    assert list(fields) == [*schema.RESULT_COLUMNS, "source"]
    for c in schema.RESULT_SPEC:
        want = "boolean" if dataset.boolean(c) else {"str": "string", "int": "integer",
                                                     "float": "number"}[c.type]
        assert fields[c.name]["type"] == want, c.name
        assert fields[c.name].get("constraints", {}).get("required", False) == c.required
        if c.choices and want == "string":
            assert fields[c.name]["constraints"]["enum"] == list(c.choices)


def _csv_frame(path: Path, package: dict[str, Any]) -> pd.DataFrame:
    """The CSV read by its own Table Schema: integers nullable, booleans from true/false."""
    fields = package["resources"][0]["schema"]["fields"]
    dtypes = {f["name"]: {"string": "string", "integer": "Int64", "number": "float64",
                          "boolean": "string"}[f["type"]] for f in fields}
    df = pd.read_csv(path, dtype=dtypes, keep_default_na=False, na_values=[""])
    for f in fields:
        if f["type"] == "boolean":
            df[f["name"]] = df[f["name"]].map({"true": True, "false": False}).astype("boolean")
    return df


def test_the_parquet_holds_the_rows_of_the_csv(fixture_site: Built) -> None:
    data = _data(fixture_site)
    package = json.loads((data / "datapackage.json").read_text())
    parquet = pq.read_table(data / "torch-knobs-results.parquet").to_pandas(
        types_mapper={pa.int64(): pd.Int64Dtype(), pa.string(): pd.StringDtype(),
                      pa.bool_(): pd.BooleanDtype()}.get)
    csv = _csv_frame(data / "torch-knobs-results.csv", package)
    assert len(parquet) > 100 and list(parquet.columns) == list(csv.columns)
    pd.testing.assert_frame_equal(parquet, csv, check_dtype=False)
    # every loaded row (a resume's replaced rows left out, as on the pages)
    assert len(parquet) == len(load_reports(fixture_site.reports).results)
    assert set(parquet["fingerprint_id"]) and parquet["run_id"].notna().all()
    samples = pq.read_table(data / "torch-knobs-samples.parquet")
    assert samples.column_names == [*schema.SAMPLE_COLUMNS, "source"] and samples.num_rows


def test_the_data_is_cc_by_and_the_code_mit(fixture_site: Built) -> None:
    package = json.loads((_data(fixture_site) / "datapackage.json").read_text())
    assert [lic["name"] for lic in package["licenses"]] == ["CC-BY-4.0"]
    assert package["licenses"][0]["path"] == "https://creativecommons.org/licenses/by/4.0/"
    assert "CC BY 4.0" in (ROOT / "reports" / "LICENSE").read_text()
    page = (fixture_site.generated / "data.md").read_text()
    assert "CC-BY-4.0" in page and "MIT" in page and "guide/reading.md#citing" in page
    for name in ("torch-knobs-results.csv", "torch-knobs-results.parquet",
                 "torch-knobs-samples.parquet", "datapackage.json"):
        assert f"[{name}](data/{name})" in page, name


def _downloads(page: Path) -> list[Path]:
    """The files a page's download lines link, resolved against the page."""
    text = page.read_text(encoding="utf-8")
    return [(page.parent / target).resolve() for line in _DOWNLOAD.findall(text)
            for _, target in _LINK.findall(line)]


def test_every_page_links_the_csv_of_its_figures(fixture_site: Built) -> None:
    data = _data(fixture_site).resolve()
    machines = sorted((fixture_site.generated / "machines").glob("*.md"))
    machines = [m for m in machines if m.name != "index.md"]
    assert machines
    pages = [fixture_site.generated / p for p in PAGES]
    for page in [*pages, *machines]:
        found = _downloads(page)
        assert found, f"{page.name}: no download line"
        for target in found:
            if page.name == "home.md":  # included into index.md: links from the site's root
                target = (fixture_site.docs / Path(target).relative_to(page.parent.resolve()))
            assert target.suffix == ".csv" and target.is_file(), (page.name, target)
            assert data in target.resolve().parents, (page.name, target)
    fingerprints = {p.stem for p in (data / "fingerprints").glob("*.csv")}
    assert len(fingerprints) == len(pd.unique(pq.read_table(
        data / "torch-knobs-results.parquet").column("fingerprint_id").to_numpy()))


def test_a_formula_in_the_rows_is_neutralised_in_the_csv_only() -> None:
    table = pa.table({"machine": ["=1+1", "box", None], "n": [1.5, None, 2.0]})
    text = dataset.csv_bytes(table).decode()
    assert "\"'=1+1\"" in text and "\n\"box\",\n" in text and "\n,2\n" in text
