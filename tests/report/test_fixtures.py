"""The committed fixture tree: up to date, clearly marked, covering what the pages need."""

from __future__ import annotations

import csv
import filecmp

import pytest

from bench import schema
from bench.report.analysis import analyse
from bench.report.input.load import load_reports
from bench.report.judge import advice

from .builders import FIXTURE_REPORTS, synth


@pytest.fixture(scope="module")
def analysis():
    return analyse(load_reports(FIXTURE_REPORTS))


def _raw_rows() -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    for path in sorted(FIXTURE_REPORTS.rglob(schema.RESULTS_FILE)):
        with path.open(newline="") as fh:
            rows += list(csv.DictReader(fh))
    return rows


def test_committed_fixtures_match_the_generator(tmp_path):
    import make_fixtures

    make_fixtures.write_fixtures(tmp_path)
    committed = sorted(
        p.relative_to(FIXTURE_REPORTS) for p in FIXTURE_REPORTS.rglob("*") if p.is_file()
    )
    fresh = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert committed == fresh
    mismatch = [
        str(p)
        for p in committed
        if not filecmp.cmp(FIXTURE_REPORTS / p, tmp_path / p, shallow=False)
    ]
    assert mismatch == [], "re-run python tests/fixtures/make_fixtures.py and commit the output"


def test_fixtures_are_marked_as_fixtures():
    note = (FIXTURE_REPORTS / "FIXTURE.md").read_text()
    assert "NOT measurements" in note
    ds = load_reports(FIXTURE_REPORTS)
    assert set(ds.results["machine"]) == {"fixture-gpu-box", "fixture-cpu-laptop"}
    assert all(r.run_id.startswith("fixture-") for r in ds.runs)
    assert all(r.machine.startswith("fixture-") for r in ds.runs)


def test_fixtures_cover_every_status_and_kind():
    raw = _raw_rows()
    assert {r["status"] for r in raw} == set(schema.STATUSES)
    assert {r["kind"] for r in raw} == set(schema.KINDS)
    assert list(raw[0]) == list(schema.RESULT_COLUMNS)
    ds = load_reports(FIXTURE_REPORTS)
    # the interrupted replicate was resumed: the later ok row wins
    assert "interrupted" not in set(ds.results["status"])
    assert len(ds.results) == len(raw) - 1
    assert len(ds.envs) == 3  # the laptop under two torch versions: two fingerprints


def test_fixture_conclusions(analysis):
    cells = analysis.cells
    assert cells["too_few_ok"].any() and (~cells["too_few_ok"]).sum() > 50
    bm = analysis.benchmark.set_index(
        ["model", "mode", "precision", "memory_format", "shapes", "cudnn_deterministic",
         "kernel_cache"]
    )
    for cache in ("fresh", "warm"):
        key = ("resnet50", "train", "fp32", "nchw", "static", "off", cache)
        assert bm.loc[key, "verdict"] == "faster"
    fresh = bm.loc[("resnet50", "train", "fp32", "nchw", "static", "off", "fresh")]
    warm = bm.loc[("resnet50", "train", "fp32", "nchw", "static", "off", "warm")]
    assert fresh["extra_cold_pass_s"] > 2 * warm["extra_cold_pass_s"] > 0
    assert fresh["warm_extra_cold_pass_s"] == warm["extra_cold_pass_s"]  # shown beside it
    assert fresh["extra_cold_pass_max_s"] > fresh["extra_cold_pass_s"]  # replicates differ
    assert (
        bm.loc[("vit_b_16", "train", "fp32", "nchw", "static", "off", "fresh"), "verdict"]
        == "no clear difference"
    )
    assert (
        bm.loc[("mobilenet_v3_large", "infer", "fp32", "nchw", "static", "off", "fresh"),
               "verdict"]
        == "slower"
    )
    assert set(analysis.shapes["variant_value"]) == {"dynamic", "ragged"}
    assert set(analysis.comparisons["precision"]["variant_value"]) == {
        "fp32-strict",
        "amp-bf16",
        "amp-fp16",
    }
    assert set(analysis.comparisons["memory_format"]["verdict"]) == {"faster"}
    det = analysis.determinism
    checked = det.loc[det["var_n_checks"] > 0]
    assert checked["var_bitwise_equal"].all() and not checked["base_bitwise_equal"].any()
    unchecked = det.loc[(det["var_n_checks"] == 0) & (det["base_n_checks"] == 0)]
    assert set(unchecked["model"]) == {"resnet50"}  # a pair whose re-run check never ran
    crossings = analysis.crossovers.set_index(["page", "model", "mode"])["crossover_batch"]
    gpu_page = analysis.machines.set_index("machine").loc["fixture-gpu-box", "page"]
    assert crossings.loc[(gpu_page, "mobilenet_v3_large", "infer")] == 8
    assert crossings.loc[(gpu_page, "resnet18", "train")] == 1
    assert set(analysis.ceilings["op"]) == set(schema.CEILING_OPS)


def test_fixture_advice_covers_each_outcome(analysis):
    recs = advice.recommend(analysis)
    rules = {r.rule for r in recs}
    assert {
        "bm-faster-pays-back",
        "bm-cold-cost-not-repaid",
        "bm-slower",
        "bm-no-clear-difference",
        "bm-insufficient",
        "det-costs",
        "precision-faster",
        "precision-slower",
        "memory_format-faster",
        "device-gpu-from-batch",
    } <= rules
    pages = set(analysis.cells["page"])
    anchors = set(analysis.cells["anchor"]) | set(analysis.repro["anchor"])
    for rec in recs:  # every piece of evidence points at a row the machine pages will show
        for page, anchor in rec.evidence:
            assert page in pages and anchor in anchors


def test_synthetic_tree(tmp_path):
    synth.write_synthetic_reports(tmp_path, 3_000, seed=1)
    ds = load_reports(tmp_path)
    assert 2_700 <= len(ds.results) <= 3_300
    assert ds.results["fingerprint_id"].nunique() == 4
    ok = (ds.results["status"] == "ok").sum()
    assert len(ds.samples) == 10 * ok
    assert set(ds.results["status"]) >= {"ok", "oom", "crash"}
    again = tmp_path / "again"
    synth.write_synthetic_reports(again, 3_000, seed=1)
    first = sorted(p for p in tmp_path.rglob("*.csv") if again not in p.parents)
    assert all(filecmp.cmp(p, again / p.relative_to(tmp_path), shallow=False) for p in first)
