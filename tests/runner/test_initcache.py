"""A CPU model's initial weights are built once per run and loaded after that: the same
weights and the same synthetic inputs, bit for bit, without the random fills (real torch)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

from bench.run.child import initcache, workloads  # noqa: E402
from bench.run.matrix import Cell  # noqa: E402


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


def test_a_model_whose_state_dict_leaves_a_buffer_behind_is_built(tmp_path: Path,
                                                                  monkeypatch: Any) -> None:
    class Odd(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)
            self.register_buffer("index", torch.arange(3), persistent=False)

    monkeypatch.setattr(torchvision.models, "get_model", lambda name, weights=None: Odd())
    calls = []

    def build() -> Any:
        calls.append(1)
        return Odd()

    for _ in range(2):
        model = initcache.cached_build(torch, "odd", tmp_path, build)
        assert not model.index.is_meta
    assert calls == [1, 1], "its state cannot stand for it: built every time"
