"""A small user model for the advise and user-model tests: a factory in a plain file.

Its FLOPs are known (two convolutions and a linear layer), it runs in about a millisecond on
a CPU at 32x32, and it is written the way a user would write one: no torch-knobs imports.
"""

from __future__ import annotations

import os

import torch
from torch import nn


def build() -> nn.Module:
    """Two convolutions, global pooling, a 10-way classifier."""
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10),
    )


def fixed_size() -> nn.Module:
    """A classifier that only takes 3x64x64 images (its linear layer is sized for them)."""
    return nn.Sequential(nn.Conv2d(3, 4, 3, stride=2, padding=1), nn.Flatten(),
                         nn.Linear(4 * 32 * 32, 10))


def raises() -> nn.Module:
    raise ValueError("this factory is broken on purpose")


def not_a_module() -> int:
    return 42


def exits() -> nn.Module:
    """A factory that ends the process, as a script's ``main`` might."""
    raise SystemExit(3)


def exits_hard() -> nn.Module:
    """A factory that ends the process at once, with no exception to catch."""
    os._exit(1)


def interrupts() -> nn.Module:
    """A factory that raises KeyboardInterrupt itself (no signal came)."""
    raise KeyboardInterrupt


def raises_base() -> nn.Module:
    """A factory that raises an exception outside ``Exception``."""
    raise BaseException("not an Exception")


def mlp() -> nn.Module:
    """A model whose input is not an image: vectors of 20 features."""
    return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 1))


def vectors(batch_size: int, device: str) -> torch.Tensor:
    """The inputs of ``mlp``: a batch of 20-feature vectors."""
    return torch.randn(batch_size, 20, device=device)


def squared_error(output: torch.Tensor, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """A loss of the documented form ``loss(output, batch)``: a scalar tensor."""
    return (output ** 2).mean()


def per_sample_loss(output: torch.Tensor, batch: tuple[torch.Tensor, ...]) -> torch.Tensor:
    """Not a loss ``backward`` can start from: one value per sample."""
    return output ** 2


def too_big() -> nn.Module:
    """A model that does not fit in memory: four tebibytes of weights."""
    return nn.Linear(2**20, 2**20)


def no_flops() -> nn.Module:
    """A model FlopCounterMode counts nothing in (no matmul, no convolution)."""
    return nn.Sequential(nn.ReLU(), nn.Flatten(), nn.Softmax(dim=1))
