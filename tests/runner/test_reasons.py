"""Why cells were not measured (``bench.run.store.reasons``): the rows of the cells with no ok
replicate, grouped by distinct reason, and the lines ``bench run`` and ``bench advise`` end
with; and that the hints name only options their command has."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from bench import cli
from bench.commands import unmeasured
from bench.run.plan import profiles
from bench.run.store import reasons
from bench.run.store.store import CsvAppender
from bench.schema import RESULT_COLUMNS, Status

RESULTS = Path("/runs/r1/results.csv")


def _row(cell: str, replicate: int, status: Status, reason: str = "", **over: Any
         ) -> dict[str, str]:
    row = {"study": "s", "cell_id": cell, "cell_name": f"cell {cell}", "kind": "model",
           "replicate": str(replicate), "status": status.value, "reason": reason}
    row.update({k: str(v) for k, v in over.items()})
    return row


OOM = "OutOfMemoryError: CUDA out of memory. Tried to allocate {} GiB (GPU 0; {} GiB total)"
ROWS = [
    _row("a", 0, Status.OK),
    _row("a", 1, Status.OOM, OOM.format("1.50", 79)),  # a has an ok replicate: measured
    _row("b", 0, Status.OOM, OOM.format("2.00", 79)),
    _row("b", 1, Status.OOM, OOM.format("2.00", 79)),
    _row("c", 0, Status.OOM, OOM.format("8.25", 39)),
    _row("d", 0, Status.TIMEOUT, "no result after 300 s; process group killed"),
    _row("e", 0, Status.ERROR, "ValueError: bad shape\nTraceback follows\nmore"),
    _row("f", 0, Status.SKIPPED, "no-cuda"),
]


def test_one_reason_met_in_many_cells_is_one_group_whatever_its_numbers() -> None:
    found = reasons.unmeasured(ROWS)
    assert (found.cells, found.missing) == (6, 5)
    got = [(r.status, r.cells, r.replicates) for r in found.reasons]
    assert got == [(Status.OOM, 2, 3), (Status.TIMEOUT, 1, 1), (Status.ERROR, 1, 1),
                   (Status.SKIPPED, 1, 1)], "the most cells first, then Status's order"
    oom = found.reasons[0]
    assert oom.text == OOM.format("2.00", 79), "the first row's own text"
    assert [w for w, _ in oom.examples] == ["s: cell b #r0", "s: cell b #r1", "s: cell c #r0"]
    assert oom.examples[0][1] == "model-b-r0.log"  # the name runner._keep_log gives it
    assert found.reasons[2].text == "ValueError: bad shape", "the first line only"


@pytest.mark.parametrize(("one", "other", "same"), [
    ("no result after 3 s; process group killed", "no result after 120.5 s; process group "
     "killed", True),
    ("RuntimeError: at 0x7f3a2c001234: bad", "RuntimeError: at 0x55d0aa: bad", True),
    ("FileNotFoundError: /tmp/w/repro-1beac215d7.pt", "FileNotFoundError: /tmp/w/repro-"
     "c36ca417f8.pt", True),
    ("ValueError: bad shape", "ValueError: bad dtype", False),
    ("exit code 3 without a result", "SIGSEGV without a result", False),
])
def test_the_key_sets_aside_only_what_varies_between_cells(one: str, other: str,
                                                           same: bool) -> None:
    assert (reasons.key_of(Status.CRASH, one) == reasons.key_of(Status.CRASH, other)) is same
    assert reasons.key_of(Status.CRASH, one) != reasons.key_of(Status.ERROR, one)


def test_a_replicate_counts_by_its_last_attempt() -> None:
    rows = [_row("a", 0, Status.INTERRUPTED, "SIGTERM during the replicate"),
            _row("a", 0, Status.OK),  # resumed: a is measured
            _row("b", 0, Status.OK),
            _row("b", 0, Status.CRASH, "SIGKILL without a result"),  # measured again: failed
            _row("c", 0, Status.INTERRUPTED, "SIGINT during the replicate"),
            _row("c", 0, Status.INTERRUPTED, "SIGINT during the replicate"),
            _row("c", 0, Status.OK, kind="repro")]  # its re-run check is a cell of its own
    found = reasons.unmeasured(rows)
    assert (found.cells, found.missing) == (4, 2)
    assert [(r.status, r.cells, r.replicates) for r in found.reasons] == [
        (Status.CRASH, 1, 1), (Status.INTERRUPTED, 1, 1)]


def test_every_cell_measured_says_nothing() -> None:
    found = reasons.unmeasured([_row("a", 0, Status.OK), _row("a", 1, Status.OOM, "x")])
    assert found.missing == 0 and reasons.lines(found, unmeasured.RUN, RESULTS) == []
    assert reasons.unmeasured([]).cells == 0


def test_each_line_says_the_reason_an_example_its_log_and_what_to_do() -> None:
    hints = {Status.OOM: "a smaller batch", Status.SKIPPED: "elsewhere"}
    out = reasons.lines(reasons.unmeasured(ROWS), hints, RESULTS, kept={"model-b-r1.log"})
    assert out[0] == "not measured: 5 of 6 cells (no replicate ended ok), for 4 reasons:"
    assert out[1] == (f'  out of memory: 2 cells, 3 replicates, e.g. s: cell b #r1: '
                      f'"{OOM.format("2.00", 79)}" (log: /runs/r1/logs/model-b-r1.log); '
                      f'to do: a smaller batch'), "the example whose log was kept"
    assert out[2] == ('  timed out: 1 cell, 1 replicate, e.g. s: cell d #r0: "no result '
                      'after 300 s; process group killed"'), "no hint, no log: neither said"
    assert out[4] == ('  skipped (cannot run here): 1 cell, 1 replicate, e.g. s: cell f #r0: '
                      '"no-cuda" (no CUDA device on this machine); to do: elsewhere')
    assert len(out) == 5


def test_the_lines_stop_at_five_reasons_and_say_where_the_rest_are() -> None:
    rows = [_row(f"c{i}", 0, Status.ERROR, f"Error{chr(65 + i)}: boom") for i in range(8)]
    out = reasons.lines(reasons.unmeasured(rows), unmeasured.RUN, RESULTS)
    assert out[0].startswith("not measured: 8 of 8 cells") and out[0].endswith("8 reasons:")
    assert [line.split('"')[1] for line in out[1:6]] == [f"Error{c}: boom" for c in "ABCDE"]
    assert out[6:] == [f"  and 3 more reasons, see {RESULTS} (its status and reason columns)"]
    assert len(reasons.lines(reasons.unmeasured(rows[:6]), {}, RESULTS)) == 7  # 5 and "1 more"
    assert reasons.lines(reasons.unmeasured(rows[:6]), {}, RESULTS)[-1].startswith(
        "  and 1 more reason, see ")


def test_a_long_reason_is_cut() -> None:
    out = reasons.lines(reasons.unmeasured([_row("a", 0, Status.ERROR, "E: " + "x" * 400)]),
                        {}, RESULTS)
    assert '"E: ' + "x" * (reasons.TEXT_CHARS - 6) + '..."' in out[1]


def test_ending_lines_reads_the_run_folder(tmp_path: Path) -> None:
    rows = [{**dict.fromkeys(RESULT_COLUMNS, ""), "schema_version": "6", **r} for r in ROWS]
    assert reasons.ending_lines(tmp_path, unmeasured.RUN) == [], "no results file: nothing"
    CsvAppender(tmp_path / "results.csv", RESULT_COLUMNS).append(rows)
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "model-e-r0.log").write_text("replicate ended: error\n")
    out = reasons.ending_lines(tmp_path, unmeasured.RUN)
    assert len(out) == 5 and out[0].startswith("not measured: 5 of 6 cells")
    assert f"(log: {tmp_path / 'logs' / 'model-e-r0.log'})" in out[3]
    assert "log:" not in out[1], "no log kept for b and c"


def _options(command: str) -> set[str]:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert isinstance(sub.choices, dict)
    return {o for a in sub.choices[command]._actions for o in a.option_strings}


@pytest.mark.parametrize(("command", "hints"), [
    ("run", unmeasured.RUN), ("advise", unmeasured.ADVISE),
    ("advise", unmeasured.feed_hints(300.0))])
def test_the_hints_name_only_options_and_settings_that_exist(command: str,
                                                             hints: dict[str, str]) -> None:
    assert set(hints) == {s.value for s in Status} - {Status.OK}
    options = _options(command) | _options("run")  # advise's timeout hint sends to bench run
    named = {o for text in hints.values() for o in re.findall(r"--[a-z][a-z-]*", text)}
    assert named and named <= options, named - options
    settings = {"timeout_s", "batch_size", "resolution", "input_shape"}
    said = {s for text in hints.values() for s in re.findall(r"\b[a-z]+_[a-z_]+\b", text)}
    assert said <= settings, said - settings
    profile = profiles.parse_profile({"defaults": {"model": "resnet18", "timeout_s": 5.0,
                                                   "batch_size": 2, "resolution": 32},
                                      "studies": {"s": {}}}, "test")
    assert profile.studies[0].settings.timeout_s == 5.0  # a setting the profile takes


def test_advise_images_not_measured_answers_with_the_reasons() -> None:
    from types import SimpleNamespace

    from bench.commands import feed

    none = SimpleNamespace(demand=None, delivered=None)
    why = reasons.lines(reasons.unmeasured(ROWS), unmeasured.feed_hints(300.0), RESULTS)
    text = feed.answer_text("resnet50", "train", 16, "cpu", none, 4, 1.0, why)
    assert text.splitlines() == ["resnet50 train at batch 16 on cpu: not measured; why:", *why]
    assert "say why" not in feed.answer_text("resnet50", "train", 16, "cpu", none, 4, 1.0)
