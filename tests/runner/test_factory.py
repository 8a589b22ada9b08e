"""A user's model in the child, with real torch on the CPU: the probe's check, the workload a
measuring child builds from it, and every way the user's code can fail, each in one line."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from bench.run.child import factory, flags, workloads
from bench.run.plan.matrix import Cell
from bench.run.protocol import ModelCheck

from .conftest import ROOT

torch = pytest.importorskip("torch")

FILE = "tests/advise/model.py"


@pytest.fixture(autouse=True)
def _at_the_root(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(ROOT)
    path = list(sys.path)
    yield
    sys.path[:] = path  # a file model puts its folder first, as a script would


def _check(attr: str, **kw: str) -> ModelCheck:
    return ModelCheck(f"{FILE}:{attr}", **{"input_shape": "3,32,32", **kw})


def test_the_probe_builds_runs_and_counts_a_good_model() -> None:
    info = factory.check(torch, _check("build", mode="train"))
    assert info.error == ""
    digest = hashlib.sha1((ROOT / FILE).read_bytes()).hexdigest()[:10]
    assert info.source == digest and info.files == {FILE: digest}  # what sha1sum shows
    assert info.input_ndim == 4
    # conv 3->16 3x3 at 32x32, conv 16->32 3x3 stride 2 at 16x16, linear 32->10; 2 FLOPs a MAC
    expected = 2 * (16 * 3 * 9 * 32 * 32 + 32 * 16 * 9 * 16 * 16 + 32 * 10)
    assert info.flops_per_sample == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize(("attr", "kw", "message"), [
    ("raises", {}, "raises() raised ValueError: this factory is broken on purpose"),
    ("not_a_module", {}, "not_a_module() returned int, not a torch.nn.Module"),
    ("fixed_size", {}, "a forward pass on a batch of shape (2, 3, 32, 32) failed: RuntimeError: "
                       "mat1 and mat2 shapes cannot be multiplied"),
    ("nosuch", {}, f"{FILE} has no nosuch"),
    ("too_big", {}, "does not fit in memory on cpu: too_big() raised RuntimeError: "),
    ("mlp", {"mode": "train", "input_shape": "", "inputs": f"{FILE}:vectors",
             "loss": f"{FILE}:per_sample_loss"},
     f"{FILE}:per_sample_loss(output, batch) returned a (2, 1) tensor, not a scalar tensor"),
])
def test_each_failure_of_the_users_code_is_one_line(attr: str, kw: dict[str, str],
                                                    message: str) -> None:
    info = factory.check(torch, _check(attr, **kw))
    assert message in info.error and "\n" not in info.error
    assert info.flops_per_sample is None


def test_an_unimportable_file_or_module_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\ndef build(:\n")
    info = factory.check(torch, ModelCheck(f"{bad}:build", "3,8,8"))
    assert info.error.startswith(f"cannot import {bad}: SyntaxError") and "\n" not in info.error
    info = factory.check(torch, ModelCheck("no_such_package_xyz.models:build", "3,8,8"))
    assert info.error == ("cannot import no_such_package_xyz.models: ModuleNotFoundError: No "
                          "module named 'no_such_package_xyz'")


def test_an_importable_module_is_hashed_by_its_source_file(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    monkeypatch.chdir(ROOT / "tests" / "advise")
    monkeypatch.syspath_prepend(str(ROOT / "tests" / "advise"))
    info = factory.check(torch, ModelCheck("model:build", "3,16,16"))
    assert info.error == ""
    assert info.source == hashlib.sha1((ROOT / FILE).read_bytes()).hexdigest()[:10]


def test_a_model_without_parameters_cannot_be_trained() -> None:
    info = factory.check(torch, ModelCheck("torch.nn:Identity", "3,8,8", mode="train"))
    assert "without trainable parameters" in info.error
    assert factory.check(torch, ModelCheck("torch.nn:Identity", "3,8,8")).error == ""


@pytest.mark.parametrize("mode", ["infer", "train"])
def test_a_user_model_steps_like_a_torchvision_one(mode: str) -> None:
    cell = Cell(model=f"{FILE}:build", mode=mode, batch_size=2, resolution=32,
                input_shape="3,32,32", shapes="dynamic", shape_count=3,
                memory_format="channels_last")
    flags.apply(torch, cell)
    wl = workloads.build(torch, cell)
    assert sorted(set(wl.schedule)) == [(2, 16), (2, 32), (2, 48)]
    for i in range(len(wl.schedule)):
        wl.step(i)
    assert wl.outputs()["output"].shape == (2, 10)
    assert any(k.startswith("grad.") for k in wl.outputs()) == (mode == "train")
    flops, note = workloads.count_flops(torch, cell, wl)
    assert note == "" and flops is not None and flops > 0


def test_inputs_and_loss_callables_and_a_layout_that_does_not_apply() -> None:
    cell = Cell(model=f"{FILE}:mlp", mode="train", batch_size=4, resolution=0,
                inputs=f"{FILE}:vectors", loss=f"{FILE}:squared_error")
    wl = workloads.build(torch, cell)
    loss = wl.step(0)
    assert loss.dim() == 0 and wl.outputs()["output"].shape == (4, 1)
    with pytest.raises(factory.NotApplicable, match="channels_last needs a 4-D input"):
        workloads.build(torch, Cell(**{**cell.__dict__, "memory_format": "channels_last"}))


def test_the_default_loss_is_cross_entropy_on_logits_else_the_mean() -> None:
    loss = factory.default_loss(torch)
    logits = torch.zeros(4, 10)
    assert float(loss(logits, ())) == pytest.approx(float(torch.log(torch.tensor(10.0))))
    other = torch.ones(4, 3, 2)
    assert float(loss(other, ())) == 1.0


def test_a_source_edited_during_a_run_is_an_error_not_a_measurement() -> None:
    cell = Cell(model=f"{FILE}:build", input_shape="3,8,8", resolution=8,
                model_source="0000000000")
    with pytest.raises(factory.UserModelError, match="changed since the run started"):
        workloads.build(torch, cell)


def test_flops_that_cannot_be_counted_are_left_empty_with_a_reason() -> None:
    forward, note = factory.count_forward(torch, torch.nn.ReLU(), [(torch.ones(2, 3),)])
    assert forward is None and "counted no FLOPs" in note


@pytest.mark.parametrize(("attr", "status", "reason"), [
    ("raises", "error", "raises() raised ValueError: this factory is broken on purpose"),
    ("too_big", "oom", "too_big() raised RuntimeError"),
])
def test_a_measuring_child_records_the_users_failure_as_one_line(tmp_path: Path, attr: str,
                                                                 status: str, reason: str) -> None:
    from bench.run.child import worker
    from bench.run.plan.matrix import Settings
    from bench.run.protocol import new_task

    cell = Cell(model=f"{FILE}:{attr}", input_shape="3,8,8", resolution=8)
    record = worker.run_task(new_task("measure", cell, Settings(), 0, tmp_path))
    assert record.status == status and record.reason.startswith(reason)
    assert "\n" not in record.reason and record.samples == []


@pytest.mark.parametrize(("attr", "message"), [
    ("interrupts", "interrupts() raised KeyboardInterrupt"),
    ("raises_base", "raises_base() raised BaseException: not an Exception"),
])
def test_an_exception_outside_exception_is_the_users_error_in_a_child(
        monkeypatch: pytest.MonkeyPatch, attr: str, message: str) -> None:
    """A probe child runs with SIGINT and SIGTERM at their default actions: no signal can
    raise KeyboardInterrupt there, so one that comes is the factory's own."""
    import signal

    monkeypatch.setattr(signal, "getsignal", lambda s: signal.SIG_DFL)
    info = factory.check(torch, _check(attr))
    assert info.error == message


def test_a_keyboard_interrupt_goes_on_up_where_a_handler_could_have_raised_it() -> None:
    """Here (pytest) SIGINT has Python's handler: it may be a real Ctrl-C, never swallowed."""
    import signal

    assert callable(signal.getsignal(signal.SIGINT))
    with pytest.raises(KeyboardInterrupt):
        factory.check(torch, _check("interrupts"))


@pytest.mark.parametrize(("kw", "message"), [
    ({"inputs": f"{FILE}:nosuch", "input_shape": ""},
     f"inputs {FILE}:nosuch: {FILE} has no nosuch"),
    ({"loss": f"{FILE}:nosuch", "mode": "train"}, f"loss {FILE}:nosuch: {FILE} has no nosuch"),
    ({"inputs": "no_such_package_xyz:fn", "input_shape": ""},
     "inputs no_such_package_xyz:fn: cannot import no_such_package_xyz: ModuleNotFoundError"),
])
def test_an_inputs_or_loss_callable_that_cannot_be_had_is_named_not_the_model(
        kw: dict[str, str], message: str) -> None:
    info = factory.check(torch, _check("build", **kw))
    assert info.error.startswith(message)


def _package(tmp_path: Path, name: str) -> Path:
    """A user's package whose ``__init__`` re-exports the factory of a module beside it,
    which takes its width from a sibling module."""
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .real import build\n")
    (pkg / "real.py").write_text(f"from torch import nn\n\nfrom {name} import widths\n\n\n"
                                 "def build():\n    return nn.Linear(widths.IN, 2)\n")
    (pkg / "widths.py").write_text("IN = 20\n")
    return pkg


def test_the_identity_covers_the_users_modules_the_factory_imports(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Editing the module behind a package's ``__init__``, or a sibling it imports, is a new
    model_source; an installed module (torch) is not part of it."""
    name = f"userpkg_{tmp_path.name.replace('-', '_')}"
    pkg = _package(tmp_path, name)
    monkeypatch.syspath_prepend(str(tmp_path))
    check = ModelCheck(f"{name}:build", "", inputs=f"{FILE}:vectors")
    before = factory.check(torch, check)
    assert before.error == ""
    assert set(before.files) == {str(pkg / "__init__.py"), str(pkg / "real.py"),
                                 str(pkg / "widths.py"), FILE}
    for edited in ("widths.py", "real.py"):
        (pkg / edited).write_text((pkg / edited).read_text() + "# edited\n")
        now = factory.identity(factory.source_files((check.model, check.inputs)))
        assert now != before.source, edited
        before = replace(before, source=now)


def test_a_file_models_sibling_module_is_part_of_its_identity(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    sibling = f"helpers_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{sibling}.py").write_text("WIDTH = 8\n")
    (tmp_path / "net.py").write_text(f"from torch import nn\n\nfrom {sibling} import WIDTH\n\n\n"
                                     "def build():\n    return nn.Linear(WIDTH, 2)\n")
    monkeypatch.chdir(tmp_path)
    info = factory.check(torch, ModelCheck("net.py:build", "", inputs=f"{ROOT / FILE}:vectors"))
    assert str(tmp_path / f"{sibling}.py") in info.files
    (tmp_path / f"{sibling}.py").write_text("WIDTH = 20\n")
    assert factory.identity(factory.source_files(("net.py:build", f"{ROOT / FILE}:vectors"))) \
        != info.source


def test_an_ok_row_whose_flops_cannot_be_counted_says_why_in_its_reason(tmp_path: Path) -> None:
    from bench.run.child import worker
    from bench.run.plan.matrix import Settings
    from bench.run.protocol import new_task

    cell = Cell(model=f"{FILE}:no_flops", mode="infer", input_shape="3,8,8", resolution=8)
    record = worker.run_task(new_task("measure", cell, Settings(min_iters=2, min_time_s=0.0),
                                      0, tmp_path))
    assert record.status == "ok" and record.metrics.flops_per_sample is None
    assert "counted no FLOPs" in record.reason and record.reason in record.notes
