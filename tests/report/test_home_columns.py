"""The home grid on a tree of many machines: past ``GRID_COLUMNS`` fingerprints, one column per
hardware model (its fingerprint that measured the most cells) and the reader's own, the rest
counted and pointed to; up to it, every fingerprint, as before."""

from __future__ import annotations

import pandas as pd

from bench.report.judge.machines import Machine
from bench.report.questions.home.model import GRID_COLUMNS, Grid, grid_columns
from bench.report.questions.home.view import grid_more
from bench.report.render.markdown import Page


def _machine(n: int, model: str, *, gpu: bool = True, yours: bool = False) -> Machine:
    page = f"box-{n:03d}-{n:08d}"
    return Machine(page=page, machine=f"box-{n:03d}", fingerprint_id=f"{n:012d}", title=page,
                   hardware=model, gpu=gpu, yours=yours, model=model)


def _cells(counts: dict[Machine, int]) -> pd.DataFrame:
    return pd.DataFrame({"page": [m.page for m, k in counts.items() for _ in range(k)]})


def test_up_to_the_limit_every_fingerprint_is_a_column() -> None:
    machines = [_machine(n, "A") for n in range(GRID_COLUMNS)]
    assert grid_columns(machines, _cells({machines[0]: 3})) == tuple(machines)


def test_past_it_one_column_per_model_the_most_measured_and_yours() -> None:
    a = [_machine(n, "GPU A") for n in range(10)]
    b = [_machine(10 + n, "GPU B") for n in range(10)]
    cpu = [_machine(20 + n, "CPU C", gpu=False) for n in range(10)]
    mine = _machine(30, "GPU A", yours=True)
    counts = {m: 5 for m in [*a, *b, *cpu]} | {a[7]: 9, b[2]: 8, cpu[4]: 6}
    columns = grid_columns([*cpu, *b, mine, *a], _cells(counts))
    assert columns == (mine, a[7], b[2], cpu[4])  # yours, the GPUs, then the CPU


def test_never_more_than_the_limit_even_with_more_models() -> None:
    machines = [_machine(n, f"model {n}") for n in range(GRID_COLUMNS + 3)]
    assert len(grid_columns(machines, _cells({}))) == GRID_COLUMNS


def test_the_grid_says_how_many_it_leaves_out_and_where_they_are() -> None:
    shown = (_machine(0, "GPU A"), _machine(1, "GPU B"))
    text = str(grid_more(Page("index.md"), Grid(shown, (), left_out=98)))
    assert text.startswith("Of 100 machine fingerprints, the grid and the gains below show one "
                           "per hardware model")
    assert "configurations; the other 98 fingerprints are on [Machines](generated/machines/"\
        "index.md)" in text
    mine = (_machine(0, "GPU A", yours=True), shown[1])
    text = str(grid_more(Page("index.md"), Grid(mine, (), left_out=98)))
    assert "the most configurations, and your own; the other 98 fingerprints" in text
    assert grid_more(Page("index.md"), Grid(shown, ())) is None
