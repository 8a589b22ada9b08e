"""Every CSV the site offers opens in a spreadsheet as data: a cell that would run as a formula
(``=``, ``+``, ``-``, ``@``, a tab or a carriage return first, and not a number) starts with
``'``. The runs' own files go out as they are, labelled raw data, with a safe copy beside any
that needs one; numbers are never touched."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from conftest import FIXTURE_REPORTS, project_copy

from bench.report import build
from bench.report.render import csvsafe

MACHINE = '=HYPERLINK("http://example.invalid","box")'


@pytest.mark.parametrize(("text", "safe"), [
    ("=1+1", "'=1+1"), ("+cmd", "'+cmd"), ("-2+3", "'-2+3"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\t=1", "'\t=1"), ("\r=1", "'\r=1"), ("-", "'-"), ("-inf", "'-inf"), ("+nan", "'+nan"),
    ("-1_000", "'-1_000"), ("- 1", "'- 1"), ("-1\n", "'-1\n"), ("\t1", "'\t1"),
    ("-1.5", "-1.5"), ("-.5", "-.5"), ("+2.", "+2."), ("+3", "+3"), ("-1e-9", "-1e-9"),
    ("resnet50", "resnet50"), ("", ""),
])
def test_a_cell_is_neutralised_only_where_it_would_run(text: str, safe: str) -> None:
    assert csvsafe.cell(text) == safe


def test_a_frame_keeps_its_numbers_and_its_repeated_names() -> None:
    df = pd.DataFrame([["=1+1", -1.5, "-2"], ["ok", 2.0, "x"]], columns=["a", "n", "a"])
    out = csvsafe.frame(df)
    assert out.iloc[:, 0].tolist() == ["'=1+1", "ok"] and out.iloc[:, 2].tolist() == ["-2", "x"]
    assert out["n"].tolist() == [-1.5, 2.0] and list(out.columns) == ["a", "n", "a"]
    repeated = pd.DataFrame({"a": ["=1", "ok", "@x"]}, index=[0, 0, 1])  # a groupby's index
    assert csvsafe.frame(repeated)["a"].tolist() == ["'=1", "ok", "'@x"]


def _formula_tree(root: Path) -> Path:
    """The fixture GPU run with formulas for its machine, its cell names and its reasons."""
    run = next((FIXTURE_REPORTS / "fixture-gpu-box").iterdir())
    dest = root / "box" / run.name
    shutil.copytree(run, dest)
    env = json.loads((dest / "env.json").read_text())
    (dest / "env.json").write_text(json.dumps({**env, "machine": MACHINE}))
    with open(dest / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        row.update(machine=MACHINE, cell_name=f"+{row['cell_name']}")
        if row["status"] != "ok":
            row["reason"] = "@SUM(1+1)"
    with open(dest / "results.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return dest


def _cells(path: Path) -> list[str]:
    with open(path, newline="", encoding="utf-8") as f:
        return [v for row in csv.reader(f) for v in row]


def test_no_csv_the_site_writes_runs_a_formula(tmp_path: Path) -> None:
    run = _formula_tree(tmp_path / "reports")
    root = project_copy(tmp_path / "project")
    build.build(tmp_path / "reports", root / "site", docs_dir=root / "site_src",
                config=root / "mkdocs.yml", run_mkdocs=False, quiet=True)
    data = root / "site_src" / "generated" / "data"
    computed = sorted((data / "comparisons").glob("*.csv"))
    assert computed
    for path in computed:
        cells = _cells(path)
        assert not [c for c in cells if csvsafe.unsafe(c)], path.name
        assert not [c for c in cells if c.startswith("'") and csvsafe.is_number(c[1:])], \
            f"{path.name}: a number was escaped"
    decisions = _cells(data / "comparisons" / "decisions.csv")
    assert f"'{MACHINE}" in decisions, "escaped, not dropped"
    copies = next(p for p in data.iterdir() if p.is_dir() and p.name not in (
        "comparisons", "fingerprints"))
    raw = next(copies.rglob("results.csv"))
    assert raw.read_bytes() == (run / "results.csv").read_bytes(), "the raw copy is raw"
    safe = raw.with_name("results-safe.csv")
    assert not [c for c in _cells(safe) if csvsafe.unsafe(c)]
    assert len(_cells(safe)) == len(_cells(raw)) and f"'{MACHINE}" in _cells(safe)
    assert not raw.with_name("samples-safe.csv").exists(), "samples hold ids and numbers only"
    page = (root / "site_src" / "generated" / "data.md").read_text()
    assert "results.csv](data/" in page and "(raw data) · [spreadsheet-safe](data/" in page
