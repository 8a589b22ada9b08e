"""User models for the numerics tests (``path/to/file.py:factory``): one that overflows in
fp16 on purpose, one that channels_last leaves exact."""

from __future__ import annotations

from torch import Tensor, nn


class Scale(nn.Module):
    """Multiplies its input by a constant: exact in fp32 at these sizes."""

    def __init__(self, k: float) -> None:
        super().__init__()
        self.k = k

    def forward(self, x: Tensor) -> Tensor:
        return x * self.k


def overflow() -> nn.Module:
    """Scales activations a hundred thousand times past fp16's largest value (65504) and back:
    fine in fp32, infinite in fp16 autocast, where the second layer runs in fp16."""
    return nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 16), Scale(1e5), nn.Linear(16, 10),
                         Scale(1e-5))


def layout_exact() -> nn.Module:
    """No reduction whose order a layout could change before the classifier: channels_last
    leaves its outputs bit for bit."""
    return nn.Sequential(nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(3 * 4 * 4, 10))
