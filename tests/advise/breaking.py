"""A user model whose ``forward`` breaks torch.compile's graph twice, as a new user's might:
a ``print`` and a branch on a tensor's value (``.item()``). torch reports both reasons and
compiles two graphs; the advise test reads them back from ``bench advise``."""

from __future__ import annotations

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                                  nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        print("batch of", x.shape[0])
        if x.sum().item() > 0:
            x = x * 2
        return self.body(x)


def build() -> nn.Module:
    return Net()
