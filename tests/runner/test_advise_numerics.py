"""``bench advise`` reports each knob's numerics beside its speed, for the user's own model:
a model that overflows in fp16 (``overflow.py``) reads "drifts" with its figure under fp16
autocast, and "agrees" under channels_last, where its arithmetic is exact enough. One real run
on the CPU, made once per test session (``made_once``) and read by every test here."""

from __future__ import annotations

import functools
import io
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sharing import made_once

from .conftest import advise_into, read_csv

pytestmark = pytest.mark.e2e

MODEL = "tests/advise/overflow.py:build"
ADVISE = ("advise", MODEL, "--device", "cpu", "--mode", "infer", "--batch-size", "4",
          "--input-shape", "3,32,32", "--knobs", "amp-fp16,channels_last", "--budget", "60",
          "--json")


@pytest.fixture(scope="session")
def advised(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    base = made_once(tmp_path_factory, "advised-overflow",
                     functools.partial(advise_into, ADVISE, "stdout.json"))
    entries = json.loads((base / "stdout.json").read_text(encoding="utf-8"))
    return {e["knob"]: e for e in entries}, base / "machine" / "run"


def test_fp16_overflow_reads_drifts_with_its_figure(advised: tuple[dict[str, Any], Path]
                                                    ) -> None:
    entries, _ = advised
    fp16 = entries["amp-fp16"]
    assert fp16["status"] == "measured", fp16
    assert fp16["numerics"] == "drifts" and fp16["numerics_math"] == "fp16"
    assert fp16["numerics_replicates"] >= 1 and fp16["numerics_reference"]
    assert fp16["num_rel_err"] > fp16["tolerance_rel_err"] == 0.01
    assert fp16["numerics_text"].startswith("outputs drift (relative error ")
    assert fp16["numerics_text"].endswith(", over the fp16 tolerance of 1%)")
    assert fp16["tradeoff"] in (None, "faster, but its outputs drift: check on your own data "
                                "before you switch", "no faster, and it drifts: leave it")
    assert fp16["numerics_cell"].startswith("drifts, ")


def test_channels_last_reads_agrees(advised: tuple[dict[str, Any], Path]) -> None:
    entries, _ = advised
    layout = entries["channels_last"]
    assert layout["status"] == "measured", layout
    assert layout["numerics"] == "agrees" and layout["numerics_math"] == "fp32"
    assert layout["num_rel_err"] <= layout["tolerance_rel_err"]
    assert layout["numerics_text"].startswith("outputs agree (relative error ")


def test_the_rows_carry_the_check_the_json_quotes(advised: tuple[dict[str, Any], Path]
                                                  ) -> None:
    entries, out = advised
    rows = read_csv(out / "results.csv")
    checked = {r["cell_id"] for r in rows if r["num_reference"]}
    assert {entries["amp-fp16"]["variant_cell_id"],
            entries["channels_last"]["variant_cell_id"]} <= checked


def test_the_table_prints_the_numerics_and_the_tradeoff(advised: tuple[dict[str, Any], Path]
                                                        ) -> None:
    """What the terminal shows of the same entries: the column, and one note per knob."""
    from bench.commands.advise import print_verdicts

    entries, out = advised
    req = SimpleNamespace(model=MODEL, mode="infer", batch_size=4, shapes="static",
                          steps=10_000)
    plan = SimpleNamespace(device="cpu", replicates=3)
    said = io.StringIO()
    print_verdicts(req, plan, list(entries.values()), out, 1.0, stream=said)  # type: ignore[arg-type]
    lines = said.getvalue().splitlines()
    assert lines[1].rstrip().endswith("outputs vs strict")
    row = {ln.split()[0]: ln for ln in lines[2:] if ln and not ln.startswith("note on ")}
    assert row["amp-fp16"].rstrip().endswith(entries["amp-fp16"]["numerics_cell"])
    assert row["channels_last"].rstrip().endswith(entries["channels_last"]["numerics_cell"])
    fp16 = [ln for ln in lines if ln.startswith("note on amp-fp16: ")]
    assert any(ln.endswith(entries["amp-fp16"]["numerics_text"]) for ln in fp16), fp16


def test_the_plan_checks_the_axes_the_report_judges_by_numerics() -> None:
    """The plan (torch only) names the report's numeric axes without importing it."""
    from bench.commands.advise_plan import NUMERIC_AXES, checks_numerics
    from bench.report.analysis.numerics import NUMERIC_AXES as REPORTED
    from bench.run.plan import knobs

    assert NUMERIC_AXES == REPORTED
    by_name = {k.name: k for k in knobs.KNOBS}
    assert checks_numerics([by_name["cpu_threads"], by_name["channels_last"]])
    assert not checks_numerics([by_name["cpu_threads"], by_name["cudnn.benchmark"]])
