"""``bench check``'s bounds on the numerics columns, and older results read with them empty
(test fixtures, not results)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from bench.migrations import migrate
from bench.run.store import numbounds
from bench.schema import NUMERICS_COLUMNS, RESULTS_FILE, SCHEMA_VERSION

from .test_check import _row, _run

ROOT = Path(__file__).resolve().parents[2]
_CHECKED = dict(device="cpu", cudnn_benchmark="n/a", cudnn_deterministic="n/a",
                eff_cudnn_benchmark="", eff_cudnn_deterministic="", eff_cudnn_allow_tf32="",
                memory_format="nchw", compile="off", num_reference="fp64-cpu", num_inputs=256,
                num_rel_err=2e-3, num_max_abs_err=0.01, num_cosine=0.9999, num_top1_agree=0.98,
                num_time_s=0.5, wall_s=3.0)


def test_plausible_numerics_pass(tmp_path: Path) -> None:
    assert _run(tmp_path, [_row(**_CHECKED)]) == set()


@pytest.mark.parametrize("over", [
    {"num_rel_err": -1e-3}, {"num_max_abs_err": -0.5}, {"num_cosine": 1.5},
    {"num_cosine": -1.01}, {"num_top1_agree": 1.2}, {"num_top1_agree": -0.1},
    {"num_param_drift": -1.0}, {"num_loss_rel_diff": -0.1},
    # the reference configuration against itself must read zero
    {"num_reference": "fp32-strict", "precision": "fp32-strict"},
    {"num_reference": "fp32-strict", "num_rel_err": 0, "num_max_abs_err": 0, "num_cosine": 1,
     "num_top1_agree": 0.99},
    # the check's seconds do not fit beside the timed windows
    {"num_time_s": 2.9},
])
def test_each_numerics_bound_is_found(tmp_path: Path, over: dict[str, Any]) -> None:
    assert _run(tmp_path, [_row(**{**_CHECKED, **over})]) == {numbounds.NUMERICS}


def test_the_reference_configuration_reading_zero_passes(tmp_path: Path) -> None:
    itself = dict(num_reference="fp32-strict", num_rel_err=0, num_max_abs_err=0, num_cosine=1,
                  num_top1_agree=1)
    assert _run(tmp_path, [_row(**{**_CHECKED, **itself})]) == set()
    # channels_last is not the reference configuration: it may differ
    (tmp_path / "cl").mkdir()
    assert _run(tmp_path / "cl", [_row(**{**_CHECKED, "num_reference": "fp32-strict",
                                          "memory_format": "channels_last"})]) == set()


def test_an_older_results_file_reads_with_empty_numerics() -> None:
    old = sorted(ROOT.glob(f"reports/*/*/{RESULTS_FILE}"))
    assert old, "no committed results to migrate"
    with open(old[0], newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows and int(rows[0]["schema_version"]) < SCHEMA_VERSION
    for row in rows:
        got = migrate(dict(row))
        assert got["schema_version"] == str(SCHEMA_VERSION)
        for col in (*NUMERICS_COLUMNS, "eff_matmul_fp32_precision", "eff_conv_fp32_precision"):
            assert got[col] == ""
