"""The machine pages' typed rows: built a column at a time, they hold the values
``judge.rows.plain`` gives one at a time; env.json is listed without its plan; a hand-built cell
renders in the table of every cell."""

from __future__ import annotations

import numpy as np
import pandas as pd

from bench.report.judge.rows import plain, typed_rows
from bench.report.questions.machines.fragments import cells_fragment, failures_fragment
from bench.report.questions.machines.model import (
    FailedReplicate,
    MachineCell,
    sittings_of,
)
from bench.report.questions.machines.rows import environment


def test_rows_built_by_column_hold_the_plain_values() -> None:
    frame = pd.DataFrame({
        "kind": pd.Series(["model", "ceiling"], dtype="str"),
        "anchor": ["cell-a", "cell-b"], "cell_name": ["a", "b"],
        "status_summary": pd.Series(["3 ok", None], dtype="str"),
        "n_ok": np.array([3, 0], dtype=np.int64), "too_few_ok": [False, True],
        "n_drift": pd.Series([1, None], dtype="Int64"),
        "steady_median_s": [0.5, np.nan], "energy_method": ["nvml-energy", np.nan],
    })
    rows = typed_rows(MachineCell, frame)
    one_by_one = [{c: plain(v) for c, v in row.items()} for row in frame.to_dict("records")]
    assert rows == tuple(MachineCell(**values) for values in one_by_one)
    assert rows[1].status_summary is None and rows[1].steady_median_s is None
    assert rows[1].n_drift is None and rows[1].energy_method is None
    assert type(rows[0].n_ok) is int and type(rows[0].steady_median_s) is float
    assert typed_rows(MachineCell, frame.iloc[:0]) == ()


def test_plain_gives_python_scalars_and_none_for_every_missing_value() -> None:
    """Plain Python values pass as they are; numpy scalars become their Python values; every
    kind of missing value (None, NaN of either float, NA, NaT) is None; anything else is text."""
    for value in ("a", 3, True, 0.25):
        assert plain(value) == value and type(plain(value)) is type(value)
    assert type(plain(np.float64(0.5))) is float and type(plain(np.int64(2))) is int
    assert type(plain(np.bool_(True))) is bool and type(plain(np.str_("b"))) is str
    for missing in (None, float("nan"), np.float64("nan"), pd.NA, pd.NaT):
        assert plain(missing) is None, missing
    assert plain(pd.Timestamp("2026-12-06")) == "2026-12-06 00:00:00"


def test_the_environment_lists_no_plan_and_its_flags_apart() -> None:
    env = environment({"torch": "2.11", "plan": ["c1", "c2"], "gpu": {"tf32": True, "ids": []},
                       "flag_defaults": {"cudnn.benchmark": False}})
    assert env.settings == (("gpu.ids", "(none)"), ("gpu.tf32", "true"), ("torch", "2.11"))
    assert env.flags == (("cudnn.benchmark", "false"),)
    assert environment(None).settings == () and environment(None).flags == ()


def test_a_cell_and_a_failure_render_from_their_rows() -> None:
    cell = MachineCell(kind="model", anchor="cell-1234abcd-c1", cell_name="resnet <b>",
                       status_summary="3 ok", n_ok=3, n_total=3, too_few_ok=False, n_drift=2,
                       steady_median_s=0.0412, iqr_s=None, samples_per_s=100.0,
                       throughput_basis="whole cycle")
    html = cells_fragment([cell])
    assert 'id="cell-1234abcd-c1"' in html and "resnet &lt;b&gt;" in html
    assert "3 ok (2 drifting)" in html and "41.2 ms" in html and "100 samples/s per cycle" in html
    failed = FailedReplicate(fingerprint_id="1234abcd99", kind="repro", cell_id="c1",
                             cell_name="resnet", status="crash", run_id="r1",
                             source="box/r1/results.csv", line=7)
    html = failures_fragment([failed])
    assert 'href="#repro-1234abcd-c1"' in html and "box/r1/results.csv:7" in html


def test_sittings_are_read_off_the_rows_that_name_one() -> None:
    rows = pd.DataFrame({"sitting": pd.Series([1, 2, None, 2], dtype="Int64"),
                         "started_at": ["t1", "t3", "t0", "t2"],
                         "ended_at": ["t2", "t4", "t9", "t5"]})
    got = sittings_of(rows)
    assert [(s.number, s.started, s.ended, s.rows) for s in got] == [
        (1, "t1", "t2", 1), (2, "t2", "t5", 2)]
    assert sittings_of(rows.drop(columns="sitting")) == ()
