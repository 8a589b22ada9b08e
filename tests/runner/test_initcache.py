"""A CPU model's initial weights are built once per run and loaded after that: the same
weights and the same synthetic inputs, bit for bit, without the random fills (real torch)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

from bench.run.child import initcache, workloads  # noqa: E402
from bench.run.plan.matrix import Cell  # noqa: E402


def _same(a: Any, b: Any) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_the_second_build_loads_the_first_and_draws_the_same_inputs(tmp_path: Path) -> None:
    cell = Cell(model="resnet18", batch_size=2, resolution=32)
    builds = []

    def build() -> Any:
        builds.append(1)
        return torchvision.models.get_model("resnet18", weights=None)

    results = []
    for _ in range(2):
        torch.manual_seed(7)  # as every forked child starts: one random-number state
        model = initcache.cached_build(torch, "resnet18", tmp_path, build)
        inputs = workloads.make_inputs(torch, cell, cell.schedule())
        results.append((model, inputs))
    assert builds == [1], "the second replicate loads the first one's weights"
    (m1, x1), (m2, x2) = results
    assert _same(m1, m2)
    assert all(torch.equal(x1[k][0], x2[k][0]) for k in x1), "inputs drawn from the same state"


def test_without_a_folder_or_with_a_torn_file_it_builds_as_before(tmp_path: Path) -> None:
    built = initcache.cached_build(torch, "resnet18", None,
                                   lambda: torchvision.models.get_model("resnet18"))
    assert isinstance(built, torch.nn.Module)
    (tmp_path / "resnet18.pt").write_bytes(b"not a checkpoint")
    calls = []

    def build() -> Any:
        calls.append(1)
        return torchvision.models.get_model("resnet18", weights=None)

    initcache.cached_build(torch, "resnet18", tmp_path, build)
    assert calls == [1]


class Indexed(torch.nn.Module):
    """A model with a buffer its state dict does not hold (as some torchvision models have)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)
        self.register_buffer("index", torch.arange(3) * 5, persistent=False)


def test_the_whole_module_is_kept_with_the_buffers_its_state_dict_leaves_out(
        tmp_path: Path) -> None:
    calls = []

    def build() -> Any:
        calls.append(1)
        return Indexed()

    first = initcache.cached_build(torch, "indexed", tmp_path, build)
    again = initcache.cached_build(torch, "indexed", tmp_path, build)
    assert calls == [1], "loaded, not built again"
    assert torch.equal(again.index, first.index) and not again.index.is_meta
    assert _same(first, again) and again is not first
    # a file of another model's name is not taken for this one
    (tmp_path / "other.pt").write_bytes((tmp_path / "indexed.pt").read_bytes())
    initcache.cached_build(torch, "other", tmp_path, build)
    assert calls == [1, 1]


def test_a_model_that_does_not_pickle_is_built_by_every_replicate(tmp_path: Path) -> None:
    class Local(torch.nn.Module):  # a class defined in a function cannot be pickled
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)

    calls = []

    def build() -> Any:
        calls.append(1)
        return Local()

    for _ in range(2):
        initcache.cached_build(torch, "local", tmp_path, build)
    assert calls == [1, 1]
    assert list(tmp_path.iterdir()) == [], "no file, torn or whole, is left"
