"""A user model that overflows in fp16, for the advise numerics test: a layer scales its
activations far past fp16's largest finite value (65504), as an unnormalised sum of a long
sequence or a large logit scale might. In fp32 (and in any layout) its outputs are ordinary
numbers; under fp16 autocast they are infinite, and advise must say they drift, with the
figure. Written the way a user would write one: no torch-knobs imports."""

from __future__ import annotations

import torch
from torch import nn


class Scale(nn.Module):
    """Multiplies its input by a constant too large for fp16."""

    def __init__(self, factor: float = 1e6) -> None:
        super().__init__()
        self.factor = factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.factor


def build() -> nn.Module:
    """Two convolutions, a scale past fp16's range, pooling and a 10-way classifier."""
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 16, 3, stride=2, padding=1), Scale(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10),
    )
