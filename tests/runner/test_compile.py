"""torch.compile as an axis: the profile's values, the child's compile figures, and real CPU
compiles through the runner (a tiny user model, compiled by Inductor with the C++ compiler)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bench import migrations, schema
from bench.run.child import breaks, compiling, factory
from bench.run.plan.matrix import Cell, ProfileError
from bench.run.plan.profiles import parse_profile

from .conftest import ROOT, read_csv, run_cli


def _cells(**study: object) -> list[Cell]:
    data = {"defaults": {"device": "cpu", "model": "resnet18"}, "studies": {"s": study}}
    return list(parse_profile(data, "t").studies[0].cells)


def test_eager_cells_keep_their_ids_and_dynamic_only_applies_when_compiled() -> None:
    eager = Cell(device="cpu", model="resnet18", cudnn_benchmark="n/a",
                 cudnn_deterministic="n/a", cudnn_benchmark_limit=None)
    cells = _cells(compile=["off", "default"], compile_dynamic=["auto", True, False])
    assert [(c.compile, c.compile_dynamic) for c in cells] == [
        ("off", "auto"), ("default", "auto"), ("default", "true"), ("default", "false")]
    assert cells[0].cell_id == eager.cell_id  # compile=off leaves an eager cell's id alone
    assert len({c.cell_id for c in cells}) == 4
    assert "compile=default dynamic=true" in cells[2].name and "compile" not in cells[0].name


def test_an_unknown_mode_names_the_valid_ones() -> None:
    with pytest.raises(ProfileError, match="unknown compile 'fast'; valid choices: off, "
                                           "default, reduce-overhead, max-autotune"):
        _cells(compile="fast")


def test_ceilings_are_never_compiled() -> None:
    data = {"studies": {"c": {"kind": "ceiling", "model": "copy", "compile": "default"}}}
    (cell,) = parse_profile(data, "t").studies[0].cells
    assert cell.compile == "off"


def test_a_version_2_row_migrates_to_an_eager_one() -> None:
    row = migrations.migrate({"schema_version": "2", "model": "resnet50"})
    assert row["compile"] == "off" and row["compile_dynamic"] == "auto"
    assert row["compile_time_s"] == "" and row["model_source"] == ""
    assert row["schema_version"] == str(schema.SCHEMA_VERSION)


def test_a_version_3_row_keeps_its_break_figure_as_the_steady_states_and_says_so() -> None:
    """Version 3 counted the steady state's breaks only: a reader of the migrated row is never
    told "0 breaks" of a cold pass nobody counted."""
    compiled = migrations.migrate({"schema_version": "3", "compile": "default", "graph_breaks": "0",
                               "compiles": "1", "notes": "no FLOP count"})
    assert (compiled["graph_breaks"], compiled["steady_graph_breaks"], compiled["graphs"],
            compiled["graph_break_reasons"]) == ("", "0", "", "")
    assert compiled["notes"] == f"no FLOP count; {migrations.V3_BREAKS_NOTE}"
    assert compiled["schema_version"] == str(schema.SCHEMA_VERSION)
    # an eager row (or a failed one) had no figure, and gets no note
    eager = migrations.migrate({"schema_version": "3", "compile": "off", "graph_breaks": "",
                            "notes": ""})
    assert eager["steady_graph_breaks"] == eager["graph_breaks"] == eager["notes"] == ""
    older = migrations.migrate({"schema_version": "2", "model": "resnet50", "notes": ""})
    assert older["steady_graph_breaks"] == older["graphs"] == older["notes"] == ""


_ITEM = ("Unsupported Tensor.item() call with capture_scalar_outputs=False\n  Explanation: Dynamo "
         "does not support tracing `Tensor.item()` with config.capture_scalar_outputs=False.\n"
         "  Hint: Set `torch._dynamo.config.capture_scalar_outputs = True`\n\n For more details "
         "about this graph break, please visit: https://example.org/gb/gb0124.html")
_PRINT = ("Failed to trace builtin operator\n  Explanation: Dynamo does not know how to trace "
          "builtin operator `print` with argument types ['str'] (has_kwargs False)\n  Hint: "
          "Avoid calling builtin `print`; use an alternative.\n\n see .../gb/gb0059.html")


def test_figures_are_differences_of_torch_counters() -> None:
    start = compiling.Snapshot(1.0, 2, 1, ((_ITEM, 1),), 2, ())
    cold = compiling.Snapshot(9.5, 4, 3, ((_ITEM, 2), (_PRINT, 1)), 4, ())
    end = compiling.Snapshot(10.0, 5, 4, ((_ITEM, 3), (_PRINT, 1)), 5, ())
    got = compiling.figures(start, cold, end)
    # the whole replicate's compile time, compiles, graphs and breaks; the steady state's
    # recompiles and breaks after the cold pass
    assert (got.compile_time_s, got.compiles, got.recompiles, got.graphs) == (9.0, 3, 1, 3)
    assert (got.graph_breaks, got.steady_graph_breaks) == (3, 1)
    assert got.graph_break_reasons == (
        "2x Unsupported Tensor.item() call with capture_scalar_outputs=False (gb0124); "
        "1x Failed to trace builtin operator: `print` (gb0059)")
    assert got.notes == ()
    unknown = compiling.figures(*(compiling.Snapshot(None, None),) * 3)
    assert unknown.compile_time_s is None and unknown.recompiles is None
    assert unknown.graph_breaks is unknown.steady_graph_breaks is unknown.graphs is None
    assert unknown.graph_break_reasons is None
    assert len(unknown.notes) == 2  # the row says what this torch did not report
    assert "graph breaks" in unknown.notes[1]


def test_a_reason_is_torchs_first_line_with_the_name_it_quotes_and_its_page() -> None:
    assert breaks.short_reason(_PRINT) == "Failed to trace builtin operator: `print` (gb0059)"
    # the first line names it already: nothing added
    assert breaks.short_reason(_ITEM) == ("Unsupported Tensor.item() call with "
                                          "capture_scalar_outputs=False (gb0124)")
    # an older torch's one-line reason is kept as it is
    assert breaks.short_reason("call_function BuiltinVariable(print) [] {}") == (
        "call_function BuiltinVariable(print) [] {}")
    # two messages that shorten alike (other argument types) are one reason
    other = _PRINT.replace("['str']", "['int']")
    assert breaks.tally([(_PRINT, 1), (_ITEM, 1), (other, 2)]) == {
        "Failed to trace builtin operator: `print` (gb0059)": 3,
        "Unsupported Tensor.item() call with capture_scalar_outputs=False (gb0124)": 1}


def test_the_reasons_column_keeps_the_top_three_on_one_line_and_reads_back() -> None:
    counts = {"a; b\nc": 1, "d": 4, "e": 1, "f": 2}
    text = schema.break_reasons(counts)
    assert text == "4x d; 2x f; 1x a, b c"  # most frequent first, ties in the order met
    assert schema.parse_break_reasons(text) == [(4, "d"), (2, "f"), (1, "a, b c")]
    long = schema.break_reasons({"x" * 500: 1})
    assert len(long) == len("1x ") + schema.BREAK_REASON_CHARS and long.endswith("...")
    assert schema.break_reasons({}) == "" and schema.parse_break_reasons("") == []
    with pytest.raises(schema.SchemaError, match="is not 'COUNTx reason'"):
        schema.parse_break_reasons("two breaks")


def test_a_torch_without_the_counters_leaves_the_columns_empty_with_a_note(
        monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    bare = SimpleNamespace(calculate_time_spent=lambda: {"total_wall_time": 1.5})
    monkeypatch.setattr(torch._dynamo, "utils", bare)  # a torch that keeps no counters
    snap = compiling.snapshot(torch)
    assert (snap.time_s, snap.frames, snap.graphs, snap.breaks) == (1.5, None, None, None)
    got = compiling.figures(snap, snap, snap)
    assert (got.compiles, got.graph_breaks, got.steady_graph_breaks, got.graphs,
            got.graph_break_reasons) == (None,) * 5
    assert got.notes == ("compile counts (compiles, recompiles, graphs, graph breaks): this "
                         "torch does not report them",)


@pytest.mark.parametrize("dynamic", schema.COMPILE_DYNAMIC)
@pytest.mark.parametrize("mode", [m for m in schema.COMPILE_MODES if m != "off"])
def test_the_mode_and_dynamic_reach_torch_compile(
        monkeypatch: pytest.MonkeyPatch, mode: str, dynamic: str) -> None:
    """What the child hands ``torch.compile``: the cell's mode (``default`` is torch's own
    ``mode=None``) and its ``dynamic=`` as torch spells it (``auto`` is None)."""
    calls: list[tuple[tuple[object, ...], dict[str, object]]] = []
    torch = SimpleNamespace(compile=None)

    def fake_compile(*args: object, **kwargs: object) -> object:
        calls.append((args, kwargs))
        return "compiled"

    monkeypatch.setattr(torch, "compile", fake_compile)
    model = object()
    cell = Cell(device="cpu", compile=mode, compile_dynamic=dynamic)
    assert compiling.wrap(torch, model, cell) == "compiled"
    (args, kwargs), = calls
    assert args == (model,)
    expected = {"auto": None, "true": True, "false": False}[dynamic]
    assert kwargs.pop("dynamic") is expected
    assert kwargs.pop("mode", None) == (None if mode == "default" else mode)
    assert kwargs == {}  # no backend, no options: Inductor with the mode's own settings
    # the compile-error fault swaps the backend for one that raises, and keeps dynamic=
    calls.clear()
    compiling.wrap(torch, model, cell, fail=True)
    (_, kwargs), = calls
    assert kwargs["backend"] is compiling._failing_backend and kwargs["dynamic"] is expected
    assert compiling.wrap(torch, model, Cell(device="cpu")) is model  # eager: not compiled
    assert len(calls) == 1


def _script(folder: Path, name: str, body: str) -> Path:
    """An executable shell script ``folder/name``: a stand-in compiler."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def _real_cxx() -> str | None:
    return next(filter(None, map(shutil.which, ("g++", "c++", "clang++"))), None)


#: Skipped without a C++ compiler, except under CI (``CI`` set), which installs one: there a
#: missing compiler fails the test instead of hiding it.
needs_cxx = pytest.mark.skipif(
    not os.environ.get("CI") and _real_cxx() is None,
    reason="torch.compile on the CPU needs a C++ compiler (install g++)")


def _inductor_search(*cxx: str | None) -> contextlib.AbstractContextManager[object]:
    """The compilers the installed Inductor searches (what torch read from ``CXX``) set to
    ``cxx`` for a while (by its own ``patch``: monkeypatch's undo loses the setting)."""
    config = pytest.importorskip("torch._inductor.config")
    return config.patch({"cpp.cxx": cxx})  # type: ignore[no-any-return]


def test_a_cpu_whose_cxx_compiler_is_missing_or_broken_is_skipped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    torch = SimpleNamespace(compile=lambda m, **kw: m)
    cell = Cell(device="cpu", compile="default")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.delenv("CXX", raising=False)
    with _inductor_search(None, "g++"):
        assert compiling.skip_reason(torch, Cell(device="cpu")) is None  # eager needs none
        missing = compiling.skip_reason(torch, cell)
        _script(tmp_path / "bin", "g++", "echo 'g++: broken' >&2; exit 1")  # on PATH, but fails
        broken = compiling.skip_reason(torch, cell)
    assert broken == ("no-cxx-compiler: torch.compile on the CPU needs a working C++ "
                      "compiler; `g++ --version`: exit status 1: g++: broken")
    assert missing == ("no-cxx-compiler: torch.compile on the CPU needs a working C++ "
                       "compiler; `g++ --version`: not found")


def test_a_cxx_compiler_that_answers_but_cannot_build_is_no_compiler(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _script(tmp_path / "bin", "g++",
                   '[ "$1" = --version ] && exit 0; echo "ld: cannot find crt1.o" >&2; exit 1')
    monkeypatch.delenv("CXX", raising=False)
    with _inductor_search(None, str(fake)):
        reason = compiling.skip_reason(SimpleNamespace(compile=None), Cell(compile="default"))
    assert reason is not None and reason.startswith("no-cxx-compiler:")
    assert reason.endswith(f"{fake} cannot build a small shared library "
                           "(exit status 1: ld: cannot find crt1.o)")


@needs_cxx
def test_the_compiler_checked_is_inductors_own(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Inductor uses ``CXX`` (as ``config.cpp.cxx``), not whatever g++ is on PATH."""
    real = _real_cxx()
    assert real is not None
    wrapper = _script(tmp_path / "cxx", "my-cxx", f'exec {real} "$@"')
    _script(tmp_path / "bin", "g++", "exit 1")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    monkeypatch.delenv("CXX", raising=False)
    torch = SimpleNamespace(compile=None)
    with _inductor_search(None, str(wrapper)):
        assert compiling.skip_reason(torch, Cell(compile="default")) is None
    with _inductor_search(None, "g++"):  # CXX unset: Inductor's g++, the broken one
        assert compiling.skip_reason(torch, Cell(compile="default")) is not None
    # and what it searches is what the installed torch's Inductor reads from CXX
    code = "from bench.run.child import compiling; print(compiling.inductor_cxx())"
    env = {**os.environ, "CXX": str(wrapper), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True, timeout=120).stdout
    assert out.strip() == repr((None, str(wrapper)))


class InvalidCxxCompiler(RuntimeError):
    """Named as Inductor's, which ``guard`` knows by its name (its module moved over time)."""


def test_a_compile_that_finds_no_cxx_compiler_after_all_is_skipped() -> None:
    def step(i: int) -> None:
        try:
            raise InvalidCxxCompiler("No working C++ compiler found in cpp.cxx: (None, 'g++')")
        except InvalidCxxCompiler as exc:
            raise RuntimeError("InductorError: InvalidCxxCompiler: ...") from exc

    with pytest.raises(factory.NotApplicable) as got:
        compiling.guard(Cell(compile="default"), step)(0)
    assert str(got.value) == ("no-cxx-compiler: Inductor found no working C++ compiler "
                              "(InvalidCxxCompiler: No working C++ compiler found in cpp.cxx: "
                              "(None, 'g++'))")

    def other(i: int) -> None:
        raise ValueError("an unsupported op")

    with pytest.raises(ValueError):  # any other failure stays an error
        compiling.guard(Cell(compile="default"), other)(0)
    assert compiling.guard(Cell(), other) is other  # eager steps are left alone


def test_graph_breaks_count_the_cold_pass_and_the_steady_state_apart() -> None:
    """A model that breaks its graph: the cold pass's compile meets the break (the model's own),
    a steady state of the same shape meets none, and a new shape's recompile meets it again."""
    torch = pytest.importorskip("torch")

    def f(x: object) -> object:
        y = x + 1  # type: ignore[operator]
        torch._dynamo.graph_break()
        return y * 2

    fn = torch.compile(f, backend="eager", dynamic=False)  # Dynamo's counters, no Inductor
    try:
        start = compiling.snapshot(torch)
        fn(torch.ones(2))  # the cold pass
        cold = compiling.snapshot(torch)
        fn(torch.ones(2))
        steady = compiling.figures(start, cold, compiling.snapshot(torch))
        assert (steady.graph_breaks, steady.graphs) == (1, 2)
        assert (steady.recompiles, steady.steady_graph_breaks) == (0, 0)
        fn(torch.ones(3))  # a new shape in the steady state
        grown = compiling.figures(start, cold, compiling.snapshot(torch))
        assert grown.recompiles and grown.steady_graph_breaks == 1
        assert (grown.graph_breaks, grown.graphs) == (2, 4)
        (count, reason), = schema.parse_break_reasons(grown.graph_break_reasons or "")
        assert count == 2 and "graph_break()" in reason, reason
    finally:
        torch._dynamo.reset()


class _ThreeBreaks:
    """A forward with three kinds of break: a ``print``, a data-dependent ``.item()`` branch
    and a C builtin Dynamo cannot trace (``os.getpid``); with a positive input, three graphs
    (the sum, the branch's product, the linear layer)."""

    @staticmethod
    def build(torch: Any) -> Any:
        class Model(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.linear = torch.nn.Linear(4, 2)

            def forward(self, x: Any) -> Any:
                print("batch of", x.shape[0])
                if x.sum().item() > 0:
                    x = x * 2
                os.getpid()
                return self.linear(x)

        return Model()


def test_a_real_compile_counts_and_names_the_breaks_torch_reports() -> None:
    """Dynamo's counters, read as a replicate reads them, for three kinds of break. Breaks,
    graphs and compiles are Dynamo's whatever backend compiles the graphs, so the ``eager``
    backend stands in for Inductor here; a run through Inductor's C++ kernels has its breaks
    counted end to end below (``test_a_model_with_breaks_has_them_counted_...``)."""
    torch = pytest.importorskip("torch")

    model = _ThreeBreaks.build(torch).eval()
    fn = torch.compile(model, backend="eager")
    x = torch.ones(2, 4)
    torch._dynamo.reset()
    try:
        with torch.no_grad():
            start = compiling.snapshot(torch)
            fn(x)
            cold = compiling.snapshot(torch)
            fn(x)
            fn(x)
            got = compiling.figures(start, cold, compiling.snapshot(torch))
    finally:
        torch._dynamo.reset()
    assert (got.graph_breaks, got.steady_graph_breaks, got.graphs) == (3, 0, 3)
    assert got.recompiles == 0 and got.compiles and got.compiles >= 4  # and 3 resumed in
    assert schema.parse_break_reasons(got.graph_break_reasons or "") == [
        (1, "Failed to trace builtin operator: `print` (gb0059)"),
        (1, "Unsupported Tensor.item() call with capture_scalar_outputs=False (gb0124)"),
        (1, "Attempted to call function marked as skipped: `posix.getpid.` (gb0007)")]


def test_a_frame_dynamo_gives_up_on_is_named_in_the_notes() -> None:
    """A break in a loop cannot be resumed from: Dynamo runs the frame eagerly and counts no
    break and no graph, so the row's notes say why its figures are 0."""
    torch = pytest.importorskip("torch")

    def f(x: Any) -> Any:
        for i in range(2):
            x = x + 1
            print(i)
        return x

    fn = torch.compile(f, backend="eager")
    torch._dynamo.reset()
    try:
        start = compiling.snapshot(torch)
        fn(torch.ones(2))
        end = compiling.snapshot(torch)
    finally:
        torch._dynamo.reset()
    got = compiling.figures(start, end, end)
    assert (got.graph_breaks, got.graphs, got.graph_break_reasons) == (0, 0, "")
    assert got.notes == ("torch.compile: Dynamo gave up on 1 frame(s), which ran eagerly, with "
                         "no graph or break counted (Failed to trace builtin operator: `print` "
                         "(gb0059))",)


_PROFILE = """
[defaults]
device = "cpu"
model = "tests/advise/model.py:build"
input_shape = "3,32,32"
resolution = 32
batch_size = 2
replicates = 1
warmup_iters = 1
min_iters = 3
min_time_s = 0.01
max_time_s = 0.2
timeout_s = 240

[studies.c]
mode = "infer"
compile = {compile}
"""

#: The small model of tests/advise/model.py, whose factory also writes down, from inside each
#: replicate's process, the folder its kernel caches were pointed at and every replicate cache
#: folder beside it at that moment.
_WATCHING_MODEL = """
import json
import os
from pathlib import Path

from torch import nn

LOG = {log!r}


def build() -> nn.Module:
    mine = Path(os.environ["TORCHINDUCTOR_CACHE_DIR"]).parent
    if mine.name.endswith(".cache"):  # a replicate (the probe has no folder of its own)
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps({{"mine": str(mine), "present": sorted(
                p.name for p in mine.parent.glob("*.cache"))}}) + "\\n")
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10),
    )
"""


@pytest.mark.e2e
@needs_cxx
def test_a_tiny_model_compiles_on_the_cpu_with_its_caches_in_the_replicate_folder(
        tmp_path: Path) -> None:
    log = tmp_path / "caches.jsonl"
    model = tmp_path / "watching.py"
    model.write_text(_WATCHING_MODEL.format(log=str(log)))
    profile = tmp_path / "c.toml"
    profile.write_text(_PROFILE.format(compile='["off", "default"]').replace(
        "tests/advise/model.py:build", f"{model}:build"))
    outside = tmp_path / "user-cache"  # where Inductor would write without the per-replicate one
    scratch = tmp_path / "tmp"  # the runner's scratch folder, replicate caches included
    scratch.mkdir()
    out = tmp_path / "run"
    proc = run_cli("run", "--profile", str(profile), "--out", str(out),
                   env={"TORCHINDUCTOR_CACHE_DIR": str(outside / "inductor"),
                        "TRITON_CACHE_DIR": str(outside / "triton"), "TMPDIR": str(scratch)})
    assert proc.returncode == 0, proc.stderr
    eager, compiled = read_csv(out / "results.csv")
    assert (eager["compile"], compiled["compile"]) == ("off", "default")
    assert eager["status"] == compiled["status"] == "ok", compiled["reason"]
    assert eager["compile_time_s"] == eager["compiles"] == ""
    assert float(compiled["compile_time_s"]) > 0
    assert int(compiled["compiles"]) >= 1
    assert compiled["recompiles"] == "0" and compiled["graph_breaks"] == "0"
    # a model without breaks: one graph, no reasons
    assert (compiled["steady_graph_breaks"], compiled["graphs"]) == ("0", "1")
    assert compiled["graph_break_reasons"] == "" and compiled["notes"] == ""
    assert eager["graphs"] == eager["graph_breaks"] == eager["steady_graph_breaks"] == ""
    # the cold pass is where it compiled, and the compiled code went to the replicate's folder
    assert float(compiled["cold_pass_s"]) >= 0.9 * float(compiled["compile_time_s"])
    assert float(compiled["kernel_cache_end_bytes"]) > 0
    assert eager["kernel_cache_end_bytes"] == "0"
    assert not any(p.is_file() for p in outside.rglob("*"))
    # each replicate ran in a cache folder of its own under the scratch folder, and found the
    # earlier replicate's folder removed: only its own was there
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(seen) == 2, seen
    folders = [Path(s["mine"]) for s in seen]
    assert len(set(folders)) == 2
    assert all(scratch in f.parents for f in folders)
    assert [s["present"] for s in seen] == [[f.name] for f in folders]
    # and nothing is left of them, nor of the scratch folder, once the run is over
    assert not any(f.exists() for f in folders)
    assert not list(scratch.glob("torch-knobs-*"))


@pytest.mark.e2e
@needs_cxx
def test_a_model_with_breaks_has_them_counted_and_named_in_its_row(
        advised_breaks: tuple[str, Path]) -> None:
    """The model's breaks (``tests/advise/breaking.py``: a ``print`` and an ``.item()`` branch)
    are met in the cold pass's compile, and its rows count them. The run is ``bench advise``'s
    with ``--knobs torch.compile``, shared with its test: eager and compiled cells, real
    replicates of each."""
    _, out = advised_breaks
    rows = read_csv(out / "results.csv")
    eager = [r for r in rows if r["compile"] == "off"]
    compiled = [r for r in rows if r["compile"] == "default"]
    assert eager and compiled and len(eager) + len(compiled) == len(rows)
    assert all(r["status"] == "ok" for r in rows), [r["reason"] for r in rows]
    for r in eager:
        assert r["graph_breaks"] == r["graphs"] == r["graph_break_reasons"] == ""
    for r in compiled:
        assert (r["graph_breaks"], r["graphs"]) == ("2", "2")
        assert (r["steady_graph_breaks"], r["recompiles"]) == ("0", "0")
        assert sorted(schema.parse_break_reasons(r["graph_break_reasons"])) == [
            (1, "Failed to trace builtin operator: `print` (gb0059)"),
            (1, "Unsupported Tensor.item() call with capture_scalar_outputs=False (gb0124)")]


@pytest.mark.e2e
@needs_cxx
def test_an_injected_compile_failure_is_an_error_row_and_the_next_cell_runs(
        tmp_path: Path) -> None:
    profile = tmp_path / "c.toml"
    profile.write_text(_PROFILE.format(compile='["default", "off"]'))
    out = tmp_path / "run"
    proc = run_cli("run", "--profile", str(profile), "--out", str(out),
                   env={"TORCH_KNOBS_FAULT": "compile-error"})
    assert proc.returncode == 0, proc.stderr
    failed, eager = read_csv(out / "results.csv")
    assert failed["status"] == "error"
    assert "injected compile failure" in failed["reason"], failed["reason"]
    assert "\n" not in failed["reason"] and failed["cold_pass_s"] == ""
    assert eager["status"] == "ok" and eager["compile"] == "off"


@pytest.mark.e2e
@needs_cxx
def test_a_compile_past_the_timeout_is_a_timeout_row_and_the_next_cell_runs(
        tmp_path: Path) -> None:
    """Compiling the small model takes seconds on a CPU; a 3 s timeout stops it mid-compile."""
    profile = tmp_path / "c.toml"
    profile.write_text(_PROFILE.format(compile='["default", "off"]').replace(
        "timeout_s = 240", "timeout_s = 3"))
    out = tmp_path / "run"
    proc = run_cli("run", "--profile", str(profile), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    slow, eager = read_csv(out / "results.csv")
    assert (slow["compile"], slow["status"]) == ("default", "timeout"), slow["reason"]
    assert slow["cold_pass_s"] == "" and slow["compile_time_s"] == ""
    assert eager["status"] == "ok" and eager["compile"] == "off"


def _run_with_bin(tmp_path: Path, compile_values: str) -> list[dict[str, str]]:
    """A run of ``_PROFILE`` with ``tmp_path/bin`` first on PATH (its fake ``g++``); its rows."""
    profile = tmp_path / "c.toml"
    profile.write_text(_PROFILE.format(compile=compile_values))
    out = tmp_path / "run"
    proc = run_cli("run", "--profile", str(profile), "--out", str(out),
                   env={"PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "CXX": "g++"})
    assert proc.returncode == 0, proc.stderr
    return read_csv(out / "results.csv")


@pytest.mark.e2e
def test_a_failing_gxx_on_path_skips_the_compiled_cell_and_the_next_cell_runs(
        tmp_path: Path) -> None:
    """The audit's case: a g++ on PATH that always fails made an ``error`` row."""
    _script(tmp_path / "bin", "g++", "exit 1")
    compiled, eager = _run_with_bin(tmp_path, '["default", "off"]')
    assert compiled["status"] == "skipped", compiled["reason"]
    assert compiled["reason"] == ("no-cxx-compiler: torch.compile on the CPU needs a working "
                                  "C++ compiler; `g++ --version`: exit status 1")
    assert eager["status"] == "ok" and eager["compile"] == "off"


@pytest.mark.e2e
@needs_cxx
def test_inductor_finding_no_compiler_after_the_check_is_a_skipped_row(tmp_path: Path) -> None:
    """A compiler that answers the check's ``--version`` and then no more: Inductor's own
    search raises InvalidCxxCompiler at the first call, and the row is still ``skipped``."""
    answered = tmp_path / "answered"
    _script(tmp_path / "bin", "g++",
            f'if [ "$1" = --version ]; then [ -e {answered} ] && exit 1; : > {answered}; fi\n'
            f'exec {_real_cxx()} "$@"')
    (row,) = _run_with_bin(tmp_path, '["default"]')
    assert answered.exists()  # the check's --version was answered, Inductor's was not
    assert row["status"] == "skipped", row["reason"]
    assert row["reason"].startswith("no-cxx-compiler: Inductor found no working C++ compiler "
                                    "(InvalidCxxCompiler: No working C++ compiler found"), \
        row["reason"]
    assert "\n" not in row["reason"] and row["cold_pass_s"] == ""
