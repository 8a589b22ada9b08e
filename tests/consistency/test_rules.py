"""The rules on rows and samples (``bench.consistency``) give ``bench check`` and the report's
loader the same answers on the same run folders (test fixtures, not results).

``bench check`` applies them row by row in the standard library, the loader (and, for drift,
the report's cell statistics) column by column with numpy; each fixture below is one folder
both read, and both must flag the same lines, or none.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from bench import consistency as rules
from bench.run.store import check as checks

pytest.importorskip("pandas")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))

import synth  # noqa: E402

from bench.report.analysis.cells import replicate_drift  # noqa: E402
from bench.report.input.load import LoadError, load_reports  # noqa: E402

#: The checks of ``bench check`` that state the rules on rows and samples.
SAMPLE_CHECKS = {"samples", "samples without a row", "rows without samples"}
AXES: dict[str, Any] = {
    "device": "cpu", "model": "resnet18", "mode": "infer", "batch_size": 8, "resolution": 224,
    "precision": "fp32", "memory_format": "nchw", "shapes": "static", "cudnn_benchmark": "n/a",
    "cudnn_deterministic": "n/a", "cudnn_benchmark_limit": "", "cpu_threads": "",
    "kernel_cache": "fresh", "compile": "off", "compile_dynamic": "auto"}
ENV = synth.make_env("box", "run-1", gpu=None, cpu_model="Test CPU", cores=4,
                     torch_version="2.14.1", collected_at="2026-11-29T00:00:00Z",
                     profile="test")


def _row(replicate: int, *, status: str = "ok", seconds: float = 0.1, iters: int = 3,
         attempt: str | None = None, version: int | None = None) -> dict[str, object]:
    """One CPU model row, plausible for every other check of ``bench check``."""
    row: dict[str, object] = {
        "schema_version": version or synth.schema.SCHEMA_VERSION, "run_id": ENV["run_id"],
        "fingerprint_id": ENV["fingerprint_id"], "machine": ENV["machine"], "profile": "test",
        "study": "test", "cell_id": synth.cell_id_for(AXES), "cell_name": synth.cell_name_for(AXES),
        "kind": "model", "replicate": replicate, **AXES, "shape_count": 1, "status": status,
        "reason": "" if status == "ok" else "test crash", "started_at": "2026-11-29T00:00:00Z",
        "ended_at": "2026-11-29T00:00:01Z",
        "attempt_id": f"a{replicate}" if attempt is None else attempt}
    if version == 1:
        del row["attempt_id"]
    if status == "ok":
        row.update(steady_median_s=seconds, steady_p10_s=seconds * 0.98,
                   steady_p90_s=seconds * 1.02, steady_mean_s=seconds, steady_iters=iters,
                   samples_per_s=8 / seconds, cold_first_iter_s=seconds * 5,
                   cold_pass_s=seconds * 5, wall_s=2.0)
    return row


def _samples(row: dict[str, object], seconds: list[float] | None = None
             ) -> list[dict[str, object]]:
    """A block: a cold pass, then the steady iterations (``seconds``, else the row's count at
    its median), under the row's attempt."""
    xs = seconds if seconds is not None else [float(str(row["steady_median_s"]))] * int(
        str(row["steady_iters"]))
    ids = {k: row[k] for k in ("schema_version", "run_id", "fingerprint_id", "cell_id",
                               "replicate", "attempt_id") if k in row}
    cold = [{**ids, "phase": "cold", "iter": 0, "batch_size": 8, "resolution": 224,
             "seconds": 0.5}]
    return cold + [{**ids, "phase": "steady", "iter": i + 1, "batch_size": 8,
                    "resolution": 224, "seconds": x} for i, x in enumerate(xs)]


def _folder(root: Path, rows: list[dict[str, object]], samples: list[dict[str, object]]
            ) -> Path:
    run = root / "box" / "run-1"
    synth.write_run(run, rows, [], ENV)
    legacy = not any("attempt_id" in s for s in samples)
    columns = [c for c in synth.schema.SAMPLE_COLUMNS if not (legacy and c == "attempt_id")]
    synth.write_csv(run / "samples.csv", columns, samples)
    return run


def _flagged_by_check(run: Path) -> set[str]:
    _, found = checks.check_run(run)
    return {a.where.split(" ", 1)[0] for a in found if a.check in SAMPLE_CHECKS}


def _flagged_by_loader(root: Path) -> set[str]:
    return {m.split(": ", 1)[0] for m in load_reports(root, skip_bad=True).skipped}


def _three() -> list[dict[str, object]]:
    return [_row(r) for r in range(3)]


def _legacy(*, resumed: bool) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """Rows and samples of schema version 1 (no attempt ids): replicate 1 has two blocks,
    a killed attempt's before its row's own (``resumed``), or a second one after it."""
    rows = [_row(r, version=1) for r in range(3)]
    other = _samples(rows[1], [0.9, 0.9])  # another attempt's: not the row's count
    blocks = [_samples(r) for r in rows]
    blocks[1] = other + blocks[1] if resumed else blocks[1] + other
    return rows, [s for b in blocks for s in b]


def _cases() -> dict[str, tuple[list[dict[str, object]], list[dict[str, object]], set[int],
                                set[int]]]:
    """Fixture → (rows, samples, results.csv lines and samples.csv lines both must flag)."""
    ok = _three()
    crash = [*ok[:2], _row(2, status="crash")]
    short = [*ok[:2], _row(2, iters=4)]
    drifting = [*ok[:2], _row(2, iters=6, seconds=0.3)]
    repeat = [s for r in ok for s in (_samples(r) * (2 if r["replicate"] == 1 else 1))]
    return {
        "plausible": (ok, [s for r in ok for s in _samples(r)], set(), set()),
        "samples without a row": (ok[:2], [s for r in ok for s in _samples(r)], set(), {10}),
        "samples of a row that is not ok": (crash, [s for r in ok for s in _samples(r)],
                                            set(), {10}),
        "an ok row without samples": (ok, [s for r in ok[:2] for s in _samples(r)], {4}, set()),
        "fewer steady samples than steady_iters": (
            short, [s for r in ok for s in _samples(r)], {4}, set()),
        "a repeated attempt": (ok, repeat, set(), {6}),
        "a legacy replicate resumed after a kill": (*_legacy(resumed=True), set(), set()),
        "a legacy replicate with a second block": (*_legacy(resumed=False), {3}, set()),
        "a drifting replicate": (drifting, [s for r in ok[:2] for s in _samples(r)]
                                 + _samples(drifting[2], [0.1, 0.1, 0.1, 0.5, 0.5, 0.5]),
                                 set(), set()),
    }


@pytest.mark.parametrize("case", list(_cases()))
def test_bench_check_and_the_loader_flag_the_same_lines(tmp_path: Path, case: str) -> None:
    rows, samples, row_lines, sample_lines = _cases()[case]
    run = _folder(tmp_path, rows, samples)
    want = {f"{run / 'results.csv'}:{n}" for n in row_lines} | {
        f"{run / 'samples.csv'}:{n}" for n in sample_lines}
    assert _flagged_by_check(run) == want
    assert _flagged_by_loader(tmp_path) == want


def test_both_find_the_same_drift(tmp_path: Path) -> None:
    rows, samples, _, _ = _cases()["a drifting replicate"]
    run = _folder(tmp_path, rows, samples)
    _, found = checks.check_run(run)
    by_check = {a.where.split(" ", 1)[0] for a in found if a.check == "steady drift"}
    assert by_check == {f"{run / 'results.csv'}:4"}
    ratio = replicate_drift(load_reports(tmp_path).samples)
    assert ratio.tolist() == pytest.approx([1.0, 1.0, 5.0])
    assert rules.drifted(ratio.to_numpy()).tolist() == [False, False, True]
    assert checks.drift_halves([0.1, 0.1, 0.1, 0.5, 0.5, 0.5]) == (0.1, 0.5)


def test_the_rules_take_one_value_or_arrays_alike() -> None:
    np = pytest.importorskip("numpy")
    ranks, n = np.arange(7), np.full(7, 7)
    assert [bool(rules.early_half(int(r), 7)) for r in ranks] == rules.early_half(ranks, n)\
        .tolist() == [True] * 3 + [False] * 4
    assert [bool(rules.late_half(int(r), 7)) for r in ranks] == rules.late_half(ranks, n)\
        .tolist() == [False] * 4 + [True] * 3
    assert not rules.early_half(0, 2) and not rules.late_half(1, 2), "too few to halve"
    ratios = [0.49, 0.5, 1.0, 2.0, 2.01, float("nan")]
    assert [bool(rules.drifted(r)) for r in ratios] == rules.drifted(np.array(ratios)).tolist()\
        == [True, False, False, False, True, False]
    medians = np.array([0.1, 0.1 + 2e-10, 5.0, 5.0 + 4e-9, 5.0 + 6e-9])
    rows = np.array([0.1, 0.1, 5.0, 5.0, 5.0])
    assert rules.median_differs(medians, rows).tolist() == [
        bool(rules.median_differs(float(a), float(b))) for a, b in zip(medians, rows)] == [
        False, False, False, False, True]


def test_the_loader_refuses_a_second_samples_block_of_a_legacy_replicate(tmp_path: Path
                                                                         ) -> None:
    """Before attempt ids, a replicate's last block is its row's; a second one written after
    it (here with two steady samples where the row counts three) was taken for the row's
    without a word. Its count is now held to the row's steady_iters."""
    rows, samples = _legacy(resumed=False)
    run = _folder(tmp_path, rows, samples)
    with pytest.raises(LoadError) as caught:
        load_reports(tmp_path)
    assert str(caught.value) == (f"{run / 'results.csv'}:3: status ok with steady_iters 3, but "
                                 "samples.csv has 2 steady sample(s) for it")
    ds = load_reports(tmp_path, skip_bad=True)
    assert ds.skipped == [f"{caught.value}"]
    assert ds.results["replicate"].tolist() == [0, 2], "the row is left out"
    assert sorted(set(ds.samples["replicate"])) == [0, 2], "and its samples with it"
    rows, samples = _legacy(resumed=True)  # a killed attempt's block before the row's own
    _folder(tmp_path, rows, samples)
    assert load_reports(tmp_path).samples["seconds"].max() < 0.9


#: A row that breaks one order its figures keep, the rule, and what the refusal says.
BROKEN_ORDERS: dict[str, tuple[dict[str, object], str, str]] = {
    "median above p90": ({"steady_p90_s": 0.099}, rules.QUANTILE_ORDER,
                         "steady_median_s 0.1 is above steady_p90_s 0.099"),
    "p95 above p99": ({"steady_p95_s": 0.11, "steady_p99_s": 0.105}, rules.QUANTILE_ORDER,
                      "steady_p95_s 0.11 is above steady_p99_s 0.105"),
    "p90 above p99, no p95": ({"steady_p90_s": 0.2, "steady_p99_s": 0.15}, rules.QUANTILE_ORDER,
                              "steady_p90_s 0.2 is above steady_p99_s 0.15"),
    "negative energy": ({"energy_j": -3.5}, rules.ENERGY_SIGN, "energy_j is negative: -3.5"),
    "negative power": ({"mean_power_w": -1.0}, rules.ENERGY_SIGN,
                       "mean_power_w is negative: -1.0"),
    "a short energy window": ({"energy_window_s": 0.15}, rules.WINDOW_LENGTH,
                              "energy_window_s 0.15 s is shorter than its steady steps took: "
                              "2 of its 3 took at least the median 0.1 s, 0.2 s"),
    "a short wall time": ({"wall_s": 0.1}, rules.WINDOW_LENGTH, "wall_s 0.1 s is shorter"),
}


@pytest.mark.parametrize("case", list(BROKEN_ORDERS))
def test_a_row_that_breaks_an_order_is_refused_by_both(tmp_path: Path, case: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Each order a row's figures keep: the loader refuses the row at its line, naming the
    rule, and ``bench check`` reports it under the rule's name; the honest rows pass."""
    from bench.report.input import tables

    over, rule, problem = BROKEN_ORDERS[case]
    rows = _three()
    rows[1].update(over)
    run = _folder(tmp_path, rows, [s for r in _three() for s in _samples(r)])
    _, found = checks.check_run(run)
    assert [(a.check, a.where.split(" ", 1)[0]) for a in found] == [
        (rule, f"{run / 'results.csv'}:3")]
    assert problem in found[0].problem
    monkeypatch.setattr(tables, "HELD_WINDOWS", rules.WINDOWS)  # the windows too (see there)
    with pytest.raises(LoadError) as caught:
        load_reports(tmp_path)
    said = str(caught.value)
    assert said.startswith(f"{run / 'results.csv'}:3: ") and problem in said, said
    assert said.endswith(f"(rule: {rule})")
    ds = load_reports(tmp_path, skip_bad=True)
    assert ds.skipped[0] == said and ds.results["replicate"].tolist() == [0, 2]


def test_honest_rows_at_the_bounds_pass_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    """Quantiles equal but for round-off, no energy, windows just as long as the two slower
    of three steps at the median."""
    from bench.report.input import tables

    rows = _three()
    rows[1].update(steady_p10_s=0.1, steady_p90_s=0.1 * (1 - 1e-7), steady_p95_s=0.1,
                   steady_p99_s=0.3, energy_j=0.0, energy_integrated_j=0.0,
                   joules_per_sample=0.0, mean_power_w=0.0, energy_window_s=0.2, wall_s=0.2)
    run = _folder(tmp_path, rows, [s for r in rows for s in _samples(r)])
    assert not [a for a in checks.check_run(run)[1] if a.check != "energy window"]
    monkeypatch.setattr(tables, "HELD_WINDOWS", rules.WINDOWS)
    assert len(load_reports(tmp_path).results) == 3


def test_the_orders_take_one_value_or_arrays_alike() -> None:
    np = pytest.importorskip("numpy")
    nan = float("nan")
    lo, hi = np.array([0.1, 0.1, 0.1 + 1e-6, nan, 0.2]), np.array([0.2, 0.1, 0.1, 0.1, nan])
    assert rules.out_of_order(lo, hi).tolist() == [
        bool(rules.out_of_order(float(a), float(b))) for a, b in zip(lo, hi)] == [
        False, False, True, False, False]
    n, med = np.array([1.0, 3.0, 4.0, nan]), np.array([0.5, 0.1, 0.1, 0.1])
    assert rules.least_steady_s(n, med).tolist()[:3] == pytest.approx([0.5, 0.2, 0.2])
    assert rules.least_steady_s(3, 0.1) == pytest.approx(0.2)
    assert rules.window_short(np.array([0.49, 0.2, 0.199, 0.0]), n, med).tolist() == [
        True, False, True, False]
    assert rules.negative(np.array([-1e-9, 0.0, nan])).tolist() == [True, False, False]


def test_every_energy_or_power_column_of_the_schema_is_held_to_its_sign() -> None:
    """A column added to the schema in joules or watts joins ``ENERGY_FIGURES``."""
    named = {c.name for c in synth.schema.RESULT_SPEC
             if c.type == "float" and c.name not in rules.WINDOWS
             and (any(w in c.name for w in ("energy", "joule", "power")) or c.name.endswith("_w"))}
    assert named == set(rules.ENERGY_FIGURES)
