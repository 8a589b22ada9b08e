"""load_reports: every refusal names file and line; skip_bad skips rows; dedupe; typing."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from bench import migrations, schema
from bench.report.input.load import LoadError, load_reports

from .builders import axes, cell, env_for, result_row


@pytest.fixture
def good(write_tree):
    """A valid run of two cells × 3 replicates; returns (root, results.csv path)."""
    env = env_for("box", "run-1")
    rows = cell(env, axes(), [0.1, 0.11, 0.1]) + cell(env, axes(cudnn_benchmark="on"), [0.08] * 3)
    root = write_tree([(env, rows, [])])
    return root, root / "box" / "run-1" / "results.csv"


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines(keepends=True)


def _set_field(path: Path, line: int, column: str, value: str) -> None:
    """Replace one field of one physical line (1-based); fields here hold no commas."""
    lines = _lines(path)
    header = lines[0].rstrip("\n").split(",")
    fields = lines[line - 1].rstrip("\n").split(",")
    fields[header.index(column)] = value
    lines[line - 1] = ",".join(fields) + "\n"
    path.write_text("".join(lines))


def _refused(root: Path, path: Path, line: int, words: str) -> str:
    with pytest.raises(LoadError) as info:
        load_reports(root)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert words in message, message
    assert "\n" not in message
    return message


def test_good_tree_loads_typed(good):
    root, _ = good
    ds = load_reports(root)
    res = ds.results
    assert len(res) == 6 and ds.skipped == []
    assert list(res.columns[: len(schema.RESULT_COLUMNS)]) == list(schema.RESULT_COLUMNS)
    assert res["steady_median_s"].dtype == "float64"
    assert str(res["batch_size"].dtype) == "Int64"
    assert str(res["repro_bitwise_equal"].dtype) == "boolean"
    assert res["reason"].tolist() == [""] * 6  # strings: "" for empty, never NaN
    assert res["line"].tolist() == [2, 3, 4, 5, 6, 7]
    assert set(res["source"]) == {"box/run-1/results.csv"}
    assert [r.run_id for r in ds.runs] == ["run-1"]
    assert ds.runs[0].results == Path("box/run-1/results.csv")
    assert set(ds.envs) == {res["fingerprint_id"].iloc[0]}


def test_unknown_schema_version(good):
    root, path = good
    newer = str(schema.SCHEMA_VERSION + 1)
    _set_field(path, 3, "schema_version", newer)
    _refused(root, path, 3, f"schema_version {newer} is newer")


def test_missing_column(good):
    root, path = good
    frame = pd.read_csv(path, dtype=str, keep_default_na=False).drop(columns=["steady_median_s"])
    frame.to_csv(path, index=False)
    _refused(root, path, 1, "missing column(s): steady_median_s")


def test_missing_column_fails_even_with_skip_bad(good):
    root, path = good
    frame = pd.read_csv(path, dtype=str, keep_default_na=False).drop(columns=["status"])
    frame.to_csv(path, index=False)
    with pytest.raises(LoadError, match="missing column"):
        load_reports(root, skip_bad=True)


def test_non_numeric_time(good):
    root, path = good
    _set_field(path, 5, "steady_median_s", "fast")
    _refused(root, path, 5, "steady_median_s is not a number: 'fast'")


def test_non_finite_and_negative_times(good):
    root, path = good
    _set_field(path, 4, "cold_pass_s", "inf")
    _refused(root, path, 4, "cold_pass_s is not a finite number")
    _set_field(path, 4, "cold_pass_s", "-1.5")
    _refused(root, path, 4, "cold_pass_s is negative: -1.5")
    _set_field(path, 4, "cold_pass_s", "0.5")
    _set_field(path, 4, "replicate", "1.5")
    _refused(root, path, 4, "replicate is not an integer: 1.5")


def test_unknown_status(good):
    root, path = good
    _set_field(path, 6, "status", "exploded")
    _refused(root, path, 6, "unknown status 'exploded'")


def test_unknown_kind(good):
    root, path = good
    _set_field(path, 2, "kind", "benchmark")
    _refused(root, path, 2, "unknown kind 'benchmark'")


def test_truncated_last_line_without_newline(good):
    root, path = good
    path.write_text(path.read_text().rstrip("\n"))
    _refused(root, path, 7, "truncated last line")


def test_truncated_last_line_cut_short(good):
    root, path = good
    text = path.read_text()
    path.write_text(text[: text.rstrip("\n").rfind(",")])  # the last row loses its tail
    _refused(root, path, 7, "truncated last line (expected")


def test_wrong_field_count_in_the_middle(good):
    root, path = good
    lines = _lines(path)
    lines[2] = lines[2].rstrip("\n") + ",extra\n"
    path.write_text("".join(lines))
    _refused(root, path, 3, f"expected {len(schema.RESULT_COLUMNS)} fields, found")


def test_ok_row_without_time(good):
    root, path = good
    _set_field(path, 2, "steady_median_s", "")
    _refused(root, path, 2, "status ok but steady_median_s is empty")


def test_line_numbers_count_quoted_newlines(write_tree):
    env = env_for("box", "run-1")
    crashed = result_row(
        env,
        axes(),
        0,
        status="error",
        seconds=None,
        reason='RuntimeError: boom\n  at "conv", line 3\n| `x` $y$',
    )
    r18 = axes(model="resnet18")
    rows = [crashed, *cell(env, r18, [0.1, 0.1]), result_row(env, r18, 2, steady_median_s="fast")]
    root = write_tree([(env, rows, [])])
    path = root / "box" / "run-1" / "results.csv"
    # the error row spans lines 2-4, so the third resnet18 replicate starts on line 7
    _refused(root, path, 7, "steady_median_s is not a number")
    ds = load_reports(root, skip_bad=True)
    assert ds.results["line"].tolist() == [2, 5, 6]
    assert ds.results["reason"].iloc[0].startswith("RuntimeError: boom\n")


def test_skip_bad_reports_and_skips_rows(good):
    root, path = good
    _set_field(path, 3, "status", "exploded")
    _set_field(path, 6, "steady_median_s", "n/a")
    path.write_text(path.read_text().rstrip("\n"))  # and a truncated last line (7)
    ds = load_reports(root, skip_bad=True)
    assert ds.results["line"].tolist() == [2, 4, 5]
    assert len(ds.skipped) == 6
    assert ds.skipped[0].startswith(f"{path}:3: unknown status")
    assert ds.skipped[1].startswith(f"{path}:6: steady_median_s is not a number")
    assert ds.skipped[2].startswith(f"{path}:7: truncated last line")
    # and the samples of those rows, which no row left commits
    assert all("have no valid row in results.csv" in m for m in ds.skipped[3:])
    assert len(ds.samples) == 3 * 3


def test_dedupe_last_row_wins(write_tree):
    env = env_for("box", "run-1")
    ok = cell(env, axes(), [0.1, 0.1, 0.1])
    interrupted = result_row(env, axes(), 2, status="interrupted", seconds=None)
    resumed = result_row(env, axes(), 2, seconds=0.3)
    rows = [ok[0], ok[1], interrupted, *cell(env, axes(model="vit_b_16"), [0.2] * 3), resumed]
    root = write_tree([(env, rows, [])])
    ds = load_reports(root)
    res = ds.results
    assert len(res) == 6
    mine = res.loc[(res["model"] == "resnet50") & (res["replicate"] == 2)]
    assert mine["status"].tolist() == ["ok"]
    assert mine["steady_median_s"].tolist() == [0.3]
    assert mine["line"].tolist() == [8]
    # the replaced attempt is counted where the pages say how many rows a file holds
    assert ds.replaced == {"box/run-1/results.csv": 1}
    from bench.report.analysis.machines import machine_summary

    assert machine_summary(ds)["n_replaced"].tolist() == [1]


def test_samples_of_a_rerun_replicate_keep_the_last_block(write_tree):
    env = env_for("box", "run-1")
    a = axes()
    rows = [result_row(env, a, 0, status="interrupted", seconds=None), result_row(env, a, 0)]
    cid = rows[0]["cell_id"]

    def sample(i: int, s: float) -> dict[str, object]:
        return {
            "schema_version": 1,
            "run_id": "run-1",
            "fingerprint_id": env["fingerprint_id"],
            "cell_id": cid,
            "replicate": 0,
            "phase": "steady",
            "iter": i,
            "batch_size": 64,
            "resolution": 224,
            "seconds": s,
        }

    samples = [sample(0, 9.0), sample(1, 9.0), sample(0, 0.1), sample(1, 0.1), sample(2, 0.1)]
    root = write_tree([(env, rows, samples)])
    ds = load_reports(root)
    assert ds.samples["seconds"].tolist() == [0.1, 0.1, 0.1]
    assert ds.samples["line"].tolist() == [4, 5, 6]
    assert str(ds.samples["iter"].dtype) == "Int64"


def test_bad_sample_is_refused_with_its_line(write_tree):
    env = env_for("box", "run-1")
    rows = cell(env, axes(), [0.1] * 3)
    sample = {
        "schema_version": 1,
        "run_id": "run-1",
        "fingerprint_id": env["fingerprint_id"],
        "cell_id": rows[0]["cell_id"],
        "replicate": 0,
        "phase": "warm",
        "iter": 0,
        "batch_size": 64,
        "resolution": 224,
        "seconds": 0.1,
    }
    root = write_tree([(env, rows, [sample])])
    path = root / "box" / "run-1" / "samples.csv"
    _refused(root, path, 2, "unknown phase 'warm'")


def test_env_json_problems(good):
    root, _ = good
    env_path = root / "box" / "run-1" / "env.json"
    env_path.write_text('{\n  "fingerprint_id": "abc",\n  oops\n}\n')
    _refused(root, env_path, 3, "invalid JSON")
    env_path.write_text(json.dumps({"fingerprint_id": "abc", "schema_version": 9}))
    _refused(root, env_path, 1, "newer than this code understands")
    env_path.unlink()
    _refused(root, env_path, 0, "missing env.json")
    ds = load_reports(root, skip_bad=True)
    assert len(ds.results) == 6 and "missing env.json" in ds.skipped[0]


def test_empty_tree_gives_typed_empty_frames(tmp_path):
    ds = load_reports(tmp_path)
    assert ds.results.empty and ds.samples.empty and ds.runs == []
    assert ds.results["steady_median_s"].dtype == "float64"


def test_older_schema_is_migrated(good, monkeypatch):
    root, path = good
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame["schema_version"] = "0"
    frame = frame.rename(columns={"cold_pass_s": "cold_total_s"})  # the v0 name
    frame.to_csv(path, index=False)
    with pytest.raises(LoadError, match=r":2: schema_version 0 has no migration"):
        load_reports(root)

    def v0_to_v1(row):
        row["cold_pass_s"] = row.pop("cold_total_s")
        return row

    monkeypatch.setitem(migrations.MIGRATIONS, 0, v0_to_v1)
    res = load_reports(root).results
    assert res["schema_version"].tolist() == [schema.SCHEMA_VERSION] * 6
    # version 1 knew no per-replicate kernel caches: its processes shared the machine's own
    assert res["kernel_cache"].tolist() == ["shared"] * 6
    assert res["cold_pass_s"].tolist() == pytest.approx([0.5, 0.55, 0.5, 0.4, 0.4, 0.4])
    assert res["line"].tolist() == [2, 3, 4, 5, 6, 7]


def test_a_version_3_file_reads_its_break_figure_as_the_steady_states(good):
    """Version 3 counted steady-state breaks only: loaded, an old compiled row tells no reader
    "0 breaks" of a cold pass it never counted, and its notes say why the count is empty."""
    root, path = good
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame = frame.drop(columns=["steady_graph_breaks", "graphs", "graph_break_reasons"])
    frame["schema_version"] = "3"
    frame.loc[:2, ["compile", "compiles", "recompiles", "graph_breaks"]] = ["default", "1", "0",
                                                                          "0"]
    frame.to_csv(path, index=False)
    res = load_reports(root).results
    assert res["schema_version"].tolist() == [schema.SCHEMA_VERSION] * 6
    assert res["steady_graph_breaks"].tolist() == [0, 0, 0, pd.NA, pd.NA, pd.NA]
    assert res["graph_breaks"].isna().all() and res["graphs"].isna().all()
    assert res["graph_break_reasons"].tolist() == [""] * 6
    assert res["notes"].tolist() == [migrations.V3_BREAKS_NOTE] * 3 + [""] * 3


def test_newer_schema_rows_are_skipped_with_skip_bad(good):
    root, path = good
    newer = str(schema.SCHEMA_VERSION + 1)
    _set_field(path, 4, "schema_version", newer)
    ds = load_reports(root, skip_bad=True)
    assert ds.results["line"].tolist() == [2, 3, 5, 6, 7]
    assert ds.skipped[0] == (
        f"{path}:4: schema_version {newer} is newer than this code understands "
        f"(<= {schema.SCHEMA_VERSION}); upgrade torch-knobs to read it"
    )
    assert ds.skipped[1:] == [  # the skipped row's samples go with it
        f"{path.with_name('samples.csv')}:8: 3 sample(s) of cell "
        f"'{ds.samples['cell_id'].iloc[0]}' #r2 have no valid row in results.csv"
    ]


@pytest.mark.parametrize("fork", ["1", "0"])
def test_of_two_bad_runs_the_first_in_path_order_is_named(write_tree, monkeypatch, fork):
    """The runs are read largest first, and in two processes; the error is still the one a
    reading in path order meets first."""
    monkeypatch.setenv("TORCH_KNOBS_REPORT_WORKERS", fork)
    small, large = env_for("a-box", "run-1"), env_for("b-box", "run-1")
    many = [cell(large, axes(batch_size=b), [0.1, 0.11, 0.1]) for b in range(1, 40)]
    root = write_tree([(small, cell(small, axes(), [0.1] * 3), []),
                       (large, [r for rows in many for r in rows], [])])
    first = root / "a-box" / "run-1" / "results.csv"
    second = root / "b-box" / "run-1" / "results.csv"
    assert first.stat().st_size < second.stat().st_size
    _set_field(first, 3, "status", "bogus")
    _set_field(second, 2, "status", "bogus")
    _refused(root, first, 3, "unknown status")


COMMITTED = sorted((Path(__file__).resolve().parents[2] / "reports").rglob("env.json"))


@pytest.mark.parametrize("env_path", COMMITTED, ids=lambda p: p.parent.name)
def test_every_committed_env_json_gives_its_id_by_the_definition_it_was_written_under(
        env_path: Path) -> None:
    """Runs made before the workload version joined the fingerprint have no ``bench`` object
    and were hashed without ``bench.workload_version`` (definition 1): the current
    definition hashes it as null and gives another id, so the loader recomputes only files
    that record it (definition 2), and every committed run still loads."""
    from bench.fingerprint import DEFINITION, definition_of, fingerprint_id
    from bench.report.input.envfile import read_env

    env = json.loads(env_path.read_text(encoding="utf-8"))
    if definition_of(env) == DEFINITION:
        assert fingerprint_id(env) == env["fingerprint_id"]
    else:
        assert "bench" not in env
        assert fingerprint_id(env, 1) == env["fingerprint_id"] != fingerprint_id(env)
    read_env(env_path)
