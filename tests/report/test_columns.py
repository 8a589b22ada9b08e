"""Every analysis table has the columns its module declares, in order, with data and without.

The pages, the CSVs on the Data page and the advice read these tables by column name; the
constants are the contract, so a column added, dropped or moved must change them too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.report.analysis import Analysis, analyse
from bench.report.analysis.cells import CELL_COLUMNS
from bench.report.analysis.compiled import COMPILE_COLUMNS
from bench.report.analysis.feeding import DEMAND_COLUMNS, PIPELINE_COLUMNS
from bench.report.analysis.machines import BEST_COLUMNS, CEILING_COLUMNS, MACHINE_COLUMNS
from bench.report.analysis.pairs import AXES, COMPARE_COLUMNS
from bench.report.analysis.sittings import CELL_COLUMNS as SITTING_CELL_COLUMNS
from bench.report.analysis.sittings import PACE_COLUMNS
from bench.report.analysis.studies import (
    BENCHMARK_COLUMNS,
    CPU_GPU_COLUMNS,
    CROSSOVER_COLUMNS,
    DETERMINISM_COLUMNS,
    REPRO_COLUMNS,
    SHAPES_COLUMNS,
)
from bench.report.input.load import load_reports
from bench.report.judge import advice

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "reports"

TABLES = {
    "cells": CELL_COLUMNS,
    "benchmark": BENCHMARK_COLUMNS,
    "shapes": SHAPES_COLUMNS,
    "determinism": DETERMINISM_COLUMNS,
    "repro": REPRO_COLUMNS,
    "cpu_gpu": CPU_GPU_COLUMNS,
    "crossovers": CROSSOVER_COLUMNS,
    "ceilings": CEILING_COLUMNS,
    "best": BEST_COLUMNS,
    "machines": MACHINE_COLUMNS,
    "compiled": COMPILE_COLUMNS,
    "pipelines": PIPELINE_COLUMNS,
    "consumption": DEMAND_COLUMNS,
    "sittings": PACE_COLUMNS,
    "sitting_cells": SITTING_CELL_COLUMNS,
}
#: Tables the fixtures leave empty: each fixture run is one sitting (the tests of
#: ``bench.sittings`` fill them from runs of several).
ONE_SITTING = {"sittings", "sitting_cells"}


@pytest.fixture(scope="module", params=["every fixture", "one CPU laptop", "no runs"])
def tables(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Analysis:
    """The fixtures (every table filled), a CPU-only machine (no GPU tables), and nothing."""
    root = {
        "every fixture": FIXTURES,
        "one CPU laptop": FIXTURES / "fixture-cpu-laptop",
        "no runs": tmp_path_factory.mktemp("empty"),
    }[request.param]
    return analyse(load_reports(root))


@pytest.mark.parametrize("name", sorted(TABLES))
def test_each_table_has_its_declared_columns(tables: Analysis, name: str) -> None:
    assert tuple(getattr(tables, name).columns) == tuple(TABLES[name])


@pytest.mark.parametrize("axis", sorted(AXES))
def test_each_comparison_has_its_declared_columns(tables: Analysis, axis: str) -> None:
    assert tuple(tables.comparisons[axis].columns) == COMPARE_COLUMNS[axis]


def test_the_decision_table_has_its_declared_columns(tables: Analysis) -> None:
    decisions = advice.decision_table(advice.recommend(tables))
    assert tuple(decisions.columns) == advice.decision_columns(sorted(advice.JOB_LENGTHS))
    longer = advice.recommend(tables, job_lengths=(50, 5_000))
    assert tuple(advice.decision_table(longer, job_lengths=(50, 5_000)).columns) == (
        advice.decision_columns((50, 5_000))
    )


def test_the_fixtures_fill_every_table() -> None:
    """So that the column checks above run on real rows, not only on empty frames."""
    full = analyse(load_reports(FIXTURES))
    assert all(len(getattr(full, name)) for name in set(TABLES) - ONE_SITTING)
    assert all(len(frame) for frame in full.comparisons.values())
    assert len(advice.decision_table(advice.recommend(full)))



def test_every_table_of_the_analysis_declares_its_columns() -> None:
    """A table added to Analysis without a column constant here fails."""
    from dataclasses import fields

    tables = {f.name for f in fields(Analysis)} - {"comparisons", "source"}  # per axis; the rows
    assert tables == set(TABLES)
