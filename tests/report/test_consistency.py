"""The loader checks that a run folder's files agree: each problem is ``file:line: problem`` in
strict mode, and listed and left out with ``skip_bad``; empty files and a wrongly typed
env.json are such problems too, never an exception from deep inside."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.report.analysis import analyse
from bench.report.input.load import LoadError, load_reports

from .builders import axes, env_for, result_row, synth


def _tree(write_tree: Any, rows: list[dict[str, object]] | None = None,
          samples: list[dict[str, object]] | None = None) -> tuple[Path, Path]:
    env = env_for("box", "run-1")
    rows = rows if rows is not None else [
        result_row(env, axes(), i, attempt_id=f"a{i}") for i in range(3)]
    root = write_tree([(env, rows, samples if samples is not None else synth.samples_for(rows))])
    return root, root / "box" / "run-1"


def _refused(root: Path, path: Path, line: int, words: str) -> None:
    with pytest.raises(LoadError) as info:
        load_reports(root)
    assert str(info.value).startswith(f"{path}:{line}: "), info.value
    assert words in str(info.value) and "\n" not in str(info.value)


def _skipped(root: Path, path: Path, line: int, words: str) -> Any:
    ds = load_reports(root, skip_bad=True)
    assert any(m.startswith(f"{path}:{line}: ") and words in m for m in ds.skipped), ds.skipped
    return ds


def test_samples_without_a_row(write_tree: Any) -> None:
    env = env_for("box", "run-1")
    rows = [result_row(env, axes(), i, attempt_id=f"a{i}") for i in range(2)]
    # a kill between replicate 2's samples and its row: three samples nothing commits
    orphans = synth.samples_for([result_row(env, axes(), 2, attempt_id="a2")])
    root, run = _tree(write_tree, rows, synth.samples_for(rows) + orphans)
    words = "3 sample(s) of cell"
    _refused(root, run / "samples.csv", 8, words)
    ds = _skipped(root, run / "samples.csv", 8, "#r2 have no valid row in results.csv")
    assert len(ds.results) == 2 and set(ds.samples["attempt_id"]) == {"a0", "a1"}


def test_a_stale_block_before_a_resumed_replicate_is_never_pooled(write_tree: Any) -> None:
    """The kill left replicate 1's samples (attempt a1) without a row; the resume re-ran it as
    attempt b1. Only b1's samples belong to the row."""
    env = env_for("box", "run-1")
    stale = synth.samples_for([result_row(env, axes(), 1, seconds=9.0, attempt_id="a1")])
    rows = [result_row(env, axes(), i, attempt_id=f"b{i}") for i in range(3)]
    fresh = synth.samples_for(rows)
    root, run = _tree(write_tree, rows, fresh[:3] + stale + fresh[3:])
    _refused(root, run / "samples.csv", 5, "have no valid row")
    ds = load_reports(root, skip_bad=True)
    assert ds.samples["seconds"].max() < 9.0


def test_legacy_samples_written_twice_keep_their_last_block(write_tree: Any) -> None:
    """Rows and samples of schema version 1 have no attempt id: of two blocks of one replicate
    (a kill before its row, then the resume's), the last one is the row's."""
    env = env_for("box", "run-1")
    rows = [result_row(env, axes(), i, schema_version=1) for i in range(2)]
    legacy = [{k: v for k, v in s.items() if k != "attempt_id"} | {"schema_version": 1}
              for s in synth.samples_for(rows)]
    stale = [dict(s, seconds=9.0) for s in legacy[3:]]
    root = write_tree([(env, rows, [])])
    synth.write_csv(root / "box" / "run-1" / "samples.csv",
                    [c for c in synth.schema.SAMPLE_COLUMNS if c != "attempt_id"],
                    legacy[:3] + stale + legacy[3:])
    ds = load_reports(root)
    assert ds.samples["seconds"].tolist() == [0.1] * 6


def test_ok_rows_without_samples(write_tree: Any) -> None:
    env = env_for("box", "run-1")
    rows = [result_row(env, axes(), i, attempt_id=f"a{i}") for i in range(3)]
    root, run = _tree(write_tree, rows, synth.samples_for(rows[:2]))
    _refused(root, run / "results.csv", 4, "status ok but samples.csv has no samples for it")
    ds = _skipped(root, run / "results.csv", 4, "no samples for it")
    assert ds.results["replicate"].tolist() == [0, 1]


def test_samples_under_another_fingerprint(write_tree: Any) -> None:
    env = env_for("box", "run-1")
    rows = [result_row(env, axes(), i, attempt_id=f"a{i}") for i in range(2)]
    samples = synth.samples_for(rows)
    samples[4]["fingerprint_id"] = "0123456789ab"
    root, run = _tree(write_tree, rows, samples)
    _refused(root, run / "samples.csv", 6,
             f"fingerprint_id '0123456789ab' differs from its row's '{env['fingerprint_id']}' "
             f"(results.csv:3)")
    ds = _skipped(root, run / "samples.csv", 6, "differs from its row's")
    assert set(ds.samples["attempt_id"]) == {"a0"}
    assert ds.results["replicate"].tolist() == [0], "and the row its samples left"


def test_an_env_json_whose_fingerprint_or_machine_is_not_its_rows(write_tree: Any) -> None:
    root, run = _tree(write_tree)
    env_path = run / "env.json"
    env = json.loads(env_path.read_text())
    real = env["fingerprint_id"]
    env_path.write_text(json.dumps({**env, "fingerprint_id": "feedfacecafe"}))
    _refused(root, run / "results.csv", 2,
             f"fingerprint_id '{real}' differs from env.json's 'feedfacecafe'")
    ds = _skipped(root, run / "results.csv", 2, "one run folder holds one environment")
    assert ds.results.empty
    env_path.write_text(json.dumps({**env, "machine": "other-box"}))
    _refused(root, run / "results.csv", 2, "machine 'box' differs from env.json's 'other-box'")


def test_two_fingerprints_in_one_run_folder(write_tree: Any) -> None:
    env = env_for("box", "run-1")
    other = env_for("box", "run-1", torch_version="2.13.0")
    rows = [result_row(env, axes(), 0, attempt_id="a0"),
            result_row(other, axes(), 1, attempt_id="a1")]
    root, run = _tree(write_tree, rows)
    second = f"fingerprint_id '{other['fingerprint_id']}'"
    _refused(root, run / "results.csv", 3, second)
    ds = _skipped(root, run / "results.csv", 3, second)
    assert ds.results["fingerprint_id"].tolist() == [env["fingerprint_id"]], "listed and skipped"
    assert set(ds.samples["attempt_id"]) == {"a0"}
    (run / "env.json").unlink()  # kept without one, the first row's fingerprint is the folder's
    ds = _skipped(root, run / "results.csv", 3, "a second fingerprint_id")
    assert ds.results["fingerprint_id"].tolist() == [env["fingerprint_id"]]


def test_two_fingerprints_under_one_run_id_never_replace_each_other(write_tree: Any) -> None:
    """Two machines whose runs got the same id (started the same second): the dedupe key has
    the fingerprint, so both keep their rows."""
    a, b = env_for("box-a", "run-1"), env_for("box-b", "run-1", gpu=False)
    rows_a = [result_row(a, axes(), i, attempt_id=f"a{i}") for i in range(2)]
    rows_b = [result_row(b, axes(), i, attempt_id=f"b{i}") for i in range(2)]
    ds = load_reports(write_tree([(a, rows_a, []), (b, rows_b, [])]))
    assert sorted(ds.results["machine"]) == ["box-a", "box-a", "box-b", "box-b"]
    assert len(ds.samples) == 4 * 3


@pytest.mark.parametrize("name", ["results.csv", "samples.csv"])
def test_a_zero_byte_file_is_a_problem_not_an_index_error(write_tree: Any, name: str) -> None:
    root, run = _tree(write_tree)
    (run / name).write_bytes(b"")
    _refused(root, run / name, 1, "empty file: no header line")
    ds = _skipped(root, run / name, 1, "empty file")
    assert ds.results.empty  # no run (results), or no ok row left without samples


@pytest.mark.parametrize(("field", "value", "words"), [
    ("gpus", 5, "gpus must be a list, not int 5"),
    ("cpu", "x", "cpu must be an object, not str 'x'"),
    ("torch", [], "torch must be an object, not list []"),
    ("gpus", ["H200"], "gpus[0] must be an object, not 'H200'"),
    ("planned_rows", "3", "planned_rows must be an integer"),
    ("sittings", {"1": "x"}, "sittings must be a list, not dict"),
    ("sittings", ["x"], "sittings[0] must be an object, not 'x'"),
])
def test_a_wrongly_typed_env_json(write_tree: Any, field: str, value: object,
                                  words: str) -> None:
    root, run = _tree(write_tree)
    env_path = run / "env.json"
    env_path.write_text(json.dumps({**json.loads(env_path.read_text()), field: value},
                                   indent=2, sort_keys=True))
    line = next(i for i, text in enumerate(env_path.read_text().splitlines(), 1)
                if text.strip().startswith(f'"{field}"'))
    _refused(root, env_path, line, words)
    ds = _skipped(root, env_path, line, "results kept without an environment")
    assert len(ds.results) == 3 and ds.envs == {}
    analyse(ds)  # the pages' numbers come out without the environment


@pytest.mark.parametrize(("part", "key", "value", "words"), [
    ("cpu", "logical_cpus", "x", "cpu.logical_cpus must be an integer, not str 'x'"),
    ("torch", "version", 5, "torch.version must be a string, not int 5"),
    ("gpus", "name", 5, "gpus[0].name must be a string, not int 5"),
    ("gpus", "total_memory_bytes", True, "gpus[0].total_memory_bytes must be an integer"),
    ("sittings", "sitting", "1", "sittings[0].sitting must be an integer, not str '1'"),
    ("sittings", "code", 7, "sittings[0].code must be a string, not int 7"),
    ("sittings", "wall_s", "9", "sittings[0].wall_s must be a number, not str '9'"),
])
def test_a_wrongly_typed_fact_inside_env_json(write_tree: Any, part: str, key: str,
                                              value: object, words: str) -> None:
    """The nested facts the machine pages read: a hand edit is refused at its own line, not
    shown as written."""
    root, run = _tree(write_tree)
    env_path = run / "env.json"
    env = json.loads(env_path.read_text())
    env.setdefault("sittings", [{"sitting": 1, "code": "ab12", "commit": None}])
    (env[part][0] if part in ("gpus", "sittings") else env[part])[key] = value
    # a key of the same name earlier in the file ("code" under flag_defaults, say) is not it
    env["flag_defaults"] = {"code": 1, "sitting": 1, **env.get("flag_defaults", {})}
    env_path.write_text(json.dumps(env, indent=2, sort_keys=True))
    lines = env_path.read_text().splitlines()
    start = next(i for i, text in enumerate(lines) if text.strip().startswith(f'"{part}"'))
    line = next(i for i, text in enumerate(lines[start:], start + 1)
                if text.strip().startswith(f'"{key}"'))
    _refused(root, env_path, line, words)


def _copy_of(env: dict[str, Any], **over: Any) -> dict[str, Any]:
    """The same run's env.json, copied to another folder (another machine name, or not)."""
    return {**env, **over}


@pytest.mark.parametrize("machine", ["box-b", "box"])
def test_a_copied_run_folder_is_refused_not_taken_for_a_resume(write_tree: Any,
                                                              machine: str) -> None:
    """The same replicate (run id, fingerprint, cell, replicate) in two folders: a copy of a
    run (under another machine's name, or beside the original), never attempts that replace
    each other. Strict: its line; skip_bad: listed, the first folder in path order kept."""
    a = env_for("box", "run-1")
    b = _copy_of(a, machine=machine)
    rows_a = [result_row(a, axes(), i, attempt_id=f"a{i}") for i in range(2)]
    rows_b = [result_row(b, axes(), i, attempt_id=f"a{i}") for i in range(2)]
    root = write_tree([(a, rows_a, [])])
    if machine == "box":  # beside the original, in a folder of another name
        synth.write_run(root / "box" / "run-1-copy", rows_b, synth.samples_for(rows_b), b)
        copy = root / "box" / "run-1-copy" / "results.csv"
    else:
        synth.write_run(root / "box-b" / "run-1", rows_b, synth.samples_for(rows_b), b)
        copy = root / "box-b" / "run-1" / "results.csv"
    first = min(copy, root / "box" / "run-1" / "results.csv")
    later = max(copy, root / "box" / "run-1" / "results.csv")
    words = f"is also in {first}:2; a replicate belongs to one run folder"
    _refused(root, later, 2, words)
    ds = _skipped(root, later, 3, f"is also in {first}:3")
    assert ds.replaced == {}, "a copy is not an attempt a resume replaced"
    assert set(ds.results["source"]) == {first.relative_to(root).as_posix()}
    assert len(ds.results) == 2 and len(ds.samples) == 2 * 3


def test_a_resume_still_replaces_within_its_own_folder(write_tree: Any) -> None:
    env = env_for("box", "run-1")
    rows = [result_row(env, axes(), 0, status="interrupted", seconds=None, attempt_id="a0"),
            result_row(env, axes(), 0, attempt_id="b0")]
    ds = load_reports(write_tree([(env, rows, [])]))
    assert ds.replaced == {"box/run-1/results.csv": 1} and ds.skipped == []
    assert ds.results["attempt_id"].tolist() == ["b0"]


def _runner_env(machine: str, run_id: str) -> dict[str, Any]:
    """An env.json as the runner writes it: with ``bench.workload_version`` and the id its
    facts give (the builders' synthetic ones hash other facts, and carry no ``bench``)."""
    from bench.fingerprint import fingerprint_id

    env = {**env_for(machine, run_id), "bench": {"version": "0.1.0", "workload_version": 3}}
    env["fingerprint_id"] = fingerprint_id(env)
    return env


def test_an_env_json_edited_by_hand_is_refused(write_tree: Any) -> None:
    """A torch version edited in env.json, its id left: ``--resume`` refuses it, and so does
    the report, naming both ids, instead of showing torch 2.13.0 as measured."""
    env = _runner_env("box", "run-1")
    rows = [result_row(env, axes(), i, attempt_id=f"a{i}") for i in range(2)]
    root = write_tree([(env, rows, [])])
    assert len(load_reports(root).results) == 2, "the runner's own file loads"
    env_path = root / "box" / "run-1" / "env.json"
    edited = json.loads(env_path.read_text())
    edited["torch"]["version"] = "2.13.0"
    env_path.write_text(json.dumps(edited, indent=2, sort_keys=True))
    from bench.fingerprint import fingerprint_id

    own = fingerprint_id(edited)
    line = next(i for i, text in enumerate(env_path.read_text().splitlines(), 1)
                if text.strip().startswith('"fingerprint_id"'))
    words = (f"fingerprint_id '{env['fingerprint_id']}' is not the '{own}' its own facts give "
             "(fingerprint definition 2)")
    _refused(root, env_path, line, words)
    ds = _skipped(root, env_path, line, "results kept without an environment")
    assert ds.envs == {}, "torch 2.13.0 is never shown"
