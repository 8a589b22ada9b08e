"""The typed task and record: what one side writes, the other reads back, field for field."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from bench.run.plan.matrix import Cell, Settings
from bench.run.protocol import (
    FLAG_COLUMNS,
    METRIC_COLUMNS,
    Flags,
    Metrics,
    Probe,
    ProtocolError,
    Record,
    Repro,
    Run,
    Sample,
    Task,
    Timeline,
    decode,
    encode,
    new_task,
    warm_for,
)
from bench.schema import EFFECTIVE_COLUMNS, FIGURE_COLUMNS


def _task(tmp_path: Path) -> Task:
    cell = Cell(model="resnet50", device="cuda", cudnn_benchmark="on", cpu_threads=None)
    return replace(new_task("repro", cell, Settings(timeout_s=12.5), 2, tmp_path, "b", "hang@x"),
                   flops_per_sample=4.1e9, cache_dir="/c", repro_ref="/r.pt")


def test_a_task_reads_back_as_the_same_task(tmp_path: Path) -> None:
    task = _task(tmp_path)
    back = Task.from_json(task.to_json())
    assert back == task
    assert isinstance(back.cell, Cell) and isinstance(back.settings, Settings)
    assert back.cell.cell_id == task.cell.cell_id  # the identity survives the trip
    assert back.result_path == str(tmp_path / f"repro-{task.cell.cell_id}-r2-b.result.json")
    assert back.path.name.endswith(".task.json")


def test_a_record_reads_back_with_typed_parts() -> None:
    record = Record(
        flags=Flags(eff_num_threads="4", eff_conv_math="tf32"),
        metrics=Metrics(steady_median_s=0.25, steady_iters=12, steady_ci_rel=float("inf")),
        work_unit="flop", samples=[Sample("cold", 0, 8, 224, 1.5), Sample("steady", 1, 8, 224,
                                                                          0.25)],
        notes=["flop count failed: x"], repro=Repro(False, None, 3),
        probe=Probe({"machine": "box", "cpu": {"affinity": 2}}, ["resnet50"], True),
        cache_start_bytes=4096, timeline=Timeline(entered=1.0, build_start=2.0, ended=3.0))
    back = Record.from_json(record.to_json())
    assert back == record
    assert all(isinstance(s, Sample) for s in back.samples)
    assert back.samples[1].seconds == 0.25 and back.samples[1].phase == "steady"
    assert isinstance(back.metrics.steady_iters, int)  # "12" in the CSV, not "12.0"


def test_an_empty_record_is_a_plain_ok() -> None:
    back = Record.from_json(Record().to_json())
    assert (back.status, back.flags, back.repro, back.probe) == ("ok", None, None, None)
    assert back.metrics == Metrics() and back.samples == []


def test_record_parts_are_the_result_columns_they_fill() -> None:
    assert FLAG_COLUMNS == EFFECTIVE_COLUMNS
    assert (*METRIC_COLUMNS, "repro_max_abs_diff") == FIGURE_COLUMNS


@pytest.mark.parametrize(("text", "problem"), [
    ("not json", "not JSON"),
    ("[1, 2]", "expected an object, got list"),
    ('{"status": "ok", "eff": {}}', "unknown field 'eff'"),
    ('{"status": "great"}', "unknown status 'great'"),
    ('{"samples": [["cold", 0, 1, 224, 0.5]]}', "Sample: expected an object"),
    ('{"metrics": {"steady_median": 1.0}}', "Metrics"),
])
def test_a_record_from_other_code_is_refused_with_a_reason(text: str, problem: str) -> None:
    with pytest.raises(ProtocolError, match=problem):
        Record.from_json(text)


def test_a_task_without_its_cell_or_with_an_unknown_op_is_refused(tmp_path: Path) -> None:
    data = json.loads(_task(tmp_path).to_json())
    with pytest.raises(ProtocolError, match="unknown op 'train'"):
        Task.from_json(json.dumps({**data, "op": "train"}))
    del data["cell"]
    with pytest.raises(ProtocolError, match="cell"):
        Task.from_json(json.dumps(data))


def test_only_a_compiled_cpu_cell_has_the_server_import_the_compiler_first(
        tmp_path: Path) -> None:
    """The fork server imports torch.compile's front end for a compiled CPU cell, never for
    an eager one nor for CUDA (it must not touch the driver); the wish travels in ``Run``."""
    def warm(**kw: str) -> str:
        return warm_for(new_task("measure", Cell(model="resnet18", **kw), Settings(), 0,
                                 tmp_path))

    assert [warm(device="cpu", compile="default"), warm(device="cpu", compile="off"),
            warm(device="cuda", compile="default")] == ["compile", "", ""]
    assert decode(encode(Run("/t.json", 5.0, "compile"))) == Run("/t.json", 5.0, "compile")
    assert decode(b'{"tag": "run", "task": "/t.json", "timeout_s": 5}').warm == ""  # type: ignore[union-attr]
